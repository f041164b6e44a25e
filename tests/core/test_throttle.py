"""Throttling: header parsing, the tenacity retry policy, and the request pacer.

Nothing here sleeps for real: retries get a recording `sleep`, strategies get a
hand-built `RetryCallState`, and the pacer runs on a fake clock or on an event loop whose
clock is virtual.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Mapping
from contextlib import contextmanager
from dataclasses import FrozenInstanceError, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from tenacity import AsyncRetrying, RetryCallState
from tenacity.stop import stop_after_attempt
from tenacity.wait import wait_combine, wait_fixed

from wink.core import errors, throttle
from wink.core.errors import ThrottleDetails, ThrottleError
from wink.core.messages import RateLimitInfo
from wink.core.pacing import RequestPacer
from wink.core.retry import RetryPolicy, with_attempts
from wink.core.retry_strategies import (
    RetryIfRetrySafe,
    StopBeforeDeadline,
    StopOnLongRetryAfter,
    WaitJitter,
    WaitRetryAfter,
)
from wink.core.throttle import (
    google_quota_is_daily,
    google_retry_delay,
    parse_duration,
    rate_limit_info_from_headers,
    retry_after_from_headers,
)

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"  # recorded traffic, verbatim


def recording(provider: str, name: str) -> dict[str, Any]:
    """A conformance recording (read-only recorded data); skip when it is not there."""
    path = CONFORMANCE / provider / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"conformance recording not available: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def throttled(
    kind: errors.ThrottleKind = "rate_limit",
    *,
    retry_after: float | None = None,
    retry_safe: bool = True,
    message: str = "HTTP 429: slow down",
) -> ThrottleError:
    return ThrottleError(
        message,
        prompt_name="greet",
        details=ThrottleDetails(
            kind=kind, retry_after=retry_after, retry_safe=retry_safe, status_code=429
        ),
        provider_payload={"error": {"type": "rate_limit_error"}},
    )


# --- the public surface


def test_throttle_is_the_documented_home_of_the_throttle_types() -> None:
    # tenacity is loaded on the first retry, not by importing the retry policy
    code = "import sys, wink.core.retry, wink.core.pacing; print('tenacity' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )
    assert throttle.ThrottleKind is errors.ThrottleKind
    assert throttle.ThrottleDetails is errors.ThrottleDetails
    assert sorted(throttle.__all__) == list(throttle.__all__)
    for name in throttle.__all__:
        assert getattr(throttle, name) is not None


# --- parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2ms", 0.002),
        ("120ms", 0.12),
        ("1.235s", 1.235),
        ("8.64s", 8.64),
        ("0s", 0.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("500us", 0.0005),
        ("500µs", 0.0005),  # Go writes the micro sign
        ("500μs", 0.0005),  # the Greek mu is accepted too
        ("250ns", 2.5e-7),
        ("42s", 42.0),
        ("3.598366221s", 3.598366221),
        ("5", 5.0),
        ("0.25", 0.25),
        (" 2ms ", 0.002),
    ],
)
def test_parse_duration_reads_go_and_protobuf_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    [
        *("", "   ", "abc", "-1s", "-5", "+3s", "1x", "ms", "s", "1.2.3s", "inf", "nan"),
        *("1e3", "2 ms", "2ms3", "1s-1s", "9" * 400),
    ],
)
def test_parse_duration_gives_none_on_garbage(text: str) -> None:
    assert parse_duration(text) is None


def test_parse_duration_never_raises_on_a_non_string() -> None:
    assert parse_duration(None) is None  # type: ignore[arg-type]
    assert parse_duration(5) is None  # type: ignore[arg-type]


# --- retry_after_from_headers

NOW = datetime(2026, 2, 3, 23, 26, 30, tzinfo=UTC)


def test_retry_after_ms_comes_first() -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "7"}
    assert retry_after_from_headers(headers) == pytest.approx(1.5)


def test_retry_after_in_seconds_and_as_an_http_date() -> None:
    assert retry_after_from_headers({"retry-after": "2.5"}) == pytest.approx(2.5)
    date = {"retry-after": "Tue, 03 Feb 2026 23:26:42 GMT"}
    assert retry_after_from_headers(date, now=NOW) == pytest.approx(12.0)
    past = {"retry-after": "Tue, 03 Feb 2026 23:00:00 GMT"}
    assert retry_after_from_headers(past, now=NOW) == 0.0


def test_header_names_match_in_any_case() -> None:
    assert retry_after_from_headers({"Retry-After-Ms": "20"}) == pytest.approx(0.02)
    assert retry_after_from_headers(httpx.Headers({"Retry-After": "3"})) == 3.0


def test_malformed_or_negative_values_are_skipped() -> None:
    headers = {"retry-after-ms": "soon", "retry-after": "-4", "x-ratelimit-reset-requests": "2s"}
    assert retry_after_from_headers(headers) == 2.0
    assert retry_after_from_headers({"retry-after": "whenever"}) is None
    assert retry_after_from_headers({}) is None


def test_reset_headers_take_the_exhausted_allowance() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1.5s",
        "x-ratelimit-remaining-tokens": "5000",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    assert retry_after_from_headers(headers) == 1.5
    headers["x-ratelimit-remaining-requests"] = "3"
    assert retry_after_from_headers(headers) == 360.0  # none exhausted: the longest


def test_anthropic_resets_are_times_counted_from_now() -> None:
    headers = {
        "anthropic-ratelimit-requests-remaining": "10",
        "anthropic-ratelimit-requests-reset": "2026-02-03T23:26:35Z",
        "anthropic-ratelimit-output-tokens-remaining": "0",
        "anthropic-ratelimit-output-tokens-reset": "2026-02-03T23:26:31.500Z",
    }
    assert retry_after_from_headers(headers, now=NOW) == pytest.approx(1.5)
    headers["anthropic-ratelimit-output-tokens-reset"] = "2026-02-03T23:00:00Z"
    assert retry_after_from_headers(headers, now=NOW) == 0.0  # exhausted, already reset


# --- rate_limit_info_from_headers


def test_openai_recording_reports_its_request_allowance() -> None:
    headers = recording("openai", "chat_tool_call_with_ratelimit_headers")["response"]["headers"]
    info = rate_limit_info_from_headers(headers)
    assert info == RateLimitInfo(
        limit_requests=30000, remaining_requests=29999, reset_requests=0.002
    )


def test_anthropic_recordings_report_their_request_allowance() -> None:
    headers = recording("anthropic", "tool_use_with_ratelimit_headers")["response"]["headers"]
    info = rate_limit_info_from_headers(headers, now=NOW)
    assert info == RateLimitInfo(
        limit_requests=4000, remaining_requests=3999, reset_requests=5.0, reset_is_time=True
    )
    full = recording("anthropic", "text_with_ratelimit_headers")["response"]["headers"]
    later = rate_limit_info_from_headers(full, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert later is not None
    assert later.reset_requests == 0.0  # a reset in the past


def test_no_rate_limit_headers_means_none() -> None:
    gemini = recording("google", "429_resource_exhausted")["response"]["headers"]
    assert rate_limit_info_from_headers(gemini) is None  # its "vary" value is even a list
    assert rate_limit_info_from_headers({}) is None
    assert rate_limit_info_from_headers(None) is None


def test_rate_limit_info_keeps_what_it_can_read() -> None:
    info = rate_limit_info_from_headers(
        httpx.Headers({"X-RateLimit-Remaining-Requests": "0", "X-RateLimit-Limit-Requests": "?"})
    )
    assert info == RateLimitInfo(limit_requests=None, remaining_requests=0, reset_requests=None)


# --- Gemini error bodies


def test_gemini_retry_info_and_daily_quota_from_the_recording() -> None:
    body = recording("google", "429_quota_failure_retryinfo_body")["response"]["body"]
    assert google_retry_delay(body) == 42.0
    assert google_retry_delay(body["error"]) == 42.0  # the inner error object works too
    assert google_quota_is_daily(body)


def test_gemini_short_429_has_neither() -> None:
    body = recording("google", "429_resource_exhausted")["response"]["body"]
    assert google_retry_delay(body) is None
    assert not google_quota_is_daily(body)


def _gemini_body(*details: Mapping[str, Any]) -> dict[str, Any]:
    return {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": list(details)}}


def test_gemini_retry_delay_forms() -> None:
    retry = "type.googleapis.com/google.rpc.RetryInfo"
    fine = _gemini_body({"@type": retry, "retryDelay": "3.598366221s"})
    assert google_retry_delay(fine) == pytest.approx(3.598366221)
    decoded = _gemini_body({"@type": retry, "retryDelay": {"seconds": 3, "nanos": 500_000_000}})
    assert google_retry_delay(decoded) == pytest.approx(3.5)
    assert google_retry_delay(_gemini_body({"@type": retry, "retryDelay": "later"})) is None
    assert google_retry_delay(_gemini_body({"@type": "x.Help", "retryDelay": "4s"})) is None
    assert google_retry_delay("429 RESOURCE_EXHAUSTED") is None
    assert google_retry_delay({"error": {"details": "none"}}) is None


def test_gemini_quota_is_daily_only_for_a_per_day_violation() -> None:
    failure = "type.googleapis.com/google.rpc.QuotaFailure"
    per_minute = {"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}
    assert not google_quota_is_daily(_gemini_body({"@type": failure, "violations": [per_minute]}))
    by_metric = {"quotaMetric": "generativelanguage.googleapis.com/requests_per_day"}
    assert google_quota_is_daily(_gemini_body({"@type": failure, "violations": [by_metric]}))
    assert not google_quota_is_daily(_gemini_body({"@type": failure, "violations": "x"}))
    assert not google_quota_is_daily(None)


# --- RetryPolicy: arguments


def test_retry_policy_defaults_and_no_retry_form() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.initial_delay, policy.max_delay) == (5, 0.5, 30.0)
    assert (policy.multiplier, policy.jitter, policy.max_retry_after) == (2.0, 0.1, None)
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
    ],
)
def test_retry_policy_rejects_bad_arguments(arguments: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint.replace("[", r"\[").replace("]", r"\]")):
        RetryPolicy(**arguments)


# --- tenacity strategies, on hand-built states


def make_state(
    attempt: int = 1, *, error: BaseException | None = None, upcoming_sleep: float = 0.0
) -> RetryCallState:
    state = RetryCallState(retry_object=AsyncRetrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    if error is None:
        state.set_result("ok")
    else:
        state.set_exception((type(error), error, None))
    state.upcoming_sleep = upcoming_sleep
    return state


@dataclass
class FakeDeadline:
    left: float

    def remaining(self) -> float:
        return self.left


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


def test_stop_on_long_retry_after() -> None:
    stop = StopOnLongRetryAfter(30.0)
    assert stop(make_state(error=throttled(retry_after=60.0)))
    assert not stop(make_state(error=throttled(retry_after=30.0)))
    assert not stop(make_state(error=throttled()))
    assert not stop(make_state(error=ValueError()))


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
    assert caught.value.details.retry_after == 5.0  # the caller sees what was asked
    assert caught.value.details.attempts == 1


async def test_the_deadline_allows_the_retries_that_fit() -> None:
    sleeps = Sleeps()
    script = Script([throttled(), throttled(), "never"])
    with pytest.raises(ThrottleError) as caught:
        await NO_JITTER.call(script, deadline=FakeDeadline(0.9), sleep=sleeps)
    assert sleeps.waits == [0.5]  # the next wait (1.0 s) would have ended past it
    assert caught.value.details.attempts == 2


async def test_max_retry_after_gives_up_on_long_asks() -> None:
    policy = RetryPolicy(max_retry_after=30.0, jitter=0.0)
    script = Script([throttled(retry_after=60.0), "never"])
    with pytest.raises(ThrottleError) as caught:
        await policy.call(script, sleep=Sleeps())
    assert caught.value.details.retry_after == 60.0
    assert script.calls == 1


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


# --- RequestPacer, on a fake clock


@dataclass
class FakeClock:
    now: float = 100.0
    slept: list[float] = field(default_factory=list[float])

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def fake_pacer() -> tuple[RequestPacer, FakeClock]:
    clock = FakeClock()
    return RequestPacer(clock=clock, sleep=clock.sleep, initial_window=0), clock


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
    headers = recording("anthropic", "text_with_ratelimit_headers")["response"]["headers"]
    assert headers["retry-after"] == "5"
    pacer, _ = fake_pacer()
    pacer.answered(rate_limit_info_from_headers(headers))
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


def test_the_reset_header_says_whether_it_is_a_clock_time() -> None:
    now = datetime(2025, 11, 4, 22, 50, 54, tzinfo=UTC)
    anthropic = rate_limit_info_from_headers(
        {
            "anthropic-ratelimit-requests-limit": "1",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2025-11-04T22:50:54.010Z",
        },
        now=now,
    )
    openai = rate_limit_info_from_headers(
        {
            "x-ratelimit-limit-requests": "1",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "10ms",
        },
        now=now,
    )
    assert anthropic is not None
    assert anthropic.reset_is_time
    assert anthropic.reset_requests == pytest.approx(0.010)
    assert openai is not None
    assert not openai.reset_is_time


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
    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(pacer.acquire())
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert failures == []
    assert time.monotonic() - started >= 0.05


# --- RequestPacer, simulated: 100 req/s, burst 1, 50 requests in flight


class _VirtualSelector(selectors.DefaultSelector):
    """Never blocks: a wait for a timer moves the virtual clock to it instead."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and timeout > 0:
            self.now += math.ceil(timeout * 1000) / 1000  # epoll waits whole milliseconds
        return super().select(0)


