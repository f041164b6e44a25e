"""The tenacity strategies `RetryPolicy` is composed of.

Imported on the first retry only: a request that succeeds never loads tenacity.
Each keeps tenacity's `__call__(retry_state)` contract, so they compose with its own.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from tenacity import AsyncRetrying, RetryCallState, retry_base
from tenacity.stop import stop_after_attempt, stop_base
from tenacity.wait import wait_base, wait_exponential

from ..foundation.errors import ThrottleError
from .retry import with_attempts

if TYPE_CHECKING:
    from .retry import HasRemaining, RetryPolicy

__all__ = [
    "RetryIfRetrySafe",
    "StopBeforeDeadline",
    "StopOnLongRetryAfter",
    "WaitJitter",
    "WaitRetryAfter",
    "build_retrying",
]

_log = logging.getLogger("wink.throttle")


def _throttle_of(retry_state: RetryCallState) -> ThrottleError | None:
    """The `ThrottleError` the last attempt raised, if that is how it failed."""
    outcome = retry_state.outcome
    if outcome is None or not outcome.failed:
        return None
    error = outcome.exception()
    return error if isinstance(error, ThrottleError) else None


class RetryIfRetrySafe(retry_base):
    """Retry a `ThrottleError` whose `details.retry_safe` is set; nothing else."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        error = _throttle_of(retry_state)
        return error is not None and error.details.retry_safe


class StopBeforeDeadline(stop_base):
    """Stop when the next wait would end at or past the deadline.

    Tenacity computes the wait (`retry_state.upcoming_sleep`) before it asks the stop.
    """

    def __init__(self, deadline: HasRemaining) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return retry_state.upcoming_sleep >= self.deadline.remaining()


class StopOnLongRetryAfter(stop_base):
    """Stop when the provider asks to wait longer than `limit` (a timedelta, or seconds)."""

    def __init__(self, limit: timedelta | float) -> None:
        self.limit = limit if isinstance(limit, timedelta) else timedelta(seconds=limit)

    def __call__(self, retry_state: RetryCallState) -> bool:
        error = _throttle_of(retry_state)
        if error is None or error.details.retry_after is None:
            return False
        return error.details.retry_after > self.limit


class WaitRetryAfter(wait_base):
    """Wait at least what the provider asked: max(its `retry_after`, the `fallback` wait).

    A max, not tenacity's `+` (which would add the two).
    """

    def __init__(self, fallback: wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self.fallback(retry_state)
        error = _throttle_of(retry_state)
        asked = error.details.retry_after_seconds if error is not None else None
        return wait if asked is None else max(wait, asked)


class WaitJitter(wait_base):
    """`wait`, shortened by a random fraction of up to `fraction`, so retries spread out.

    Only ever shorter, so a maximum set on `wait` still holds.
    """

    def __init__(self, wait: wait_base, fraction: float) -> None:
        self.wait = wait
        self.fraction = fraction

    def __call__(self, retry_state: RetryCallState) -> float:
        return self.wait(retry_state) * (1.0 - self.fraction * random.random())


def build_retrying(
    policy: RetryPolicy,
    *,
    deadline: HasRemaining | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    on_retry: Callable[[ThrottleError, float], None] | None = None,
) -> AsyncRetrying:
    """The tenacity engine for `policy` (see `RetryPolicy.retrying`)."""
    stop: stop_base = stop_after_attempt(policy.max_attempts)
    if deadline is not None:
        stop = stop | StopBeforeDeadline(deadline)
    if policy.max_retry_after is not None:
        stop = stop | StopOnLongRetryAfter(policy.max_retry_after)
    backoff = wait_exponential(
        multiplier=policy.initial_delay, max=policy.max_delay, exp_base=policy.multiplier
    )

    def before_sleep(retry_state: RetryCallState) -> None:
        error = _throttle_of(retry_state)
        if error is None:
            return
        error = with_attempts(error, retry_state.attempt_number)  # the attempts made so far
        _log.debug("retrying in %.3fs: %s", retry_state.upcoming_sleep, error)
        if on_retry is not None:
            on_retry(error, retry_state.upcoming_sleep)

    return AsyncRetrying(
        sleep=sleep if sleep is not None else asyncio.sleep,
        stop=stop,
        wait=WaitRetryAfter(WaitJitter(backoff, policy.jitter)),
        retry=RetryIfRetrySafe(),
        before_sleep=before_sleep,
    )
