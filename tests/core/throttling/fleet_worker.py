"""One process of a fleet: `python fleet_worker.py BASE_URL REDIS_URL|- NAMESPACE COUNT CONC
RETRY_EVERY REDIS_TIMEOUT`.

Runs COUNT evaluations, CONC at a time, against an OpenAI-shaped emulator, with a
RedisLimiter (or the default in-process limiter for `-`); with COUNT 0, CONC at a time
until a second line on stdin says stop. It waits for a line on stdin before starting, so
that a test can start the whole fleet at once. Each warning of the limiter is printed as
it is logged (`warning: ...`), and at the end one JSON object: evaluations ok and failed,
the limiter's warnings, and whether Redis answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys

from wink import (
    MarkdownSection,
    Prompt,
    RedisLimiter,
    RetryPolicy,
    Session,
    WinkError,
    create_adapter,
)

HELLO = Prompt(name="hello", sections=[MarkdownSection(key="t", title="T", template="Hi")])


class Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.messages.append(message)
        print(f"warning: {message}", flush=True)  # a test may be waiting for it


async def main(
    base_url: str,
    redis_url: str,
    namespace: str,
    count: int,
    conc: int,
    retry_every: float,
    redis_timeout: float,
) -> None:
    warnings = Count()
    logging.getLogger("wink.limiter").addHandler(warnings)
    limiter = (
        RedisLimiter(redis_url, namespace=namespace, retry_every=retry_every, timeout=redis_timeout)
        if redis_url != "-"
        else None
    )
    adapter = create_adapter(
        "openai:gpt-4.1",
        base_url=base_url,
        api_key="test-key",
        limiter=limiter,
        retry_policy=RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=1.0),
    )
    ok = failed = 0

    async def one() -> None:
        nonlocal ok, failed
        try:
            await adapter.evaluate_async(HELLO, session=Session())
            ok += 1
        except WinkError:
            failed += 1

    async def until(stop: asyncio.Event) -> None:
        while not stop.is_set():
            await one()

    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    if count:
        gate = asyncio.Semaphore(conc)

        async def gated() -> None:
            async with gate:
                await one()

        await asyncio.gather(*(gated() for _ in range(count)))
    else:
        stop = asyncio.Event()
        running = [asyncio.create_task(until(stop)) for _ in range(conc)]
        await asyncio.to_thread(sys.stdin.readline)
        stop.set()
        await asyncio.gather(*running)
    await adapter.aclose()
    result = {
        "ok": ok,
        "failed": failed,
        "warnings": warnings.messages,
        "redis": limiter.available if limiter is not None else None,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    base_url, redis_url, namespace, count, conc, retry_every, redis_timeout = sys.argv[1:8]
    asyncio.run(
        main(
            base_url,
            redis_url,
            namespace,
            int(count),
            int(conc),
            float(retry_every),
            float(redis_timeout),
        )
    )