@contextmanager
def virtual_time_loop(seed: int) -> Generator[asyncio.AbstractEventLoop]:
    """An event loop on a virtual clock, with the global `random` seeded (and restored)."""
    selector = _VirtualSelector()
    loop = asyncio.SelectorEventLoop(selector)
    loop.time = lambda: selector.now  # type: ignore[method-assign]
    state = random.getstate()
    random.seed(seed)
    try:
        yield loop
    finally:
        random.setstate(state)
        loop.close()


class TokenBucket:
    """The provider: a token bucket that answers 429 with an honest wait."""

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self.tokens = 1.0
        self.updated = 0.0
        self.throttled = 0

    def take(self, now: float) -> tuple[int, dict[str, str]]:
        self.tokens = min(1.0, self.tokens + (now - self.updated) * self.per_second)
        self.updated = now
        headers = {"x-ratelimit-limit-requests": "1"}
        if self.tokens >= 1.0 - 1e-9:
            self.tokens = 0.0
            status = 200
        else:
            wait_ms = math.ceil((1.0 - self.tokens) / self.per_second * 1000)
            headers["retry-after-ms"] = str(wait_ms)
            self.throttled += 1
            status = 429
        reset_ms = math.ceil((1.0 - self.tokens) / self.per_second * 1000 - 1e-9)
        headers["x-ratelimit-remaining-requests"] = str(math.floor(self.tokens + 1e-9))
        headers["x-ratelimit-reset-requests"] = f"{reset_ms}ms"
        return status, headers


