"""`RetryPolicy`: the one retry decision for every provider, built on tenacity.

tenacity (see `retry_strategies.py`) is loaded on the first retry, not on import.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from .errors import ConfigurationError, ThrottleError

if TYPE_CHECKING:
    from tenacity import AsyncRetrying

__all__ = ["HasRemaining", "RetryPolicy", "with_attempts"]

T = TypeVar("T")


class HasRemaining(Protocol):
    """A deadline: seconds left, zero or negative once passed (`wink.core.limits.Deadline`)."""

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


@dataclass(frozen=True, slots=True)
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
    * when the provider asks to wait more than `max_retry_after` seconds (if set).

    Built from tenacity pieces (`retrying()`); the SDKs' own retries are off.
    """

    max_attempts: int = 5
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.1
    max_retry_after: float | None = None

    def __post_init__(self) -> None:
        attempts = cast(object, self.max_attempts)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ConfigurationError(
                f"max_attempts must be an int >= 1 (1 = no retry), got {self.max_attempts!r}"
            )
        for name in ("initial_delay", "max_delay"):
            _check_number(name, getattr(self, name), minimum=0.0)
        if self.initial_delay > self.max_delay:
            raise ConfigurationError(
                f"initial_delay ({self.initial_delay}) must not exceed max_delay ({self.max_delay})"
            )
        _check_number("multiplier", self.multiplier, minimum=1.0)
        _check_number("jitter", self.jitter, minimum=0.0, maximum=1.0)
        if self.max_retry_after is not None:
            _check_number("max_retry_after", self.max_retry_after, minimum=0.0)

    def retrying(
        self,
        *,
        deadline: HasRemaining | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        on_retry: Callable[[ThrottleError, float], None] | None = None,
    ) -> AsyncRetrying:
        """The tenacity engine for this policy (`call` is the way to use it)."""
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
        try:
            return await fn()
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
            return await fn()

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


def _counted(error: ThrottleError, attempts: int) -> ThrottleError:
    return error if error.details.attempts == attempts else with_attempts(error, attempts)


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
