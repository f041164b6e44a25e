"""Deadlines and budgets (`wink.core.foundation.limits`): the two limits an evaluation checks before
every step."""

from __future__ import annotations

import dataclasses
import math
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from wink import (
    Budget,
    ConfigurationError,
    Deadline,
    DeadlineExceededError,
    InvalidArgumentError,
    PromptEvaluationError,
    Usage,
)
from wink.core.foundation.limits import BudgetTracker

# --- Deadline


def test_a_deadline_in_seconds_counts_down() -> None:
    deadline = Deadline(at=30)
    assert 0 < deadline.remaining() <= 30
    assert not deadline.expired()
    deadline.check(prompt_name="p")  # time left: nothing raised


def test_a_deadline_at_an_aware_datetime_counts_down_to_it() -> None:
    deadline = Deadline(at=datetime.now(UTC) + timedelta(minutes=5))
    assert 240 < deadline.remaining() <= 300
    past = Deadline(at=datetime.now(UTC) - timedelta(seconds=1))
    assert past.expired()


def test_a_passed_deadline_says_how_long_ago_and_before_what() -> None:
    deadline = Deadline.at_time(datetime.now(UTC) - timedelta(seconds=2.5))
    assert deadline.expired()
    assert deadline.remaining() <= -2.5
    with pytest.raises(DeadlineExceededError, match=r"deadline passed 2\.5\d*s ago, before tools"):
        deadline.check(prompt_name="p", step="tools")


def test_zero_seconds_is_a_deadline_already_passed() -> None:
    assert Deadline(0).expired()
    assert Deadline.after(0).expired()


def test_after_counts_seconds_or_a_timedelta_from_now() -> None:
    assert 0 < Deadline.after(30).remaining() <= 30
    assert 30 < Deadline.after(timedelta(minutes=2)).remaining() <= 120
    assert Deadline.after(timedelta(seconds=10)) == Deadline(10)  # the same request


def test_at_time_is_a_moment_on_the_clock() -> None:
    when = datetime.now(UTC) + timedelta(minutes=5)
    assert 240 < Deadline.at_time(when).remaining() <= 300
    assert Deadline.at_time(when) == Deadline(when)
    stamp = time.time() + 60  # a Unix timestamp, as the error message says to convert it
    assert 0 < Deadline.at_time(datetime.fromtimestamp(stamp, UTC)).remaining() <= 60


def test_a_unix_timestamp_given_as_seconds_is_refused_with_the_way_to_say_it() -> None:
    stamp = time.time() + 1  # meant "in one second": taken as seconds, 56 years away
    with pytest.raises(ConfigurationError) as info:
        Deadline(stamp)
    message = str(info.value)
    assert "more than a year from now: a number is seconds from now" in message
    assert f"Deadline.at_time(datetime.fromtimestamp({stamp!r}, UTC))" in message
    with pytest.raises(ConfigurationError, match="Unix timestamp"):
        Deadline.after(stamp)


@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        (lambda: Deadline(-1), r"Deadline\(-1\): a wait cannot be negative"),
        (lambda: Deadline(-0.001), "cannot be negative"),
        (lambda: Deadline.after(-5), r"Deadline.after\(-5\): a wait cannot be negative"),
        (lambda: Deadline.after(timedelta(seconds=-1)), "a wait cannot be negative"),
        (lambda: Deadline(400 * 24 * 3600), "more than a year from now"),
        (
            lambda: Deadline.after(timedelta(days=400)),
            r"timedelta\(days=400\)\) is more than a year",
        ),
        (lambda: Deadline(math.inf), "for no deadline pass deadline=None"),
        (lambda: Deadline(math.nan), "is no point in time"),
    ],
)
def test_implausible_numbers_are_refused(make: Any, complaint: str) -> None:
    with pytest.raises(ConfigurationError, match=complaint) as info:
        make()
    assert info.value.option == "at"


def test_up_to_a_year_is_accepted() -> None:
    assert Deadline(365 * 24 * 3600).remaining() > 0


