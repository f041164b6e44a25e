"""The pacer's cold start, its pacing from 429s alone, and what a shared limiter reads from it.

Nothing sleeps for real: the pacer runs on a fake clock, or on an event loop whose clock
is virtual (the older pacer tests are in test_pacing.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import random
from dataclasses import dataclass, field

import pytest

from tests.helpers.throttling import run_jobs, virtual_time_loop
from wink.core.foundation.errors import ThrottleDetails, ThrottleError
from wink.core.foundation.messages import RateLimitInfo
from wink.core.throttling.headers import retry_after_from_headers
from wink.core.throttling.pacing import PaceOp, RequestPacer
from wink.core.throttling.retry import RetryPolicy
from wink.testing.faults import RateLimit
from wink.testing.ratelimit import TokenBucket

PLENTY = RateLimitInfo(limit_requests=30000, remaining_requests=29999, reset_requests=0.002)


@dataclass
class FakeClock:
    now: float = 100.0
    slept: list[float] = field(default_factory=list[float])

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class FakeDeadline:
    left: float

    def remaining(self) -> float:
        return self.left


async def settle() -> None:
    """Let woken tasks run (wake-ups go through `call_soon_threadsafe`)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def let_go(pacer: RequestPacer) -> contextvars.Context:
    """Acquire in a context of its own, so its answer can be reported from that context."""
    context = contextvars.copy_context()
    task = asyncio.get_running_loop().create_task(pacer.acquire(), context=context)
    assert await task
    return context


# --- the cold start


async def test_a_cold_pacer_lets_a_few_out_then_more_as_answers_come() -> None:
    pacer = RequestPacer(initial_window=2)
    assert pacer.cold
    assert not pacer.idle
    gone: list[int] = []
    answer = [asyncio.Event() for _ in range(6)]

    async def request(number: int) -> None:
        assert await pacer.acquire()
        gone.append(number)
        await answer[number].wait()
        await pacer.on_response(None)

    tasks = [asyncio.create_task(request(number)) for number in range(6)]
    await settle()
    assert gone == [0, 1]  # two in flight, the others wait
    answer[0].set()  # a success: its place frees up, and the window grows by one
    await settle()
    assert gone == [0, 1, 2, 3]
    for event in answer:
        event.set()
    await asyncio.gather(*tasks)
    assert gone == list(range(6))


async def test_the_cold_start_ends_when_the_headers_show_room() -> None:
    pacer = RequestPacer(initial_window=2)
    context = await let_go(pacer)
    context.run(pacer.answered, PLENTY)
    assert not pacer.cold
    assert pacer.idle


async def test_the_cold_start_ends_after_enough_answers() -> None:
    pacer = RequestPacer(initial_window=2)
    answers = 0
    while pacer.cold:
        context = await let_go(pacer)
        context.run(pacer.answered, None)
        answers += 1
    assert answers == 62  # the window grew from 2 to 64
    assert pacer.idle


def test_a_negative_window_is_refused() -> None:
    with pytest.raises(ValueError, match="initial_window"):
        RequestPacer(initial_window=-1)


async def test_a_cold_wait_never_outlasts_the_deadline() -> None:
    pacer = RequestPacer(initial_window=1)
    await let_go(pacer)  # in flight, never answered
    assert await pacer.acquire(FakeDeadline(0.0)) is False


async def test_the_first_throttle_measures_one_whole_refill() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=2)
    first = await let_go(pacer)
    clock.now += 0.003
    second = await let_go(pacer)  # 3 ms after the first
    first.run(pacer.answered, None)  # the first took the token...
    second.run(pacer.throttled, 0.007)  # ...and the next one comes 7 ms from now
    assert not pacer.cold
    assert pacer.interval == pytest.approx(0.010)  # not the 7 ms the 429 asked alone


# --- pacing without rate headers


