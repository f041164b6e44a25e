"""The request pacer (`wink.core.throttling.pacing`): on a fake clock, on threads, and
simulated on a virtual-time event loop against the emulator's own token bucket."""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time

import pytest

from tests.helpers.threads import on_threads
from tests.helpers.throttling import (
    FakeClock,
    FakeDeadline,
    fake_pacer,
    run_jobs,
    virtual_time_loop,
)
from tests.helpers.wire import load_recording
from wink.core.foundation.errors import ThrottleDetails, ThrottleError
from wink.core.foundation.messages import RateLimitInfo
from wink.core.throttling.headers import rate_limit_info_from_headers, retry_after_from_headers
from wink.core.throttling.pacing import RequestPacer
from wink.core.throttling.retry import RetryPolicy
from wink.providers.anthropic import messages as anthropic
from wink.providers.openai import client as openai
from wink.testing import Fault, RateLimit
from wink.testing.ratelimit import TokenBucket
from wink.testing.wire.base import retry_headers
from wink.testing.wire.openai import OpenAIChatWire

# --- RequestPacer, on a fake clock


BUCKET_EMPTY = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.01)
OPENAI_MINUTE = RateLimitInfo(limit_requests=30000, remaining_requests=29999, reset_requests=0.002)


async def test_a_new_pacer_is_idle_and_never_waits() -> None:
    pacer, clock = fake_pacer()
    assert pacer.idle
    await pacer.acquire()
    assert clock.slept == []


async def test_per_minute_limits_with_room_to_spare_add_no_wait() -> None:
    pacer, clock = fake_pacer()
    for _ in range(10):
        pacer.answered(OPENAI_MINUTE)
        await pacer.acquire()
    assert pacer.idle
    assert pacer.interval == 0.0
    assert clock.slept == []


def test_a_retry_after_on_a_200_causes_no_wait() -> None:
    answer = load_recording("anthropic/text_with_ratelimit_headers.json")["response"]
    headers = answer["headers"]
    assert headers["retry-after"] == "5"
    pacer, _ = fake_pacer()
    pacer.answered(rate_limit_info_from_headers(headers, anthropic.RATE_LIMIT_HEADERS))
    assert pacer.idle


async def test_an_empty_allowance_spaces_requests_one_refill_apart() -> None:
    pacer, clock = fake_pacer()
    pacer.answered(BUCKET_EMPTY)
    assert not pacer.idle
    assert pacer.interval == pytest.approx(0.01)
    releases: list[float] = []
    for _ in range(5):
        await pacer.acquire()
        releases.append(clock.now)
    gaps = [later - earlier for earlier, later in itertools.pairwise(releases)]
    assert releases[0] == pytest.approx(100.01)  # the first waits for the refill
    assert all(0.01 <= gap <= 0.0115 for gap in gaps)


async def test_a_reset_sent_as_a_clock_time_gets_back_the_trip_home() -> None:
    # Anthropic says *when* the allowance is full; counted from the answer's arrival that
    # is short by the trip back, about half the round trip
    pacer, clock = fake_pacer()
    pacer.answered(BUCKET_EMPTY)
    await pacer.acquire()  # paced: the release is remembered for this task
    clock.now += 0.004  # the round trip
    pacer.answered(
        RateLimitInfo(
            limit_requests=1, remaining_requests=0, reset_requests=0.008, reset_is_time=True
        )
    )
    assert pacer.interval == pytest.approx(0.010)
    await pacer.acquire()
    clock.now += 0.004
    pacer.answered(  # the same figure as a duration (OpenAI) is taken as it is
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.0105)
    )
    assert pacer.interval == pytest.approx(0.0105)


async def test_room_to_spare_relaxes_the_pace_back_to_idle() -> None:
    pacer, clock = fake_pacer()
    pacer.answered(BUCKET_EMPTY)
    for _ in range(12):
        pacer.answered(OPENAI_MINUTE)
    assert pacer.interval == 0.0
    await pacer.acquire()
    assert pacer.idle
    assert clock.slept == [] or clock.now <= 100.011


async def test_a_throttle_holds_every_request_for_the_window() -> None:
    pacer, clock = fake_pacer()
    pacer.throttled(0.2)
    assert not pacer.idle
    await pacer.acquire()
    assert clock.now == pytest.approx(100.2)


async def test_a_throttle_without_retry_after_holds_briefly() -> None:
    pacer, clock = fake_pacer()
    pacer.throttled(None)
    await pacer.acquire()
    assert clock.now == pytest.approx(100.5)


async def test_a_long_retry_after_holds_but_does_not_space_requests_apart() -> None:
    pacer, clock = fake_pacer()
    pacer.throttled(42.0)
    assert pacer.interval == 1.0
    await pacer.acquire()
    assert clock.now == pytest.approx(142.0)


async def test_pacing_nothing_confirms_is_forgotten() -> None:
    pacer, clock = fake_pacer()
    pacer.throttled(0.01)
    clock.now += 60.0
    await pacer.acquire()
    assert clock.slept == []
    assert pacer.idle
    assert pacer.interval == 0.0


