"""Fleet: pacing from 429s alone, four processes sharing one Redis, and what Redis costs.

The emulator sends no rate-limit headers (a 429 says only `retry-after`), so pacing can
learn only from 429s. Every process is a child (`python -m benchmarks.fleet worker ...`);
the fleet's children start together on a line from the parent, and its wall time runs
from the first one's start to the last one's end (one monotonic clock on Linux). Each child
has made one request on another model before (`load.warm_process`): the run measures a cold
pace, not a process's first call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from wink.testing.redis_server import RedisServer

from ._common import PYTHON, Row, emulator, interleave, row, run_json
from .load import warm_process

MODEL = "openai:gpt-4.1"


# --- child side


async def _worker(base_url: str, redis_url: str, namespace: str, count: int, conc: int) -> None:
    from wink import (
        MarkdownSection,
        Prompt,
        RedisLimiter,
        RetryPolicy,
        Session,
        WinkError,
        create_adapter,
    )

    hello = Prompt(name="hello", sections=[MarkdownSection(key="t", title="T", template="Hi")])
    limiter = None
    if redis_url != "-":
        limiter = RedisLimiter(redis_url, namespace=namespace)
        await limiter.check()  # connect before the start, as a running process has
    policy = RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=1.0)
    await warm_process(base_url, policy, limiter)  # past its first call, as a running process
    gate = asyncio.Semaphore(conc)
    ok = failed = 0
    # entered before the start: its SDK client is built, as a running process has it
    async with create_adapter(
        MODEL, base_url=base_url, api_key="test-key-0123", retry_policy=policy, limiter=limiter
    ) as adapter:

        async def one() -> None:
            nonlocal ok, failed
            async with gate:
                try:
                    await adapter.evaluate_async(hello, session=Session())
                    ok += 1
                except WinkError:
                    failed += 1

        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started = time.monotonic()
        await asyncio.gather(*(one() for _ in range(count)))
        ended = time.monotonic()
    print(json.dumps({"started": started, "ended": ended, "ok": ok, "failed": failed}))


async def _tool_loops(base_url: str, redis_url: str, loops: int, repeat: int) -> dict[str, Any]:
    """ms per tool loop, sequential, with the in-process limiter and with Redis's."""
    from wink import RedisLimiter, Session, create_adapter

    from . import raw

    limiter = RedisLimiter(redis_url, namespace=f"bench-{uuid.uuid4().hex[:8]}")
    adapters = {
        "in-process": create_adapter(MODEL, base_url=base_url, api_key="test-key-0123"),
        "redis": create_adapter(MODEL, base_url=base_url, api_key="test-key-0123", limiter=limiter),
    }

    async def batch(name: str, count: int) -> float:
        started = time.perf_counter()
        for _ in range(count):
            await adapters[name].evaluate_async(raw.PROMPT, session=Session())
        return (time.perf_counter() - started) * 1000 / count

    for name in adapters:  # warm: connections, imports, and each pacer's cold start
        await batch(name, 100)
    timings: dict[str, list[float]] = {name: [] for name in adapters}
    for index in range(repeat):
        for name in list(adapters)[index % 2 :] + list(adapters)[: index % 2]:
            timings[name].append(await batch(name, loops))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["worker", "loops"])
    parser.add_argument("args", nargs="*")
    args = parser.parse_args()
    if args.kind == "worker":
        base_url, redis_url, namespace, count, conc = args.args
        asyncio.run(_worker(base_url, redis_url, namespace, int(count), int(conc)))
    else:
        base_url, redis_url, loops, repeat = args.args
        print(json.dumps(asyncio.run(_tool_loops(base_url, redis_url, int(loops), int(repeat)))))


# --- parent side


