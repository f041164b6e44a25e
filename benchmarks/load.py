"""Load: many concurrent loops, a rate-limited provider, and stray 429s.

Each side runs in its own child process (`python -m benchmarks.load SIDE ...`), so its
peak RSS is its own and no state (connection pools, pacing) carries over between sides.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import time
from typing import Any

from ._common import Row, emulator, interleave, row, run_json

IDEAL_THROTTLED_SECONDS = 3.0


# --- child side


PATIENT_POLICY = {"max_attempts": 100, "initial_delay": 0.01, "max_delay": 1.0}


async def _concurrency(side: str, base_url: str, loops: int, concurrency: int) -> dict[str, Any]:
    """`loops` tool loops, `concurrency` at a time, after as many to warm up. Sides:
    `wink` (the default `RetryPolicy`), `wink-patient` (`PATIENT_POLICY`), `raw<N>` (the
    raw async SDK with `max_retries=N`)."""
    import urllib.request

    from wink import RetryPolicy, Session, create_adapter

    from . import raw

    errors = 0
    gate = asyncio.Semaphore(concurrency)
    if side.startswith("wink"):
        policy = RetryPolicy(**PATIENT_POLICY) if side == "wink-patient" else RetryPolicy()
        adapter = create_adapter(
            "openai:gpt-4.1", base_url=base_url, api_key="test-key-0123", retry_policy=policy
        )

        async def one() -> Any:
            return await adapter.evaluate_async(raw.PROMPT, session=Session())
    else:
        client = raw.sdk_client("openai", base_url, sync=False, max_retries=int(side[3:]))

        async def one() -> Any:
            return await raw.openai_async(client)

    async def guarded() -> None:
        nonlocal errors
        async with gate:
            try:
                await one()
            except Exception:
                errors += 1

    await asyncio.gather(*(guarded() for _ in range(min(concurrency, loops))))  # warm
    reset = urllib.request.Request(f"{base_url.removesuffix('/v1')}/__reset", method="POST")
    await asyncio.to_thread(lambda: urllib.request.urlopen(reset).close())
    errors = 0
    started = time.perf_counter()
    await asyncio.gather(*(guarded() for _ in range(loops)))
    wall = time.perf_counter() - started
    return {"wall": wall, "errors": errors}


WARM_MODEL = "openai:gpt-4.1-mini"  # another key: its own pacer, its own Redis key


async def warm_process(base_url: str, policy: Any, limiter: Any = None) -> None:
    """One request on another model (`WARM_MODEL`), so the first call's one-off costs
    (lazy imports, models built on first use) are paid before the clock starts, as in a
    running process, while the measured model's pacer stays cold. The caller resets the
    emulator after it: the bucket and the counts start fresh."""
    from wink import MarkdownSection, Prompt, Session, create_adapter

    hello = Prompt(name="warm", sections=[MarkdownSection(key="t", title="T", template="Hi")])
    async with create_adapter(
        WARM_MODEL, base_url=base_url, api_key="test-key-0123", retry_policy=policy, limiter=limiter
    ) as adapter:
        await adapter.evaluate_async(hello, session=Session())


async def _throttled(side: str, base_url: str, requests: int, concurrency: int) -> dict[str, Any]:
    import urllib.request

    from wink import MarkdownSection, Prompt, RetryPolicy, Session, WinkError, create_adapter

    from . import raw

    hello = Prompt(name="hello", sections=[MarkdownSection(key="t", title="T", template="Hi")])
    ok = failed = 0
    gate = asyncio.Semaphore(concurrency)
    opened = contextlib.AsyncExitStack()
    if side.startswith("wink"):
        policy = RetryPolicy(**PATIENT_POLICY)
        adapter = await opened.enter_async_context(  # its client is built now, as the SDK's is
            create_adapter(
                "openai:gpt-4.1", base_url=base_url, api_key="test-key-0123", retry_policy=policy
            )
        )

        async def one() -> None:
            await adapter.evaluate_async(hello, session=Session())

        failure: type[Exception] = WinkError
    else:
        import openai

        client = raw.sdk_client("openai", base_url, sync=False, max_retries=int(side[3:]))

        async def one() -> None:
            await client.chat.completions.create(
                model="gpt-4.1", messages=[{"role": "user", "content": "Hi"}]
            )

        failure = openai.OpenAIError

    async def guarded() -> None:
        nonlocal ok, failed
        async with gate:
            try:
                await one()
                ok += 1
            except failure:
                failed += 1

    if side != "wink-cold":  # warm: the connection, lazy imports, the provider's headers
        await guarded()
        await asyncio.sleep(0.05)  # let the bucket refill
    else:  # a cold pacer, in a process past its first call
        await warm_process(base_url, RetryPolicy(**PATIENT_POLICY))
    reset = urllib.request.Request(f"{base_url.removesuffix('/v1')}/__reset", method="POST")
    await asyncio.to_thread(lambda: urllib.request.urlopen(reset).close())
    ok = failed = 0
    started = time.perf_counter()
    await asyncio.gather(*(guarded() for _ in range(requests)))
    wall = time.perf_counter() - started
    await opened.aclose()
    return {"wall": wall, "ok": ok, "failed": failed}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["concurrency", "throttled"])
    parser.add_argument("side")  # wink | raw<max_retries>
    parser.add_argument("base_url")
    parser.add_argument("count", type=int)
    parser.add_argument("concurrency", type=int)
    args = parser.parse_args()
    work = _concurrency if args.kind == "concurrency" else _throttled
    result = asyncio.run(work(args.side, args.base_url, args.count, args.concurrency))
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


# --- parent side


def concurrency(loops: int, concurrency: int, repeat: int) -> list[Row]:
    results: dict[str, list[dict[str, Any]]] = {"raw0": [], "wink": []}
    with emulator("--shape", "loop", "--latency", "0.02") as server:
        base_url = server.base_url("openai")

        def side(name: str) -> float:
            outcome = run_json(
                [
                    "-m",
                    "benchmarks.load",
                    "concurrency",
                    name,
                    base_url,
                    str(loops),
                    str(concurrency),
                ]
            )
            results[name].append(outcome)
            return outcome["wall"]

        walls = interleave(repeat, {"raw0": lambda: side("raw0"), "wink": lambda: side("wink")})
    label = f"{loops} loops, concurrency {concurrency}, 20 ms latency"
    rows = [
        row("concurrency", f"raw async SDK: {label}", "s", walls["raw0"]),
        row(
            "concurrency",
            f"wink async: {label}",
            "s",
            walls["wink"],
            against=walls["raw0"],
            baseline="raw async SDK",
            target=1.05,
            note=f"errors: raw {sum(r['errors'] for r in results['raw0'])}, "
            f"wink {sum(r['errors'] for r in results['wink'])}",
        ),
    ]
    rss = {name: [r["peak_rss_mib"] for r in runs] for name, runs in results.items()}
    rows.append(row("concurrency", "raw async SDK: peak RSS", "MiB", rss["raw0"]))
    rows.append(
        row(
            "concurrency",
            "wink async: peak RSS",
            "MiB",
            rss["wink"],
            against=rss["raw0"],
            baseline="raw async SDK",
        )
    )
    return rows


def throttling(requests: int, concurrency: int, rate: float, repeat: int) -> list[Row]:
    ideal = requests / rate
    runs: dict[str, list[dict[str, Any]]] = {"wink": [], "wink-cold": [], "raw10": [], "raw2": []}
    with emulator("--shape", "text", "--rate", str(rate), "--burst", "1") as server:
        base_url = server.base_url("openai")

        def side(name: str) -> float:
            time.sleep(0.05)  # the bucket refills between sides
            outcome = run_json(
                [
                    "-m",
                    "benchmarks.load",
                    "throttled",
                    name,
                    base_url,
                    str(requests),
                    str(concurrency),
                ]
            )
            stats = server.stats()
            outcome["throttled"] = float(stats["throttled"])  # type: ignore[arg-type]
            runs[name].append(outcome)
            return outcome["wall"]

        interleave(repeat, {name: (lambda name=name: side(name)) for name in runs})
    label = f"{requests} requests, concurrency {concurrency}, {rate:g} req/s, burst 1"
    wink, raw10, raw2 = runs["wink"], runs["raw10"], runs["raw2"]
    ideals = [ideal] * repeat
    return [
        row(
            "throttling",
            f"wink wall time: {label}",
            "s",
            [r["wall"] for r in wink],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            target=1.15,
            note=f"succeeded: {_per_run(wink, 'ok')} of {requests}",
        ),
        row(
            "throttling",
            "wink from a cold start (no request to the model before the 300): wall time",
            "s",
            [r["wall"] for r in runs["wink-cold"]],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            note=f"succeeded: {_per_run(runs['wink-cold'], 'ok')}; "
            f"429s: {_per_run(runs['wink-cold'], 'throttled')}",
        ),
        row(
            "throttling",
            "wink: 429s provoked",
            "429s",
            [r["throttled"] for r in wink],
            against=[r["throttled"] for r in raw10],
            baseline="raw SDK, max_retries=10",
            target=0.25,
        ),
        row(
            "throttling",
            "raw SDK, max_retries=10: wall time",
            "s",
            [r["wall"] for r in raw10],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            note=f"succeeded: {_per_run(raw10, 'ok')} of {requests}",
        ),
        row(
            "throttling",
            "raw SDK, max_retries=10: 429s provoked",
            "429s",
            [r["throttled"] for r in raw10],
        ),
        row(
            "throttling",
            "raw SDK, default max_retries=2: wall time",
            "s",
            [r["wall"] for r in raw2],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            note=f"succeeded: {_per_run(raw2, 'ok')} of {requests}",
        ),
    ]


def stray_429s(
    loops: int, concurrency: int, share: float, retry_after: float, repeat: int
) -> list[Row]:
    """Tool loops against a provider with no rate limit that refuses `share` of the
    requests at random with a 429 asking `retry_after`: wink should hold for each, and
    never slow down for them. Against the same run without the 429s, and the raw SDK."""
    runs: dict[str, list[dict[str, Any]]] = {
        name: [] for name in ("wink clean", "wink stray", "raw clean", "raw stray")
    }
    stray = ("--stray-429", str(share), "--stray-retry-after", str(retry_after))
    with emulator("--shape", "loop") as clean, emulator("--shape", "loop", *stray) as refusing:
        servers = {"clean": clean, "stray": refusing}

        def side(name: str) -> float:
            who, which = name.split()
            server = servers[which]
            child = "wink-patient" if who == "wink" else "raw2"
            args = [child, server.base_url("openai"), str(loops), str(concurrency)]
            outcome = run_json(["-m", "benchmarks.load", "concurrency", *args])
            answered: dict[str, int] = server.stats()["responses"]  # type: ignore[assignment]
            outcome["throttled"] = float(answered.get("429", 0))
            runs[name].append(outcome)
            return outcome["wall"]

        walls = interleave(repeat, {name: (lambda name=name: side(name)) for name in runs})
    label = f"{loops} tool loops, concurrency {concurrency}"
    stray_label = f"{share:.0%} of requests refused at random, retry-after {retry_after:g} s"

    def note(name: str) -> str:
        errors = _per_run(runs[name], "errors")
        return f"429s: {_per_run(runs[name], 'throttled')}; failed: {errors}"

    return [
        row(
            "stray 429s", f"raw async SDK, max_retries=2: {label}, no 429s", "s", walls["raw clean"]
        ),
        row(
            "stray 429s",
            f"raw async SDK, max_retries=2: {stray_label}",
            "s",
            walls["raw stray"],
            against=walls["raw clean"],
            baseline="the same without the 429s",
            note=note("raw stray"),
        ),
        row(
            "stray 429s",
            f"wink async: {label}, no 429s",
            "s",
            walls["wink clean"],
            against=walls["raw clean"],
            baseline="raw async SDK, no 429s",
        ),
        row(
            "stray 429s",
            f"wink async: {stray_label}",
            "s",
            walls["wink stray"],
            against=walls["wink clean"],
            baseline="the same without the 429s",
            target=2.0,
            note=note("wink stray"),
        ),
    ]


def _per_run(runs: list[dict[str, Any]], key: str) -> str:
    return ", ".join(str(int(run[key])) for run in runs)


if __name__ == "__main__":
    main()
