"""Deadlines and budgets: the two limits an evaluation checks before every step."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from .errors import (
    ConfigurationError,
    DeadlineExceededError,
    InvalidArgumentError,
    PromptEvaluationError,
)
from .messages import Usage

__all__ = ["Budget", "BudgetTracker", "Deadline"]


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point in time the evaluation must finish by.

    `at` is a timezone-aware `datetime`, or a number of seconds from now. Time is kept
    on the monotonic clock so a wall-clock jump cannot extend or cut it.
    """

    at: datetime | float
    _expires: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.at, datetime):
            if self.at.tzinfo is None:
                raise ConfigurationError("Deadline(at=datetime) needs a timezone-aware datetime")
            seconds = (self.at - datetime.now(UTC)).total_seconds()
        else:
            at = cast(object, self.at)
            if not isinstance(at, int | float) or isinstance(at, bool):
                raise InvalidArgumentError(
                    f"Deadline(at=...) takes a datetime or seconds, not {at!r}", argument="at"
                )
            seconds = float(at)
            if math.isnan(seconds):
                raise ConfigurationError("Deadline(at=nan) is no point in time")
        object.__setattr__(self, "_expires", time.monotonic() + seconds)

    def remaining(self) -> float:
        """Seconds left; zero or negative once expired."""
        return self._expires - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, *, prompt_name: str | None = None, step: str = "step") -> None:
        """Raise `DeadlineExceededError` if no time is left for `step`."""
        remaining = self.remaining()
        if remaining <= 0:
            raise DeadlineExceededError(
                f"deadline passed {-remaining:.3f}s ago, before {step}", prompt_name=prompt_name
            )


@dataclass(frozen=True, slots=True)
class Budget:
    """Upper bounds on what one evaluation may spend; None means unbounded."""

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_requests: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_input_tokens", "max_output_tokens", "max_total_tokens", "max_requests"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ConfigurationError(
                    f"Budget.{name} must be a non-negative int, got {value!r}", option=name
                )


class BudgetTracker:
    """Accumulates usage of one evaluation and raises once its budget is spent."""

    __slots__ = ("budget", "prompt_name", "usage")

    def __init__(self, budget: Budget | None, *, prompt_name: str) -> None:
        self.budget = budget
        self.prompt_name = prompt_name
        self.usage = Usage()

    def before_request(self) -> None:
        budget = self.budget
        limit = budget.max_requests if budget is not None else None
        if limit is not None and self.usage.requests >= limit:
            self._fail(f"request limit of {limit} reached")

    def record(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        budget = self.budget
        if budget is None:
            return
        spent = self.usage
        for limit, value, what in (
            (budget.max_input_tokens, spent.input_tokens, "input tokens"),
            (budget.max_output_tokens, spent.output_tokens, "output tokens"),
            (budget.max_total_tokens, spent.total_tokens, "total tokens"),
        ):
            if limit is not None and value > limit:
                self._fail(f"{what} budget exceeded: {value} > {limit}")

    def _fail(self, message: str) -> None:
        spent = self.usage
        raise PromptEvaluationError(
            message,
            prompt_name=self.prompt_name,
            phase="budget",
            provider_payload={
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "requests": spent.requests,
            },
        )
