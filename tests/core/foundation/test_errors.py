"""The exception tree: documented in errors.py's docstring, with fields and readable text."""

from __future__ import annotations

import dataclasses
import math
import pickle
import time
from datetime import timedelta
from typing import Any, get_args

import pytest

import wink
from wink.core.foundation import errors
from wink.core.foundation.errors import (
    CircularDependencyError,
    PromptEvaluationError,
    PromptValidationError,
    ThrottleDetails,
    ThrottleError,
    VisibilityExpansionRequired,
    WinkError,
)


def _documented_tree() -> dict[str, str]:
    """child -> parent, read from the bullet list in the module docstring."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        stripped = line.lstrip()
        if stripped[:2] not in {"* ", "- ", "+ "}:
            continue
        depth = len(line) - len(stripped)
        name = stripped[2:].strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


def _actual_tree() -> dict[str, str]:
    parents: dict[str, str] = {}

    def walk(cls: type[BaseException]) -> None:
        for sub in cls.__subclasses__():
            if sub.__module__ == errors.__name__:
                parents[sub.__name__] = cls.__name__
                walk(sub)

    walk(WinkError)
    return parents


def test_docstring_tree_matches_classes() -> None:
    assert _documented_tree() == _actual_tree()


def test_every_error_is_exported_from_wink() -> None:
    for name in _actual_tree():
        assert getattr(wink, name) is getattr(errors, name)


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (errors.ToolValidationError, (WinkError, ValueError)),
        (errors.DeadlineExceededError, (WinkError, RuntimeError)),
        (errors.SnapshotError, (WinkError, RuntimeError)),
        (errors.SnapshotRestoreError, (errors.SnapshotError,)),
        (errors.TransactionError, (WinkError, RuntimeError)),
        (errors.RestoreFailedError, (errors.TransactionError,)),
        (errors.PromptValidationError, (errors.PromptError,)),
        (errors.PromptRenderError, (errors.PromptError,)),
        (errors.VisibilityExpansionRequired, (errors.PromptError,)),
        (ThrottleError, (PromptEvaluationError,)),
        (errors.BadRequestError, (PromptEvaluationError,)),
        (errors.ContextWindowExceededError, (errors.BadRequestError, PromptEvaluationError)),
        (errors.AuthenticationError, (PromptEvaluationError,)),
        (errors.PermissionDeniedError, (PromptEvaluationError,)),
        (errors.NotFoundError, (PromptEvaluationError,)),
        (errors.ContentFilteredError, (PromptEvaluationError,)),
        (errors.OutputTruncatedError, (PromptEvaluationError,)),
        (errors.RefusalError, (PromptEvaluationError,)),
        (errors.UnsendableValueError, (WinkError, ValueError)),
        (errors.UnboundResourceError, (errors.ResourceError,)),
        (errors.CircularDependencyError, (errors.ResourceError,)),
        (errors.DuplicateBindingError, (errors.ResourceError,)),
        (errors.ProviderError, (errors.ResourceError,)),
    ],
)
def test_bases_follow_the_design_table(cls: type, bases: tuple[type, ...]) -> None:
    for base in bases:
        assert issubclass(cls, base)
    assert issubclass(cls, WinkError)


def test_prompt_error_fields_and_text() -> None:
    error = PromptValidationError(
        "unknown placeholder", section_path=["guide", "intro"], placeholder="x", dataclass_type=int
    )
    assert error.section_path == ("guide", "intro")
    assert error.placeholder == "x"
    assert error.dataclass_type is int
    assert str(error) == "unknown placeholder (section guide.intro)"
    assert "placeholder='x'" in repr(error)


def test_evaluation_error_reads_like_a_sentence() -> None:
    error = PromptEvaluationError(
        "HTTP 400: bad", prompt_name="p", phase="request", provider_payload={"code": "x"}
    )
    assert str(error) == "request failed for prompt 'p': HTTP 400: bad"
    assert error.provider_payload == {"code": "x"}
    assert "phase='request'" in repr(error)


def test_evaluation_errors_carry_the_neutral_answer_fields() -> None:
    plain = PromptEvaluationError("boom", prompt_name="p", phase="tool")
    assert (plain.status_code, plain.finish_reason, plain.refusal, plain.partial_text) == (
        None,
        None,
        None,
        None,
    )
    refused = errors.RefusalError(
        "the model refused to answer",
        prompt_name="p",
        phase="response",
        status_code=200,
        finish_reason="refusal",
        refusal="No.",
        partial_text="I was about to",
    )
    assert (refused.status_code, refused.finish_reason) == (200, "refusal")
    assert (refused.refusal, refused.partial_text) == ("No.", "I was about to")
    assert "status_code=200" in repr(refused)
    missing = errors.NotFoundError("HTTP 404: no model", prompt_name="p", model="gpt-9")
    assert (missing.phase, missing.status_code, missing.model) == ("request", 404, "gpt-9")


def test_a_throttle_status_is_its_details_status() -> None:
    details = ThrottleDetails("rate_limit", status_code=429)
    assert ThrottleError("HTTP 429", prompt_name="p", details=details).status_code == 429
    timed_out = ThrottleError("x", prompt_name="p", details=ThrottleDetails("timeout"))
    assert timed_out.status_code is None


def test_connection_is_a_throttle_kind_of_its_own() -> None:
    assert "connection" in get_args(errors.ThrottleKind)
    assert ThrottleDetails("connection").retry_safe


def test_throttle_error_says_kind_attempts_and_wait() -> None:
    details = ThrottleDetails(kind="rate_limit", retry_after=1.5, attempts=3, retry_safe=True)
    error = ThrottleError("HTTP 429: slow down", prompt_name="p", details=details)
    assert error.phase == "request"
    assert (
        str(error)
        == "rate_limit for prompt 'p' after 3 attempts, retry after 1.5s: HTTP 429: slow down"
    )
    assert isinstance(error, PromptEvaluationError)


def test_visibility_and_cycle_fields() -> None:
    expansion = VisibilityExpansionRequired("open", requested_overrides={("a",): "full"})
    assert expansion.requested_overrides == {("a",): "full"}
    cycle = CircularDependencyError("A -> B -> A", cycle=[int, str, int])
    assert cycle.cycle == (int, str, int)
    assert cycle.protocol is int


def test_throttle_details_is_frozen_and_picklable() -> None:
    details = ThrottleDetails(kind="overloaded")
    with pytest.raises(AttributeError):
        details.kind = "timeout"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(details)) == details


# --- ThrottleDetails.retry_after is a timedelta


def test_retry_after_is_a_timedelta_that_documented_user_code_can_sleep_on() -> None:
    details = ThrottleDetails(kind="rate_limit", retry_after=0.001)
    assert details.retry_after == timedelta(milliseconds=1)
    assert details.retry_after_seconds == 0.001
    error = ThrottleError("HTTP 429", prompt_name="p", details=details)
    # the contract's own example, verbatim: it must run unchanged
    assert error.details.retry_after is not None
    time.sleep(error.details.retry_after.total_seconds())


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (2, timedelta(seconds=2)),
        (1.5, timedelta(seconds=1.5)),
        (0, timedelta(0)),
        (timedelta(minutes=1), timedelta(seconds=60)),
        (None, None),
    ],
)
def test_retry_after_accepts_seconds_or_a_timedelta(given: Any, stored: timedelta | None) -> None:
    details = ThrottleDetails("rate_limit", retry_after=given)
    assert details.retry_after == stored
    assert details.retry_after_seconds == (None if stored is None else stored.total_seconds())


@pytest.mark.parametrize(
    ("given", "error", "complaint"),
    [
        (-1, ValueError, "must not be negative"),
        (timedelta(seconds=-1), ValueError, "must not be negative"),
        (math.nan, ValueError, "must be a finite number"),
        (math.inf, ValueError, "must be a finite number"),
        (1e20, ValueError, "must be at most"),
        ("5", TypeError, "got str"),
        (True, TypeError, "got bool"),
    ],
)
def test_retry_after_rejects_what_is_not_a_wait(
    given: Any, error: type[Exception], complaint: str
) -> None:
    with pytest.raises(error, match=complaint):
        ThrottleDetails("rate_limit", retry_after=given)


def test_throttle_details_stays_a_frozen_slots_value() -> None:
    details = ThrottleDetails("rate_limit", 1.5, attempts=2, status_code=429)
    assert not hasattr(details, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        details.retry_after = None  # type: ignore[misc]
    assert details == ThrottleDetails("rate_limit", timedelta(seconds=1.5), 2, True, 429)
    assert dataclasses.replace(details, attempts=3).retry_after == timedelta(seconds=1.5)
    assert pickle.loads(pickle.dumps(details)) == details
    assert "retry_after=datetime.timedelta(seconds=1, microseconds=500000)" in repr(details)
