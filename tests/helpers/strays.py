"""A 429 and its neighbours on the emulator: some evaluations are refused, then others
start, and the emulator's record says who went before whom. Shared by the in-process
(tests/core/throttling/test_stray_429s.py) and the Redis (test_stray_429s_redis.py)
tests of the same rule."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from wink import Limiter, MarkdownSection, Prompt, RetryPolicy, Session, create_adapter
from wink.testing import Fault, ProviderEmulator, Turn

RETRY_AFTER = 0.5  # what each 429 asks for: long next to a request on the emulator
PATIENT = RetryPolicy(max_attempts=5, initial_delay=0.01, max_delay=0.05)

# OpenAI's 429 when its capacity runs short: no rate-limit header, no limit named.
OVERLOADED = Fault.http(
    429,
    {
        "error": {
            "message": "That model is currently overloaded with other requests. You can "
            "retry your request, or contact us through our help center at help.openai.com "
            "if the error persists.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    },
    {"retry-after": str(RETRY_AFTER)},
)
# The account's own limit: headers at 0 remaining and a body naming it.
LIMIT = Fault.rate_limit(retry_after=RETRY_AFTER)


def prompt(name: str) -> Prompt[Any]:
    return Prompt(name=name, sections=[MarkdownSection(key="t", title="T", template=name)])


@dataclass(frozen=True)
class Arrivals:
    """When the emulator received each request (its own clock, `time.time()`)."""

    refused: list[float]  # the refused evaluations' first requests
    retries: list[float]  # their second attempts
    neighbours: list[float]  # the evaluations run, one after another, once every 429
    # had been handled: held, the first waits out the window, and the refused requests'
    # retries go along with it; not held, they all go before those retries


class _Retrying(logging.Handler):
    """Counts the retry policy's "retrying in" lines: each comes after the runner told the
    pacer of the 429, before the retry's wait."""

    def __init__(self, loop: asyncio.AbstractEventLoop, expected: int) -> None:
        super().__init__(logging.DEBUG)
        self.loop, self.expected, self.seen = loop, expected, 0
        self.all_seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("retrying in"):
            self.seen += 1
            if self.seen == self.expected:
                self.loop.call_soon_threadsafe(self.all_seen.set)


async def neighbours_of(
    fault: Fault, *, refused: int = 1, neighbours: int = 5, limiter: Limiter | None = None
) -> Arrivals:
    """Warm an adapter up (8 answers: its cold start lets everyone out at once), then
    start `refused` evaluations that the emulator answers with `fault`, wait until each
    429 is handled, and run `neighbours` more, one after another."""
    logger = logging.getLogger("wink.throttle")
    watch = _Retrying(asyncio.get_running_loop(), refused)
    level = logger.level
    logger.addHandler(watch)
    logger.setLevel(logging.DEBUG)
    try:
        async with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
            options: dict[str, Any] = {} if limiter is None else {"limiter": limiter}
            async with create_adapter(
                "openai:gpt-4.1",
                base_url=emu.base_url("openai"),
                api_key="test",
                retry_policy=PATIENT,
                **options,
            ) as adapter:
                for _ in range(8):
                    await adapter.evaluate_async(prompt("warm"), session=Session())
                emu.inject(fault, times=refused)
                first = [
                    asyncio.ensure_future(
                        adapter.evaluate_async(prompt("refused"), session=Session())
                    )
                    for _ in range(refused)
                ]
                await asyncio.wait_for(watch.all_seen.wait(), 10)
                texts = [
                    (await adapter.evaluate_async(prompt("neighbour"), session=Session())).text
                    for _ in range(neighbours)
                ]
                texts += [answer.text for answer in await asyncio.gather(*first)]
            assert texts == ["ok"] * (refused + neighbours)
            assert emu.stats.responses == {200: 8 + refused + neighbours, 429: refused}
            sent = [(str(request.body), request.received_at) for request in emu.requests]
    finally:
        logger.removeHandler(watch)
        logger.setLevel(level)
    refusals = [at for body, at in sent if "refused" in body]
    return Arrivals(
        refused=refusals[:refused],
        retries=refusals[refused:],
        neighbours=[at for body, at in sent if "neighbour" in body],
    )
