"""Throttles and a deadline to drive the retry policy, its tenacity strategies and the
pacer with, without a provider or a real clock."""

from __future__ import annotations

from dataclasses import dataclass

from tenacity import AsyncRetrying, RetryCallState

from wink.core.errors import ThrottleDetails, ThrottleError, ThrottleKind


def throttled(
    kind: ThrottleKind = "rate_limit",
    *,
    retry_after: float | None = None,
    retry_safe: bool = True,
    message: str = "HTTP 429: slow down",
) -> ThrottleError:
    """A 429 as an adapter raises it, for the prompt "greet"."""
    return ThrottleError(
        message,
        prompt_name="greet",
        details=ThrottleDetails(
            kind=kind, retry_after=retry_after, retry_safe=retry_safe, status_code=429
        ),
        provider_payload={"error": {"type": "rate_limit_error"}},
    )


@dataclass
class FakeDeadline:
    """A deadline that always has `left` seconds to go."""

    left: float

    def remaining(self) -> float:
        return self.left


def make_state(
    attempt: int = 1, *, error: BaseException | None = None, upcoming_sleep: float = 0.0
) -> RetryCallState:
    """A tenacity call state after `attempt` attempts that ended with `error` (else "ok")."""
    state = RetryCallState(retry_object=AsyncRetrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    if error is None:
        state.set_result("ok")
    else:
        state.set_exception((type(error), error, None))
    state.upcoming_sleep = upcoming_sleep
    return state