def _fleet_run(
    base_url: str,
    redis_url: str,
    processes: int,
    each: int,
    conc: int,
    reset: Callable[[], None],
) -> dict[str, Any]:
    """One fleet run; `reset` refills the emulator's bucket and zeroes its counts once
    every child is ready (their warm-up requests are not the run's)."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"  # nothing learned by an earlier run
    command = [PYTHON, "-m", "benchmarks.fleet", "worker", base_url, redis_url, namespace]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    children = [
        subprocess.Popen(
            [*command, str(each), str(conc)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        for _ in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"a fleet worker did not start: {line!r}")
        reset()
        time.sleep(0.05)  # the bucket refills
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = [child.communicate(timeout=300)[0] for child in children]
        results = [json.loads(output.splitlines()[-1]) for output in outputs]
    finally:
        for child in children:
            child.kill()
    return {
        "wall": max(r["ended"] for r in results) - min(r["started"] for r in results),
        "ok": sum(r["ok"] for r in results),
        "failed": sum(r["failed"] for r in results),
    }


def fleet(
    requests: int, concurrency: int, rate: float, processes: int, loops: int, repeat: int
) -> list[Row]:
    ideal = requests / rate
    each = requests // processes
    runs: dict[str, list[dict[str, Any]]] = {"cold": [], "redis": [], "alone": []}
    with (
        RedisServer() as redis,
        emulator(
            "--shape", "text", "--rate", str(rate), "--burst", "1", "--no-rate-headers"
        ) as server,
    ):
        base_url = server.base_url("openai")

        def side(name: str) -> float:
            time.sleep(0.05)  # the bucket refills between sides
            if name == "cold":
                args = ["-m", "benchmarks.load", "throttled", "wink-cold", base_url]
                outcome: dict[str, Any] = run_json([*args, str(requests), str(concurrency)])
            else:
                url = redis.url if name == "redis" else "-"
                outcome = _fleet_run(base_url, url, processes, each, concurrency, server.reset)
            outcome["throttled"] = float(server.stats()["throttled"])  # type: ignore[arg-type]
            runs[name].append(outcome)
            return outcome["wall"]

        interleave(repeat, {name: (lambda name=name: side(name)) for name in runs})
    with RedisServer() as redis, emulator("--shape", "loop") as server:
        cost = run_json(
            [
                "-m",
                "benchmarks.fleet",
                "loops",
                server.base_url("openai"),
                redis.url,
                str(loops),
                str(3 * repeat),  # cheap, and noisier than the rest: more repetitions
            ]
        )
    ideals = [ideal] * repeat
    cold, shared, alone = runs["cold"], runs["redis"], runs["alone"]
    label = f"{rate:g} req/s, burst 1, no rate headers"
    fleet_label = f"{processes} processes x {each} requests, concurrency {concurrency} each"
    return [
        row(
            "fleet",
            f"one process, cold, {requests} requests, concurrency {concurrency}, {label}: "
            "wall time",
            "s",
            [r["wall"] for r in cold],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            target=1.2,
            note=f"succeeded: {_per_run(cold, 'ok')} of {requests}; "
            f"failed: {_per_run(cold, 'failed')}",
        ),
        row(
            "fleet",
            "one process, cold: 429s provoked",
            "429s",
            [r["throttled"] for r in cold],
            against=[15.0] * repeat,
            baseline="15 (the target)",
            target=1.0,
        ),
        row(
            "fleet",
            f"{fleet_label}, one Redis: wall time",
            "s",
            [r["wall"] for r in shared],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            target=1.25,
            note=f"succeeded: {_per_run(shared, 'ok')}; failed: {_per_run(shared, 'failed')}",
        ),
        row(
            "fleet",
            f"{fleet_label}, one Redis: 429s provoked",
            "429s",
            [r["throttled"] for r in shared],
            against=[r["throttled"] for r in alone],
            baseline="the same fleet without Redis",
            target=0.2,
        ),
        row(
            "fleet",
            f"{fleet_label}, no Redis (each process alone): wall time",
            "s",
            [r["wall"] for r in alone],
            against=ideals,
            baseline=f"ideal {ideal:g} s",
            note=f"succeeded: {_per_run(alone, 'ok')}; failed: {_per_run(alone, 'failed')}; "
            f"429s: {_per_run(alone, 'throttled')}",
        ),
        row(
            "fleet",
            "tool loop, async, no throttling: in-process limiter",
            "ms/loop",
            cost["in-process"],
        ),
        row(
            "fleet",
            "tool loop, async, no throttling: Redis limiter",
            "ms/loop",
            cost["redis"],
            against=cost["in-process"],
            baseline="in-process limiter",
            target=1.10,
        ),
    ]


def _per_run(runs: list[dict[str, Any]], key: str) -> str:
    return ", ".join(str(int(run[key])) for run in runs)


if __name__ == "__main__":
    main()
