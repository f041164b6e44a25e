"""`RetryPolicy`: the one retry decision for every provider, built on tenacity.

tenacity (see `retry_strategies.py`) is loaded on the first retry, not on import.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from ..foundation.checks import a_callable, kind_of
from ..foundation.errors import ConfigurationError, InvalidArgumentError, ThrottleError

if TYPE_CHECKING:
    from tenacity import AsyncRetrying

__all__ = ["HasRemaining", "RetryPolicy", "with_attempts"]

T = TypeVar("T")


class HasRemaining(Protocol):
    """A deadline: seconds left, zero or negative once passed (a `Deadline`)."""

    def remaining(self) -> float: ...


def with_attempts(error: ThrottleError, attempts: int) -> ThrottleError:
    """A copy of `error` saying it came after `attempts` attempts (cause and traceback kept)."""
    copy = ThrottleError(
        error.message,
        prompt_name=error.prompt_name,
        details=replace(error.details, attempts=attempts),
        phase=error.phase,
        provider_payload=error.provider_payload,
    )
    copy.__cause__ = error.__cause__
    copy.__suppress_context__ = error.__suppress_context__
    return copy.with_traceback(error.__traceback__)


_DEFAULT_MAX_RETRY_AFTER = timedelta(seconds=60)
"""The default `RetryPolicy.max_retry_after` (see there why a minute)."""


@dataclass(frozen=True, slots=True, init=False)
class RetryPolicy:
    """How wink retries a throttled request; the one retry decision for every provider.

    Only a `ThrottleError` with `details.retry_safe` is retried (never an exhausted quota,
    never a rejected request). The wait before retry n is the larger of what the provider
    asked (`retry_after`) and an exponential backoff, `initial_delay * multiplier**(n-1)`
    capped at `max_delay` and shortened at random by up to `jitter` (a fraction).
    `max_attempts` counts the first attempt: `RetryPolicy(max_attempts=1)` never retries.

    It gives up, raising the last `ThrottleError` with `details.attempts` counted:

    * after `max_attempts` attempts;
    * when the next wait would end past the evaluation's deadline. The throttle is raised,
      not a deadline error, so the caller sees what the provider asked and decides;
    * at once when the provider asks to wait longer than `max_retry_after`, with
      `details.retry_after` as asked, so the caller can schedule the work for later.

    `max_retry_after` (a `timedelta`, or seconds; default 60 s) exists because a
    provider's ask is not bounded: `retry-after: 99999999999` would otherwise hold a
    worker for millennia. A minute because rate limits refill within one (OpenAI's and
    Anthropic's windows are per minute, Gemini asks for seconds on a per-minute quota):
    a longer ask is a daily quota, an outage or a broken header, better scheduled by
    the caller than slept through. `None` removes the cap (then any ask is waited out,
    deadline permitting). `cap_wait` applies the same cap to the waits wink honours
    outside this loop, such as the adapter's shared throttle window.

    Built from tenacity pieces (`retrying()`); the SDKs' own retries are off.
    """

    max_attempts: int
    initial_delay: float
    max_delay: float
    multiplier: float
    jitter: float
    max_retry_after: timedelta | None

    def __init__(
        self,
        max_attempts: int = 5,
        initial_delay: float = 0.5,
        max_delay: float = 30.0,
        multiplier: float = 2.0,
        jitter: float = 0.1,
        max_retry_after: timedelta | float | None = _DEFAULT_MAX_RETRY_AFTER,
    ) -> None:
        attempts = cast(object, max_attempts)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ConfigurationError(
                f"max_attempts must be an int >= 1 (1 = no retry), got {max_attempts!r}"
            )
        _check_number("initial_delay", initial_delay, minimum=0.0)
        _check_number("max_delay", max_delay, minimum=0.0)
        if initial_delay > max_delay:
            raise ConfigurationError(
                f"initial_delay ({initial_delay}) must not exceed max_delay ({max_delay})"
            )
        _check_number("multiplier", multiplier, minimum=1.0)
        _check_number("jitter", jitter, minimum=0.0, maximum=1.0)
        # frozen: the fields are set once, here
        object.__setattr__(self, "max_attempts", max_attempts)
        object.__setattr__(self, "initial_delay", initial_delay)
        object.__setattr__(self, "max_delay", max_delay)
        object.__setattr__(self, "multiplier", multiplier)
        object.__setattr__(self, "jitter", jitter)
        object.__setattr__(self, "max_retry_after", _as_cap(max_retry_after))

    def cap_wait(self, seconds: float | None) -> float | None:
        """`seconds` (a wait the provider asked) cut to `max_retry_after`; None stays None.

        For a runner that honours an ask outside `call`, e.g. the adapter-wide throttle
        window every request waits out: with the cap, one absurd `retry-after` cannot
        hold the adapter longer than the policy would ever wait.
        """
        if seconds is None:
            return None
        _check_number("seconds", seconds, minimum=0.0)
        if self.max_retry_after is None:
            return seconds
        return min(seconds, self.max_retry_after.total_seconds())

    def retrying(
        self,
        *,
        deadline: HasRemaining | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        on_retry: Callable[[ThrottleError, float], None] | None = None,
    ) -> AsyncRetrying:
        """The tenacity engine for this policy (`call` is the way to use it)."""
        _check_hooks("retrying", deadline, sleep, on_retry)
        from .retry_strategies import build_retrying  # tenacity: first retry only

        return build_retrying(self, deadline=deadline, sleep=sleep, on_retry=on_retry)

    async def call(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        deadline: HasRemaining | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        on_retry: Callable[[ThrottleError, float], None] | None = None,
    ) -> T:
        """Run `fn`, retrying retry-safe throttles; raise the last one, attempts counted.

        Any other exception, and a throttle that is not retry-safe, propagates at once.
        `sleep` replaces `asyncio.sleep` (tests); `on_retry(error, wait)` runs before each
        wait. The first attempt runs outside tenacity, so a request that succeeds (the
        common case) pays nothing for it; a retry-safe failure seeds tenacity, which then
        decides every later step.
        """
        a_callable(fn, "RetryPolicy.call(fn=...)", "fn")
        _check_hooks("call", deadline, sleep, on_retry)
        try:
            return await _awaited(fn)
        except ThrottleError as error:
            if self.max_attempts == 1 or not error.details.retry_safe:
                raise
            first = error
        attempts = 0

        async def attempt() -> T:
            nonlocal attempts
            attempts += 1
            if attempts == 1:
                raise first
            return await _awaited(fn)

        from tenacity import RetryError

        retrying = self.retrying(deadline=deadline, sleep=sleep, on_retry=on_retry)
        try:
            return cast(T, await retrying(attempt))
        except RetryError as gave_up:
            last = gave_up.last_attempt.exception()
            if not isinstance(last, ThrottleError):  # pragma: no cover - only throttles retry
                raise
            final = _counted(last, attempts)
        except ThrottleError as error:  # not retry-safe, after earlier retries
            final = _counted(error, attempts)
            if final is error:
                raise
        raise final from final.__cause__


def _check_hooks(method: str, deadline: object, sleep: object, on_retry: object) -> None:
    where = f"RetryPolicy.{method}"
    if deadline is not None and not callable(getattr(deadline, "remaining", None)):
        raise InvalidArgumentError(
            f"{where}(deadline=...) takes a Deadline or None, got {kind_of(deadline)}",
            argument="deadline",
        )
    for name, hook in (("sleep", sleep), ("on_retry", on_retry)):
        if hook is not None:
            a_callable(hook, f"{where}({name}=...)", name)


def _awaited(fn: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """`fn()`, which must give an awaitable: `call` takes an async function."""
    result = fn()
    if not inspect.isawaitable(result):
        raise InvalidArgumentError(
            "RetryPolicy.call(fn=...) takes an async function (one returning an awaitable), "
            f"its call returned {kind_of(result)}",
            argument="fn",
        )
    return result


def _counted(error: ThrottleError, attempts: int) -> ThrottleError:
    return error if error.details.attempts == attempts else with_attempts(error, attempts)


def _as_cap(value: object) -> timedelta | None:
    """`max_retry_after` as given (a timedelta, seconds or None) -> a timedelta or None."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        if value < timedelta(0):
            raise ConfigurationError(f"max_retry_after must not be negative, got {value!r}")
        return value
    _check_number("max_retry_after", value, minimum=0.0)
    try:
        return timedelta(seconds=cast(float, value))
    except OverflowError:
        raise ConfigurationError(
            f"max_retry_after must be at most {timedelta.max.total_seconds():g}s, got {value!r}"
        ) from None


def _check_number(
    name: str, value: object, *, minimum: float, maximum: float | None = None
) -> None:
    valid = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= minimum
        and (maximum is None or value <= maximum)
    )
    if not valid:
        bound = f">= {minimum:g}" if maximum is None else f"in [{minimum:g}, {maximum:g}]"
        raise ConfigurationError(f"{name} must be a finite number {bound}, got {value!r}")