async def test_acquire_never_sleeps_past_the_deadline() -> None:
    pacer, clock = fake_pacer()
    pacer.throttled(10.0)
    assert await pacer.acquire(FakeDeadline(0.5)) is False
    assert clock.slept == []  # a wait that cannot end in a request is not started
    assert await pacer.acquire(FakeDeadline(30.0)) is True
    assert clock.slept


def test_one_pacer_serves_several_threads_and_event_loops() -> None:
    pacer = RequestPacer()
    pacer.throttled(0.05)
    started = time.monotonic()
    assert on_threads(lambda: asyncio.run(pacer.acquire()), timeout=5) == []
    assert time.monotonic() - started >= 0.05


# --- RequestPacer, simulated: 100 req/s, burst 1, 50 requests in flight


def provider_answer(bucket: TokenBucket, now: float) -> tuple[int, dict[str, str]]:
    """The status and headers the emulator's OpenAI routes send for one request."""
    rate = bucket.take(now)
    headers = dict(OpenAIChatWire().rate_headers(rate, now))
    if rate.retry_after is None:
        return 200, headers
    return 429, {
        **headers,
        **retry_headers(Fault.rate_limit(rate.retry_after, header_style="both")),
    }


def simulate(*, pace: bool, seed: int = 7) -> tuple[float, int, int]:
    """(wall time, 429s, failed requests) for 300 requests, 50 at a time, 2-3 ms away."""
    with virtual_time_loop(seed) as loop:
        bucket = TokenBucket(RateLimit(requests_per_second=100.0, burst=1), now=loop.time())
        throttled = 0
        pacer = RequestPacer(clock=loop.time)
        policy = RetryPolicy(max_attempts=5 if pace else 50)
        network = random.Random(seed)

        async def request() -> None:  # what an adapter does around one SDK call
            nonlocal throttled
            if pace and not pacer.idle:
                await pacer.acquire()
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            status, headers = provider_answer(bucket, loop.time())
            throttled += status == 429
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            if status == 429:
                retry_after = retry_after_from_headers(headers, openai.RATE_LIMIT_HEADERS)
                if pace:
                    pacer.throttled(retry_after)
                raise ThrottleError(
                    "HTTP 429",
                    prompt_name="sim",
                    details=ThrottleDetails(kind="rate_limit", retry_after=retry_after),
                )
            if pace:
                pacer.answered(rate_limit_info_from_headers(headers, openai.RATE_LIMIT_HEADERS))

        wall, failed = run_jobs(loop, policy, request)
        return wall, throttled, failed


def test_pacing_a_burst_one_bucket_is_near_ideal_with_few_throttles() -> None:
    wall, throttles, failed = simulate(pace=True)
    assert failed == 0
    assert wall <= 1.15 * 3.0  # 300 requests at 100/s
    # the first 49 are unavoidable: 50 requests go out before any answer says anything
    assert throttles <= 55
    naive_wall, naive_throttles, naive_failed = simulate(pace=False)
    assert naive_failed == 0
    assert naive_throttles > 5 * throttles
    assert naive_wall > 2 * wall


def test_the_simulation_is_deterministic() -> None:
    assert simulate(pace=True, seed=3) == simulate(pace=True, seed=3)


# --- what the pacer cannot learn from


@pytest.mark.parametrize(
    "info",
    [
        RateLimitInfo(limit_requests=1, remaining_requests=None, reset_requests=0.01),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=None),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=-1.0),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=math.inf),
    ],
)
async def test_headers_that_say_too_little_set_no_pace(info: RateLimitInfo) -> None:
    pacer, clock = fake_pacer()
    pacer.answered(info)
    assert pacer.idle
    assert pacer.interval == 0.0
    await pacer.acquire()
    assert clock.slept == []


def test_a_refill_too_fast_to_be_worth_spacing_ends_the_pacing() -> None:
    pacer, _ = fake_pacer()
    pacer.answered(BUCKET_EMPTY)
    assert pacer.interval == pytest.approx(0.01)
    fast = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=1e-6)
    for _ in range(50):  # a smaller figure lowers the interval gently, 10% a response
        pacer.answered(fast)
    assert pacer.interval == 0.0
    assert "interval=0.000000" in repr(pacer)


@pytest.mark.parametrize(("shared", "learned"), [(False, 0.013), (True, 0.009)])
async def test_a_cold_throttle_takes_the_gap_before_it_as_part_of_a_refill_only_alone(
    shared: bool, learned: float
) -> None:
    # alone, the request 4 ms before took the last token and the next is 9 ms away: one
    # refill is 13 ms. A fleet's pacer (it records its changes for Redis) cannot say
    # that: other processes took tokens in those 4 ms too, so only the wait is known
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=2, record_ops=shared)

    async def first() -> None:
        await pacer.acquire()
        pacer.answered(None)

    await asyncio.create_task(first())
    clock.now += 0.004

    async def second() -> None:
        await pacer.acquire()
        pacer.throttled(0.009)

    await asyncio.create_task(second())
    assert pacer.interval == pytest.approx(learned)