def simulate(*, pace: bool, seed: int = 7) -> tuple[float, int, int]:
    """(wall time, 429s, failed requests) for 300 requests, 50 at a time, 2-3 ms away."""
    with virtual_time_loop(seed) as loop:
        bucket = TokenBucket(per_second=100.0)
        pacer = RequestPacer(clock=loop.time)
        policy = RetryPolicy(max_attempts=5 if pace else 50)
        network = random.Random(seed)

        async def request() -> None:  # what an adapter does around one SDK call
            if pace and not pacer.idle:
                await pacer.acquire()
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            status, headers = bucket.take(loop.time())
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            if status == 429:
                retry_after = retry_after_from_headers(headers)
                if pace:
                    pacer.throttled(retry_after)
                raise ThrottleError(
                    "HTTP 429",
                    prompt_name="sim",
                    details=ThrottleDetails(kind="rate_limit", retry_after=retry_after),
                )
            if pace:
                pacer.answered(rate_limit_info_from_headers(headers))

        jobs = iter(range(300))
        failed = 0

        async def worker() -> None:
            nonlocal failed
            for _ in jobs:
                try:
                    await policy.call(request)
                except ThrottleError:
                    failed += 1

        async def run_all() -> float:
            await asyncio.gather(*(worker() for _ in range(50)))
            return loop.time()

        wall = run(loop, run_all)
        return wall, bucket.throttled, failed


def run(loop: asyncio.AbstractEventLoop, main: Callable[[], Coroutine[Any, Any, float]]) -> float:
    return loop.run_until_complete(main())


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
