"""Streaming: wink's streams against each raw SDK streaming by hand (and pydantic-ai).

Three figures per provider, all over the emulator at 0 ms latency, in its own process:

* time to the first text delta (a 20-event answer), sync and async;
* a 2,000-event answer, total time, sync and async; and the cost per event above a plain
  httpx2 read of the same bytes (`floor`), in µs;
* the peak RSS of a process that streams a 20 MB answer (1 kB per event), sync.

Variants of one figure are measured interleaved, repetition by repetition; the ratio
is the median of the per-repetition ratios.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from . import raw_stream
from ._common import Row, emulator, interleave, row, run_json

PROVIDERS = ("openai", "openai-responses", "anthropic", "google")
FIRST_EVENTS, LONG_EVENTS, CHUNK = 20, 2000, 8
BIG_EVENTS, BIG_CHUNK = 20_000, 1000  # 20 MB
TTFT_TARGET, TOTAL_TARGET, MEMORY_TARGET = 1.05, 1.0, 2.0


def streaming(repeat: int, batch: int, long_batch: int, big_events: int = BIG_EVENTS) -> list[Row]:
    runner = asyncio.Runner()
    try:
        rows = _timed(runner, repeat, batch, FIRST_EVENTS, first=True)
        rows += _timed(runner, repeat, long_batch, LONG_EVENTS, first=False)
    finally:
        runner.close()
    return rows + _memory(big_events)


def _timed(
    runner: asyncio.Runner, repeat: int, batch: int, events: int, *, first: bool
) -> list[Row]:
    """Time to the first delta (`first`) or the whole stream, per provider and mode."""
    rows: list[Row] = []
    scenario = "stream: first text delta" if first else f"stream: {events:,} events"
    unit = "µs" if first else "ms"
    scale = 1e6 if first else 1e3
    with emulator("--shape", "stream", "--chunks", str(events), "--chunk-size", str(CHUNK)) as srv:
        for provider in PROVIDERS:
            base = srv.base_url(provider)
            sync_client = raw_stream.sdk_client(provider, base, sync=True)
            async_client = runner.run(_async(raw_stream.sdk_client, provider, base, sync=False))
            adapter = raw_stream.wink_adapter(provider, base)
            agent = runner.run(_async(raw_stream.pydantic_ai_agent, provider, base))
            expected = raw_stream.RAW_SYNC[provider](sync_client)[1]
            calls: dict[str, Callable[[], raw_stream.Result]] = {
                "sync raw": lambda c=sync_client, p=provider: raw_stream.RAW_SYNC[p](c),
                "sync wink": lambda a=adapter: raw_stream.wink_sync(a),
                "async raw": lambda c=async_client, p=provider: runner.run(
                    raw_stream.RAW_ASYNC[p](c)
                ),
                "async wink": lambda a=adapter: runner.run(raw_stream.wink_async(a)),
            }
            if agent is not None:
                calls["async pydantic-ai"] = lambda g=agent: runner.run(
                    raw_stream.pydantic_ai_async(g)
                )
            if not first:
                calls["floor"] = _floor(provider, base)
            for name, call in calls.items():  # warm, and the same answer everywhere
                for _ in range(3):
                    text = call()[1]
                assert name == "floor" or text == expected, (provider, name)
            timings = interleave(
                repeat, {name: _batch(call, batch, first, scale) for name, call in calls.items()}
            )
            rows += _rows(scenario, provider, unit, timings, first, events)
            adapter.close()
            runner.run(adapter.aclose())
            sync_client.close()
            runner.run(_close(async_client))
    return rows


def _rows(
    scenario: str,
    provider: str,
    unit: str,
    timings: dict[str, list[float]],
    first: bool,
    events: int,
) -> list[Row]:
    target = TTFT_TARGET if first else TOTAL_TARGET
    rows: list[Row] = []
    for mode in ("sync", "async"):
        base = timings[f"{mode} raw"]
        rows.append(row(scenario, f"{provider} {mode}: raw SDK", unit, base))
        rows.append(
            row(
                scenario,
                f"{provider} {mode}: wink",
                unit,
                timings[f"{mode} wink"],
                against=base,
                baseline=f"raw {provider} SDK, {mode}",
                target=target,
            )
        )
        if f"{mode} pydantic-ai" in timings:
            rows.append(
                row(
                    scenario,
                    f"{provider} {mode}: pydantic-ai",
                    unit,
                    timings[f"{mode} pydantic-ai"],
                    against=base,
                    baseline=f"raw {provider} SDK, {mode}",
                )
            )
    if first:
        return rows
    floor = timings["floor"]
    for name in ("sync raw", "sync wink", "async raw", "async wink", "async pydantic-ai"):
        if name in timings:
            per_event = [(t - f) * 1000 / events for t, f in zip(timings[name], floor, strict=True)]
            label = name.replace("raw", "raw SDK")
            rows.append(
                row(
                    "stream: cost per event",
                    f"{provider} {label}",
                    "µs/event",
                    per_event,
                    note="above a plain httpx2 read of the same body",
                )
            )
    return rows


def _batch(
    call: Callable[[], raw_stream.Result], size: int, first: bool, scale: float
) -> Callable[[], float]:
    """One measurement: the median over `size` streams of the first-delta time or the
    whole-stream time."""

    def measure() -> float:
        values: list[float] = []
        for _ in range(size):
            started = time.perf_counter()
            to_first, _ = call()
            values.append(to_first if first else time.perf_counter() - started)
        return statistics.median(values) * scale

    return measure


def _floor(provider: str, base_url: str) -> Callable[[], raw_stream.Result]:
    """A plain httpx2 read of the same streamed body: what any client must pay."""
    paths = {
        "openai": ("/chat/completions", {"model": "m", "messages": raw_stream.MESSAGES}),
        "openai-responses": ("/responses", {"model": "m", "input": raw_stream.MESSAGES}),
        "anthropic": (
            "/v1/messages",
            {"model": "m", "max_tokens": 1, "messages": raw_stream.MESSAGES},
        ),
        "google": (
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            {"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
        ),
    }
    path, body = paths[provider]
    if provider != "google":
        body = {**body, "stream": True}
    client = httpx2.Client(base_url=base_url, headers={"x-goog-api-key": "k", "x-api-key": "k"})

    def read() -> raw_stream.Result:
        with client.stream("POST", path, json=body) as response:
            size = sum(len(piece) for piece in response.iter_bytes())
        return 0.0, str(size)

    return read


def _memory(events: int) -> list[Row]:
    """Peak RSS of a process streaming a big answer, each variant in a fresh process."""
    rows: list[Row] = []
    megabytes = events * BIG_CHUNK / 1e6
    scenario = f"stream: peak RSS, {megabytes:g} MB answer"
    with emulator(
        "--shape", "stream", "--chunks", str(events), "--chunk-size", str(BIG_CHUNK)
    ) as srv:
        for provider in PROVIDERS:
            base = srv.base_url(provider)
            found = {
                variant: run_json(["-m", "benchmarks._stream_child", provider, variant, base])
                for variant in ("raw", "wink", "pydantic-ai")
            }
            raw_peak = found["raw"]["peak_mib"]
            rows.append(row(scenario, f"{provider} sync: raw SDK", "MiB", [raw_peak]))
            for variant in ("wink", "pydantic-ai"):
                peak = found[variant].get("peak_mib")
                if peak is None:
                    continue
                assert found[variant]["chars"] == found["raw"]["chars"] == events * BIG_CHUNK
                mode = "sync" if variant == "wink" else "async"
                rows.append(
                    row(
                        scenario,
                        f"{provider} {mode}: {variant}",
                        "MiB",
                        [peak],
                        against=[raw_peak],
                        baseline=f"raw {provider} SDK, sync",
                        target=MEMORY_TARGET if variant == "wink" else None,
                        note=f"{found[variant]['baseline_mib']:.0f} MiB before the stream",
                    )
                )
    return rows


async def _async(make: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Build a client on the runner's loop (its connections belong to that loop)."""
    return make(*args, **kwargs)


async def _close(client: Any) -> None:
    if hasattr(client, "aio"):
        await client.aio.aclose()
        client.close()
        return
    outcome = client.close()
    if isinstance(outcome, Awaitable):
        await outcome
