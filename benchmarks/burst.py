"""A burst of streams nobody throttles: 200 opened at once in one process, each answer 20
text deltas 50 ms apart, no 429 anywhere. The raw OpenAI SDK's async streaming against
wink's `stream_async`: time to the first text delta (p50, p99) from the moment the burst
starts, the whole burst's wall time, and the process's peak RSS.

Each side runs in its own child (`python -m benchmarks.burst SIDE BASE_URL COUNT`), its
client built and one stream read before the clock starts, as a running process has.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

from ._common import Row, emulator, interleave, peak_mib, row, run_json

EVENTS, CHUNK, DELAY = 20, 8, 0.05
TARGET = 1.1


# --- child side


async def _burst(side: str, base_url: str, count: int) -> dict[str, Any]:
    from . import raw_stream

    if side == "wink":
        adapter = raw_stream.wink_adapter("openai", base_url)
        await adapter.__aenter__()

        async def one() -> raw_stream.Result:
            return await raw_stream.wink_async(adapter)
    else:
        client = raw_stream.sdk_client("openai", base_url, sync=False)

        async def one() -> raw_stream.Result:
            return await raw_stream.openai_async(client)

    expected = (await one())[1]  # warm: the client, the connection, lazy imports
    started = time.perf_counter()
    firsts: list[float] = []
    errors = 0

    async def timed() -> None:
        nonlocal errors
        began = time.perf_counter() - started
        try:
            first, text = await one()  # from the stream's own start
        except Exception:
            errors += 1
            return
        if text != expected:
            errors += 1
        firsts.append(began + first)  # from the burst's start

    await asyncio.gather(*(timed() for _ in range(count)))
    wall = time.perf_counter() - started
    firsts.sort()
    return {
        "wall": wall,
        "ttft_p50": statistics.median(firsts),
        "ttft_p99": firsts[round(0.99 * (len(firsts) - 1))],
        "errors": errors,
        "peak_rss_mib": peak_mib(),
    }


def main() -> None:
    side, base_url, count = sys.argv[1:4]
    print(json.dumps(asyncio.run(_burst(side, base_url, int(count)))))


# --- parent side


def burst(streams: int, repeat: int) -> list[Row]:
    runs: dict[str, list[dict[str, Any]]] = {"raw": [], "wink": []}
    shape = ("--shape", "stream", "--chunks", str(EVENTS), "--chunk-size", str(CHUNK))
    with emulator(*shape, "--chunk-delay", str(DELAY)) as server:
        base_url = server.base_url("openai")

        def side(name: str) -> float:
            outcome = run_json(["-m", "benchmarks.burst", name, base_url, str(streams)])
            runs[name].append(outcome)
            return outcome["wall"]

        interleave(repeat, {name: (lambda name=name: side(name)) for name in runs})
    label = f"{streams} streams at once, {EVENTS} text deltas {DELAY * 1000:g} ms apart"
    rows: list[Row] = []
    for key, figure, unit, target in (
        ("wall", "wall time", "s", TARGET),
        ("ttft_p50", "first text delta, p50", "s", None),
        ("ttft_p99", "first text delta, p99", "s", TARGET),
        ("peak_rss_mib", "peak RSS", "MiB", None),
    ):
        raw, wink = ([run[key] for run in runs[name]] for name in ("raw", "wink"))
        rows.append(row("burst", f"raw async SDK: {label}: {figure}", unit, raw))
        rows.append(
            row(
                "burst",
                f"wink stream_async: {figure}",
                unit,
                wink,
                against=raw,
                baseline="raw async SDK",
                target=target,
                note=f"errors: raw {_errors(runs['raw'])}, wink {_errors(runs['wink'])}"
                if key == "wall"
                else "",
            )
        )
    return rows


def _errors(runs: list[dict[str, Any]]) -> int:
    return sum(int(run["errors"]) for run in runs)


if __name__ == "__main__":
    main()
