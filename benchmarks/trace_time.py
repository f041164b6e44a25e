"""Where the time of one evaluation goes: `stream_async` (or `evaluate`) with one tool call
on Anthropic against the benchmarks' emulator (a child process, the loops scenario's),
profiled (cProfile) and summed by where each function lives: wink's layers
(docs/architecture.md), the SDK and its HTTP stack, the event loop, and the waits.

`python -m benchmarks.trace_time [stream_async|evaluate] [LOOPS]` prints, per loop, the
wall time without the profiler, then the profiled time by place. Only public names of
wink are used, so the same file measures an older checkout (`PYTHONPATH=<its src>`):
docs/performance.md has both. The thread the evaluation runs on is the one profiled (the
portal's, for `evaluate`, when there is one); the emulator's threads and the tool's
worker thread are not, and show as waits.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from typing import Any

from wink import Session, create_adapter

from . import raw
from ._common import emulator

# The first match wins: the most specific place first.
_PLACES = (
    ("/wink/core/agent/", "wink: agent (the loop)"),
    ("/wink/core/transport/", "wink: transport"),
    ("/wink/core/throttling/", "wink: throttling"),
    ("/wink/core/telemetry/", "wink: telemetry"),
    ("/wink/core/", "wink: foundation, prompting"),
    ("/wink/providers/", "wink: providers (wire)"),
    ("/wink/adapters/", "wink: adapters"),
    ("/wink/testing/", "emulator (in-process)"),
    ("/wink/", "wink: entry points"),
    ("/anthropic/", "anthropic SDK"),
    ("/httpx2/", "httpx2, httpcore2, h11"),
    ("/httpcore2/", "httpx2, httpcore2, h11"),
    ("/httpx/", "httpx2, httpcore2, h11"),
    ("/httpcore/", "httpx2, httpcore2, h11"),
    ("/h11/", "httpx2, httpcore2, h11"),
    ("/asyncio/", "asyncio"),
    ("/concurrent/", "threads (futures, queues)"),
    ("threading.py", "threads (futures, queues)"),
    ("queue.py", "threads (futures, queues)"),
    ("/anyio/", "httpx2, httpcore2, h11"),
    ("/sniffio/", "httpx2, httpcore2, h11"),
    ("/pydantic", "pydantic"),
)
_BUILTINS = {
    "'poll'": "waiting: the socket, or the tool's thread",
    "'select'": "waiting: the socket, or the tool's thread",
    "'send'": "socket calls",
    "'recv": "socket calls",
    "'release'": "thread handoffs (a lock released, a queue put: waking a thread)",
    "'acquire'": "thread handoffs (a lock released, a queue put: waking a thread)",
    "'put'": "thread handoffs (a lock released, a queue put: waking a thread)",
}


def _place(filename: str, function: str) -> str:
    if filename == "~":  # a builtin: a wait, or C code called from somewhere
        for word, place in _BUILTINS.items():
            if word in function:
                return place
        return "other builtins (json, re, isinstance)"
    return next((place for part, place in _PLACES if part in filename), "other Python")


def _by_place(profile: cProfile.Profile, loops: int) -> dict[str, float]:
    stats: Any = pstats.Stats(profile).stats  # (file, line, name) -> (cc, nc, tottime, ...)
    places: dict[str, float] = {}
    for (filename, _, function), (_, _, own, _, _) in stats.items():
        place = _place(filename, function)
        places[place] = places.get(place, 0.0) + own * 1000 / loops
    return places


def _portal_loop() -> Any:
    """The portal's event loop, when this wink has one (None before the portal)."""
    try:
        from wink.core.foundation.runtime import portal
    except ImportError:
        return None
    return portal().loop


def measure(mode: str, loops: int) -> tuple[float, dict[str, float]]:
    """(median wall ms per loop unprofiled, profiled ms per loop by place)."""
    profile = cProfile.Profile()
    with emulator("--shape", "loop") as server:
        adapter = create_adapter(
            f"anthropic:{raw.MODELS['anthropic']}",
            base_url=server.base_url("anthropic"),
            api_key="test-key-0123456789",
        )
        prompt = raw.PROMPT
        if mode == "stream_async":
            runner = asyncio.Runner()

            async def one() -> None:
                async with adapter.stream_async(prompt, session=Session()) as stream:
                    async for _ in stream:
                        pass

            def run() -> None:
                runner.run(one())

            def profiled(count: int) -> None:
                async def batch() -> None:
                    profile.enable()
                    for _ in range(count):
                        await one()
                    profile.disable()

                runner.run(batch())
        else:

            def run() -> None:
                adapter.evaluate(prompt, session=Session())

            def profiled(count: int) -> None:
                target = _portal_loop()
                if target is not None:  # the portal: profile its thread
                    target.call_soon_threadsafe(profile.enable)
                else:
                    profile.enable()
                for _ in range(count):
                    run()
                if target is not None:
                    done = asyncio.run_coroutine_threadsafe(_disable(profile), target)
                    done.result()
                else:
                    profile.disable()

        for _ in range(10):  # warm: connections, lazy imports, first-call caches
            run()
        walls: list[float] = []
        for _ in range(loops):
            started = time.perf_counter()
            run()
            walls.append((time.perf_counter() - started) * 1000)
        profiled(loops)
        adapter.close()
        if mode == "stream_async":
            runner.run(adapter.aclose())
            runner.close()
    return statistics.median(walls), _by_place(profile, loops)


async def _disable(profile: cProfile.Profile) -> None:
    profile.disable()


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "stream_async"
    loops = int(argv[1]) if len(argv) > 1 else 200
    wall, places = measure(mode, loops)
    print(f"{mode}, one tool call, Anthropic: {wall:.2f} ms per loop (median, unprofiled)")
    own = sum(ms for place, ms in places.items() if place.startswith("wink:"))
    print(f"profiled, ms per loop ({sum(places.values()):.2f} in all, wink's own {own:.2f}):")
    for place, ms in sorted(places.items(), key=lambda item: -item[1]):
        if ms >= 0.005:
            print(f"  {ms:7.3f}  {place}")


if __name__ == "__main__":
    main(sys.argv[1:])
