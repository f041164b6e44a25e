"""The retry policy (`wink.core.throttling.retry`): its arguments, its backoff, and `call`, which
retries retry-safe throttles. Nothing sleeps for real: `call` gets a recording `sleep`."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from tests.helpers.throttling import FakeDeadline, make_state, throttled
from wink.core.foundation.errors import ThrottleDetails, ThrottleError
from wink.core.throttling.retry import RetryPolicy, with_attempts
from wink.core.transport.errors import error_from_status


def test_importing_the_policy_loads_no_tenacity() -> None:
    """tenacity is loaded on the first retry, not by importing the retry policy."""
    code = (
        "import sys, wink.core.throttling.retry, wink.core.throttling.pacing\n"
        "print('tenacity' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- RetryPolicy: arguments


def test_retry_policy_defaults_and_no_retry_form() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.initial_delay, policy.max_delay) == (5, 0.5, 30.0)
    assert (policy.multiplier, policy.jitter) == (2.0, 0.1)
    assert policy.max_retry_after == timedelta(seconds=60)  # finite by default
    assert RetryPolicy(max_attempts=1).max_attempts == 1
    with pytest.raises(FrozenInstanceError):
        policy.max_attempts = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"max_attempts": 0}, "max_attempts must be an int >= 1"),
        ({"max_attempts": 2.5}, "max_attempts must be an int >= 1"),
        ({"max_attempts": True}, "max_attempts must be an int >= 1"),
        ({"initial_delay": -0.1}, "initial_delay must be a finite number >= 0"),
        ({"max_delay": -1.0}, "max_delay must be a finite number >= 0"),
        ({"initial_delay": 5.0, "max_delay": 1.0}, "must not exceed max_delay"),
        ({"multiplier": 0.5}, "multiplier must be a finite number >= 1"),
        ({"jitter": 1.5}, "jitter must be a finite number in [0, 1]"),
        ({"max_delay": math.inf}, "max_delay must be a finite number"),
        ({"max_retry_after": -3.0}, "max_retry_after must be a finite number >= 0"),
        ({"max_retry_after": math.inf}, "max_retry_after must be a finite number >= 0"),
        ({"max_retry_after": "60"}, "max_retry_after must be a finite number >= 0"),
        ({"max_retry_after": timedelta(seconds=-1)}, "max_retry_after must not be negative"),
        ({"max_retry_after": 1e20}, "max_retry_after must be at most"),
    ],
)
def test_retry_policy_rejects_bad_arguments(arguments: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint.replace("[", r"\[").replace("]", r"\]")):
        RetryPolicy(**arguments)


def test_policy_backoff_is_exponential_and_capped() -> None:
    wait = RetryPolicy(initial_delay=0.5, max_delay=3.0, jitter=0.0).retrying().wait
    error = throttled()
    assert [wait(make_state(n, error=error)) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert wait(make_state(1, error=throttled(retry_after=7.0))) == 7.0


# --- RetryPolicy.call


@dataclass
class Sleeps:
    waits: list[float] = field(default_factory=list[float])

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@dataclass
class Script:
    """An async callable that raises or returns its steps in order."""

    steps: list[BaseException | str]
    calls: int = 0

    async def __call__(self) -> str:
        step = self.steps[self.calls]
        self.calls += 1
        if isinstance(step, BaseException):
            raise step
        return step


NO_JITTER = RetryPolicy(max_attempts=3, initial_delay=0.5, max_delay=4.0, jitter=0.0)


async def test_success_costs_no_wait() -> None:
    sleeps = Sleeps()
    assert await NO_JITTER.call(Script(["done"]), sleep=sleeps) == "done"
    assert sleeps.waits == []


async def test_throttles_are_retried_waiting_at_least_retry_after() -> None:
    sleeps = Sleeps()
    seen: list[tuple[str, float]] = []
    script = Script([throttled(retry_after=2.0), throttled(), "done"])
    result = await NO_JITTER.call(
        script, sleep=sleeps, on_retry=lambda error, wait: seen.append((error.message, wait))
    )
    assert result == "done"
    assert script.calls == 3
    assert sleeps.waits == [2.0, 1.0]
    assert seen == [("HTTP 429: slow down", 2.0), ("HTTP 429: slow down", 1.0)]


async def test_giving_up_raises_the_last_throttle_with_attempts_counted() -> None:
    cause = ConnectionResetError("peer reset")
    last = throttled("overloaded", retry_after=0.25, message="HTTP 529: Overloaded")
    last.__cause__ = cause
    script = Script([throttled(), throttled(), last])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, sleep=Sleeps())
    error = caught.value
    assert script.calls == 3
    assert error.details == ThrottleDetails(
        kind="overloaded", retry_after=0.25, attempts=3, retry_safe=True, status_code=429
    )
    assert (error.message, error.prompt_name, error.phase) == (
        "HTTP 529: Overloaded",
        "greet",
        "request",
    )
    assert error.provider_payload == {"error": {"type": "rate_limit_error"}}
    assert error.__cause__ is cause
    assert "after 3 attempts" in str(error)


async def test_non_retryable_errors_propagate_at_once() -> None:
    quota = throttled("quota_exhausted", retry_safe=False)
    script = Script([quota, "never"])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, sleep=Sleeps())
    assert caught.value is quota
    assert caught.value.details.attempts == 1
    broken = Script([ValueError("bad request"), "never"])
    with pytest.raises(ValueError, match="bad request"):
        await NO_JITTER.call(broken, sleep=Sleeps())
    assert (script.calls, broken.calls) == (1, 1)


async def test_a_quota_after_retries_counts_every_attempt() -> None:
    script = Script([throttled(), throttled("quota_exhausted", retry_safe=False)])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, sleep=Sleeps())
    assert caught.value.details.kind == "quota_exhausted"
    assert caught.value.details.attempts == 2


async def test_max_attempts_one_never_retries() -> None:
    first = throttled()
    sleeps = Sleeps()
    with pytest.raises(ThrottleError) as caught:
        await RetryPolicy(max_attempts=1).call(Script([first, "never"]), sleep=sleeps)
    assert caught.value is first
    assert sleeps.waits == []


async def test_a_wait_past_the_deadline_gives_up_with_the_throttle() -> None:
    sleeps = Sleeps()
    script = Script([throttled(retry_after=5.0), "never"])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, deadline=FakeDeadline(1.0), sleep=sleeps)
    assert sleeps.waits == []  # did not wait at all
    assert caught.value.details.retry_after == timedelta(seconds=5)  # what was asked
    assert caught.value.details.attempts == 1


async def test_the_deadline_allows_the_retries_that_fit() -> None:
    sleeps = Sleeps()
    script = Script([throttled(), throttled(), "never"])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, deadline=FakeDeadline(0.9), sleep=sleeps)
    assert sleeps.waits == [0.5]  # the next wait (1.0 s) would have ended past it
    assert caught.value.details.attempts == 2


@pytest.mark.parametrize("cap", [30.0, 30, timedelta(seconds=30)])
async def test_max_retry_after_gives_up_on_long_asks(cap: float | timedelta) -> None:
    policy = RetryPolicy(max_retry_after=cap, jitter=0.0)
    assert policy.max_retry_after == timedelta(seconds=30)
    sleeps = Sleeps()
    script = Script([throttled(retry_after=60.0), "never"])
    with pytest.raises(ThrottleError) as caught:
        await policy.call(script, sleep=sleeps)
    assert caught.value.details.retry_after == timedelta(seconds=60)
    assert (script.calls, sleeps.waits) == (1, [])


async def test_the_default_policy_gives_up_at_once_on_an_absurd_retry_after() -> None:
    asked = error_from_status(
        429, "slow down", prompt_name="greet", headers={"retry-after": "99999999999"}
    )
    assert isinstance(asked, ThrottleError)
    sleeps = Sleeps()
    script = Script([asked, "never"])
    with pytest.raises(ThrottleError) as caught:
        await RetryPolicy().call(script, sleep=sleeps)
    assert (script.calls, sleeps.waits) == (1, [])
    # kept as asked, so the caller can schedule the work for later
    assert caught.value.details.retry_after == timedelta(seconds=99999999999)
    assert caught.value.details.attempts == 1


async def test_an_ask_at_the_cap_is_still_waited_out() -> None:
    sleeps = Sleeps()
    script = Script([throttled(retry_after=60.0), "done"])
    assert await RetryPolicy(jitter=0.0).call(script, sleep=sleeps) == "done"
    assert sleeps.waits == [60.0]


async def test_no_cap_waits_whatever_is_asked() -> None:
    sleeps = Sleeps()
    script = Script([throttled(retry_after=3600.0), "done"])
    assert await RetryPolicy(max_retry_after=None).call(script, sleep=sleeps) == "done"
    assert sleeps.waits == [3600.0]


def test_cap_wait_cuts_a_shared_window_to_the_cap() -> None:
    policy = RetryPolicy()
    assert policy.cap_wait(None) is None
    assert policy.cap_wait(2.5) == 2.5
    assert policy.cap_wait(99999999999.0) == 60.0
    assert RetryPolicy(max_retry_after=timedelta(milliseconds=1500)).cap_wait(2) == 1.5
    assert RetryPolicy(max_retry_after=None).cap_wait(1e9) == 1e9
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="seconds must be a finite number >= 0"):
            policy.cap_wait(bad)


async def test_default_sleep_is_asyncio() -> None:
    policy = RetryPolicy(max_attempts=2, initial_delay=0.001, max_delay=0.001)
    assert await policy.call(Script([throttled(), "done"])) == "done"


def test_with_attempts_copies_everything_but_the_count() -> None:
    try:
        try:
            raise OSError("socket closed")
        except OSError as cause:
            raise throttled(retry_after=1.0) from cause
    except ThrottleError as error:
        original = error
    copy = with_attempts(original, 4)
    assert copy is not original
    assert copy.details == ThrottleDetails(
        kind="rate_limit", retry_after=1.0, attempts=4, retry_safe=True, status_code=429
    )
    assert (copy.message, copy.prompt_name, copy.phase, copy.provider_payload) == (
        original.message,
        original.prompt_name,
        original.phase,
        original.provider_payload,
    )
    assert isinstance(copy.__cause__, OSError)
    assert copy.__traceback__ is original.__traceback__
    assert "after 4 attempts" in str(copy)