def test_a_naive_datetime_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        Deadline(at=datetime(2030, 1, 1))
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        Deadline.at_time(datetime(2030, 1, 1))


@pytest.mark.parametrize("at", ["10", None, True, timedelta(seconds=5)])
def test_anything_but_a_datetime_or_seconds_is_refused(at: Any) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        Deadline(at=at)
    assert info.value.argument == "at"


def test_each_constructor_points_to_the_other_for_the_other_form() -> None:
    with pytest.raises(InvalidArgumentError, match=r"use Deadline.after\(timedelta"):
        Deadline(timedelta(seconds=5))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"use Deadline.at_time\(datetime\)"):
        Deadline.after(datetime.now(UTC))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"use Deadline.after\(seconds\)"):
        Deadline.at_time(30)  # type: ignore[arg-type]


def test_the_repr_shows_the_time_left() -> None:
    shown = re.fullmatch(r"Deadline\(remaining=(\d+\.\d)s\)", repr(Deadline(12.3)))
    assert shown is not None
    assert 0 < float(shown[1]) <= 12.3
    past = Deadline.at_time(datetime.now(UTC) - timedelta(seconds=3))
    gone = re.fullmatch(r"Deadline\(expired (\d+\.\d)s ago\)", repr(past))
    assert gone is not None
    assert float(gone[1]) >= 3.0


def test_a_deadline_is_a_frozen_value_that_compares_by_what_was_asked() -> None:
    deadline = Deadline(at=10)
    assert deadline == Deadline(at=10)  # made at different instants, equal all the same
    assert "_expires" not in repr(deadline)
    with pytest.raises(dataclasses.FrozenInstanceError):
        deadline.at = 20  # type: ignore[misc]


# --- Budget


@pytest.mark.parametrize(
    "field", ["max_input_tokens", "max_output_tokens", "max_total_tokens", "max_requests"]
)
@pytest.mark.parametrize("value", [-1, 1.5, True, "10"])
def test_a_budget_limit_is_a_non_negative_int(field: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=f"Budget.{field} must be a non-negative int"):
        Budget(**{field: value})


def test_no_budget_spends_freely_and_still_counts() -> None:
    tracker = BudgetTracker(None, prompt_name="p")
    for _ in range(3):
        tracker.before_request()
        tracker.record(Usage(input_tokens=10_000, output_tokens=5, requests=1))
    assert tracker.usage == Usage(input_tokens=30_000, output_tokens=15, requests=3)


def test_the_request_limit_stops_the_request_after_the_last_allowed() -> None:
    tracker = BudgetTracker(Budget(max_requests=2), prompt_name="p")
    for _ in range(2):
        tracker.before_request()
        tracker.record(Usage(input_tokens=7, output_tokens=3, requests=1))
    with pytest.raises(PromptEvaluationError) as info:
        tracker.before_request()
    error = info.value
    assert (error.phase, error.prompt_name) == ("budget", "p")
    assert "request limit of 2 reached" in str(error)
    assert error.provider_payload == {"input_tokens": 14, "output_tokens": 6, "requests": 2}


@pytest.mark.parametrize(
    ("budget", "what"),
    [
        (Budget(max_input_tokens=100), "input tokens budget exceeded: 101 > 100"),
        (Budget(max_output_tokens=20), "output tokens budget exceeded: 21 > 20"),
        (Budget(max_total_tokens=120), "total tokens budget exceeded: 122 > 120"),
    ],
)
def test_token_limits_allow_the_limit_and_stop_past_it(budget: Budget, what: str) -> None:
    tracker = BudgetTracker(budget, prompt_name="p")
    tracker.record(Usage(input_tokens=100, output_tokens=20, requests=1))  # at the limits
    with pytest.raises(PromptEvaluationError, match=what) as info:
        tracker.record(Usage(input_tokens=1, output_tokens=1, requests=1))
    assert info.value.phase == "budget"