async def test_without_headers_successes_probe_and_a_throttle_backs_off_once_per_round() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=0)
    pacer.throttled(0.010)
    assert pacer.interval == pytest.approx(0.010)
    (await let_go(pacer)).run(pacer.answered, None)
    assert pacer.interval == pytest.approx(0.010 * 0.998)  # a paced success: a bit faster
    early, late = await let_go(pacer), await let_go(pacer)
    before = pacer.interval
    early.run(pacer.throttled, 0.0001)  # let go 10.5 ms after the one before, still throttled
    assert pacer.interval == pytest.approx(0.0105 + 0.0001)  # one whole refill: gap + wait
    assert before * 1.05 <= pacer.interval <= before * 1.10
    backed_off = pacer.interval
    late.run(pacer.throttled, 0.0001)  # let go before that backoff: no second one
    assert pacer.interval == backed_off


async def test_with_headers_a_paced_throttle_widens_the_margin_instead() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=0)
    pacer.answered(RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.01))
    margin = pacer.margin
    (await let_go(pacer)).run(pacer.throttled, 0.002)
    assert pacer.margin > margin
    assert pacer.interval == pytest.approx(0.01)


# --- what a shared limiter reads


def test_recorded_ops_are_taken_once_and_bounded() -> None:
    pacer = RequestPacer(initial_window=0, record_ops=True)
    assert not pacer.has_ops
    pacer.throttled(0.02)
    assert pacer.take_ops() == [PaceOp("hold", 0.02, 0.02)]
    assert pacer.take_ops() == []
    for _ in range(100):
        pacer.throttled(0.01)
    assert len(pacer.take_ops()) == 64  # the latest ones; nobody took them in time
    assert RequestPacer().take_ops() == []  # not recording


def test_adopting_a_shared_state() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, initial_window=4)
    pacer.adopt(0.02, 0.5, 0.0)  # the fleet paces: the cold start is over
    assert not pacer.cold
    assert not pacer.idle
    assert pacer.state() == (0.02, pytest.approx(0.5))
    pacer.adopt(0.0, 0.0, math.inf)  # and stops
    assert pacer.interval == 0.0


# --- simulated: 100 req/s, burst 1, 50 requests in flight, 429s with only retry-after


def simulate(*, initial_window: int = 4, seed: int = 7) -> tuple[float, int, int]:
    """(wall time, 429s, failed) for 300 requests, 50 at a time, 1-1.5 ms each way."""
    with virtual_time_loop(seed) as loop:
        bucket = TokenBucket(RateLimit(100.0, burst=1, headers=False), now=loop.time())
        throttled = 0
        pacer = RequestPacer(clock=loop.time, initial_window=initial_window)
        policy = RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=1.0, jitter=0.0)
        network = random.Random(seed)

        async def request() -> None:  # what an adapter does around one SDK call
            if not pacer.idle:
                await pacer.acquire()
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            rate = bucket.take(loop.time())  # the emulator's own bucket, headers off
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            if rate.retry_after is not None:
                nonlocal throttled
                throttled += 1
                retry_after = retry_after_from_headers({"retry-after": str(rate.retry_after)})
                await pacer.on_throttle(retry_after)
                raise ThrottleError(
                    "HTTP 429",
                    prompt_name="sim",
                    details=ThrottleDetails(kind="rate_limit", retry_after=retry_after),
                )
            await pacer.on_response(None)

        wall, failed = run_jobs(loop, policy, request)
        return wall, throttled, failed


def test_pacing_from_429s_alone_is_near_ideal_with_few_throttles() -> None:
    wall, throttles, failed = simulate()
    assert failed == 0
    assert wall <= 1.2 * 3.0  # 300 requests at 100/s, virtual time
    assert throttles <= 15
    # without the cold start, the first 50 go out together and 49 of them are refused
    _, herd_throttles, herd_failed = simulate(initial_window=0)
    assert herd_failed == 0
    assert herd_throttles >= 49


def test_the_headerless_simulation_is_deterministic() -> None:
    assert simulate(seed=3) == simulate(seed=3)
