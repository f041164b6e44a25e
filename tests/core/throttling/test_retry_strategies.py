"""The tenacity strategies the retry policy is built from (`wink.core.throttling.retry_strategies`),
each on a hand-built `RetryCallState`."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tenacity.stop import stop_after_attempt
from tenacity.wait import wait_combine, wait_fixed

from tests.helpers.throttling import FakeDeadline, make_state, throttled
from wink.core.throttling.retry import RetryPolicy
from wink.core.throttling.retry_strategies import (
    RetryIfRetrySafe,
    StopBeforeDeadline,
    StopOnLongRetryAfter,
    WaitJitter,
    WaitRetryAfter,
    build_retrying,
)


def test_retry_predicate_takes_only_retry_safe_throttles() -> None:
    retry = RetryIfRetrySafe()
    assert retry(make_state(error=throttled()))
    assert not retry(make_state(error=throttled("quota_exhausted", retry_safe=False)))
    assert not retry(make_state(error=ValueError("bad")))
    assert not retry(make_state())


def test_wait_retry_after_is_a_max_not_a_sum() -> None:
    wait = WaitRetryAfter(wait_fixed(0.5))
    assert wait(make_state(error=throttled(retry_after=2.0))) == 2.0
    assert wait(make_state(error=throttled(retry_after=0.1))) == 0.5
    assert wait(make_state(error=throttled())) == 0.5
    assert wait(make_state(error=ValueError())) == 0.5
    combined = wait + wait_fixed(1.0)  # tenacity's own `+` still adds
    assert isinstance(combined, wait_combine)
    assert combined(make_state(error=throttled(retry_after=2.0))) == 3.0


def test_wait_jitter_only_shortens() -> None:
    jittered = WaitJitter(wait_fixed(1.0), 0.1)
    waits = [jittered(make_state()) for _ in range(200)]
    assert all(0.9 <= wait <= 1.0 for wait in waits)
    assert len(set(waits)) > 1
    assert WaitJitter(wait_fixed(1.0), 0.0)(make_state()) == 1.0


def test_stop_before_deadline_looks_at_the_next_wait() -> None:
    stop = StopBeforeDeadline(FakeDeadline(1.0))
    assert not stop(make_state(upcoming_sleep=0.5))
    assert stop(make_state(upcoming_sleep=1.0))
    assert stop(make_state(upcoming_sleep=3.0))
    either = stop | stop_after_attempt(3)  # composes like any tenacity stop
    assert not either(make_state(2, upcoming_sleep=0.1))
    assert either(make_state(3, upcoming_sleep=0.1))


@pytest.mark.parametrize("limit", [30.0, timedelta(seconds=30)])
def test_stop_on_long_retry_after(limit: float | timedelta) -> None:
    stop = StopOnLongRetryAfter(limit)
    assert stop(make_state(error=throttled(retry_after=60.0)))
    assert not stop(make_state(error=throttled(retry_after=30.0)))
    assert not stop(make_state(error=throttled()))
    assert not stop(make_state(error=ValueError()))


# --- put together by build_retrying


def test_the_engine_stops_on_attempts_the_deadline_or_a_long_ask() -> None:
    policy = RetryPolicy(max_attempts=3, max_retry_after=60.0)
    stop = build_retrying(policy, deadline=FakeDeadline(10.0)).stop
    assert not stop(make_state(1, error=throttled(retry_after=1.0), upcoming_sleep=1.0))
    assert stop(make_state(3, error=throttled()))  # the attempts are used up
    assert stop(make_state(1, error=throttled(), upcoming_sleep=11.0))  # past the deadline
    assert stop(make_state(1, error=throttled(retry_after=120.0)))  # asks for too long
    uncapped = build_retrying(RetryPolicy(max_retry_after=None)).stop
    assert not uncapped(make_state(1, error=throttled(retry_after=1e6)))


async def test_the_engine_waits_and_reports_each_retry_with_its_attempt() -> None:
    sleeps: list[float] = []
    seen: list[tuple[int, float]] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    policy = RetryPolicy(max_attempts=3, initial_delay=0.5, max_delay=4.0, jitter=0.0)
    retrying = build_retrying(
        policy,
        sleep=sleep,
        on_retry=lambda error, wait: seen.append((error.details.attempts, wait)),
    )
    outcomes: list[BaseException | str] = [throttled(retry_after=2.0), throttled(), "done"]

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    assert await retrying(attempt) == "done"
    assert sleeps == [2.0, 1.0]  # the retry-after, then the backoff's second step
    assert seen == [(1, 2.0), (2, 1.0)]
