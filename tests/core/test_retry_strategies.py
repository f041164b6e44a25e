"""The tenacity strategies the retry policy is built from (`wink.core.retry_strategies`),
each on a hand-built `RetryCallState`."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tenacity.stop import stop_after_attempt
from tenacity.wait import wait_combine, wait_fixed

from tests.helpers.throttling import FakeDeadline, make_state, throttled
from wink.core.retry_strategies import (
    RetryIfRetrySafe,
    StopBeforeDeadline,
    StopOnLongRetryAfter,
    WaitJitter,
    WaitRetryAfter,
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
