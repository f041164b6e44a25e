"""Deadlines and budgets: the two limits an evaluation checks before every step."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import cast

from .cost import PriceTag, as_amount
from .errors import (
    BudgetExceededError,
    ConfigurationError,
    DeadlineExceededError,
    InvalidArgumentError,
)
from .messages import Usage

__all__ = [
    "DEFAULT_MAX_OUTPUT_RETRIES",
    "DEFAULT_MAX_ROUNDS",
    "Budget",
    "BudgetTracker",
    "Deadline",
]

DEFAULT_MAX_ROUNDS = 50
"""Model turns an evaluation may take: a model that never stops calling tools must not
run forever. Here, not in the loop, so that an adapter knows it without importing it."""

DEFAULT_MAX_OUTPUT_RETRIES = 2
"""How many times a model may correct a structured answer that did not validate."""


_YEAR = 365 * 24 * 3600.0
"""The furthest a deadline given in seconds may be: more is a timestamp by mistake."""


@dataclass(frozen=True, slots=True, repr=False)
class Deadline:
    """A point in time the evaluation must finish by.

    Say which form you mean: `Deadline.after(30)` or `Deadline.after(timedelta(minutes=2))`
    counts from now, `Deadline.at_time(datetime(..., tzinfo=UTC))` is a moment on the
    clock. `Deadline(x)` also works, for seconds from now or an aware datetime; a number
    that is negative or more than a year away (`time.time() + 30` is 56 years away) is
    refused, not taken at its word. 0 is a deadline that has already passed. Time is
    kept on the monotonic clock, so a wall-clock jump cannot extend or cut it.
    """

    at: datetime | float
    _expires: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        at = cast(object, self.at)
        if isinstance(at, datetime):
            seconds = _until(at, "Deadline(at=datetime)")
        elif isinstance(at, timedelta):
            raise InvalidArgumentError(
                "Deadline(at=...) takes seconds or a datetime; for a timedelta use "
                "Deadline.after(timedelta(...))",
                argument="at",
            )
        else:
            seconds = _seconds_from_now(at, "Deadline")
        object.__setattr__(self, "_expires", time.monotonic() + seconds)

    @classmethod
    def after(cls, wait: float | timedelta) -> Deadline:
        """The deadline `wait` from now: seconds (an int or a float) or a `timedelta`."""
        if isinstance(cast(object, wait), datetime):
            raise InvalidArgumentError(
                "Deadline.after(...) takes seconds or a timedelta; for a point in time use "
                "Deadline.at_time(datetime)",
                argument="wait",
            )
        if isinstance(wait, timedelta):
            return cls(_seconds_from_now(wait.total_seconds(), "Deadline.after", shown=wait))
        return cls(_seconds_from_now(wait, "Deadline.after"))

    @classmethod
    def at_time(cls, when: datetime) -> Deadline:
        """The deadline at `when`, a timezone-aware datetime (one already past is expired).

        From a Unix timestamp: `Deadline.at_time(datetime.fromtimestamp(ts, UTC))`."""
        if not isinstance(cast(object, when), datetime):
            raise InvalidArgumentError(
                "Deadline.at_time(...) takes a timezone-aware datetime, got "
                f"{type(when).__name__}; for seconds from now use Deadline.after(seconds)",
                argument="when",
            )
        _until(when, "Deadline.at_time(datetime)")
        return cls(when)

    def __repr__(self) -> str:
        remaining = self.remaining()
        if remaining > 0:
            return f"Deadline(remaining={remaining:.1f}s)"
        return f"Deadline(expired {-remaining:.1f}s ago)"

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


def _until(when: datetime, call: str) -> float:
    """Seconds from now to an aware datetime."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise ConfigurationError(
            f"{call} needs a timezone-aware datetime, e.g. datetime.now(UTC) + timedelta(...)",
            option="at",
        )
    return (when - datetime.now(UTC)).total_seconds()


def _seconds_from_now(value: object, call: str, *, shown: object = None) -> float:
    """A number of seconds from now, refused when it cannot have been meant as one
    (`shown`: what the caller gave, when it was not this number)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidArgumentError(
            f"{call}(...) takes seconds from now (a number), got {type(value).__name__}; "
            "a point in time is Deadline.at_time(datetime)",
            argument="at",
        )
    seconds = float(value)
    given = f"{call}({value if shown is None else shown!r})"
    if math.isnan(seconds):
        raise ConfigurationError(f"{given} is no point in time", option="at")
    if seconds < 0:
        raise ConfigurationError(
            f"{given}: a wait cannot be negative (0 is a deadline already passed); for a "
            "moment in the past use Deadline.at_time(datetime)",
            option="at",
        )
    if seconds > _YEAR:
        if math.isinf(seconds):
            hint = "; for no deadline pass deadline=None"
        elif shown is None:
            hint = ": a number is seconds from now" + (
                "; if it is a Unix timestamp, use "
                f"Deadline.at_time(datetime.fromtimestamp({value!r}, UTC))"
                if seconds > 1e9
                else ""
            )
        else:
            hint = ""
        raise ConfigurationError(f"{given} is more than a year from now{hint}", option="at")
    return seconds


@dataclass(frozen=True, slots=True)
class Budget:
    """Upper bounds on what one evaluation may spend; None means unbounded.

    `max_cost` is money, in the currency of the prices (USD for genai-prices'):
    `Budget(max_cost=Decimal("0.50"))`. No round starts once the evaluation has spent it,
    and the round that goes past it ends the evaluation (`BudgetExceededError`). Every
    model that may answer needs a price (docs/cost.md): one without is a
    `ConfigurationError` before the first request.
    """

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_requests: int | None = None
    max_cost: Decimal | None = None

    def __post_init__(self) -> None:
        for name in ("max_input_tokens", "max_output_tokens", "max_total_tokens", "max_requests"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ConfigurationError(
                    f"Budget.{name} must be a non-negative int, got {value!r}", option=name
                )
        if self.max_cost is not None:
            amount = as_amount(self.max_cost, "Budget.max_cost", "max_cost")
            object.__setattr__(self, "max_cost", amount)


class BudgetTracker:
    """Accumulates usage of one evaluation and raises once its budget is spent.

    Each round's price tag is kept (`price_tag` is their sum, read when asked); with a
    `max_cost`, each round's cost is read as it comes and added up (`spent`)."""

    __slots__ = ("_tags", "budget", "prompt_name", "spent", "usage")

    def __init__(self, budget: Budget | None, *, prompt_name: str) -> None:
        self.budget = budget
        self.prompt_name = prompt_name
        self.usage = Usage()
        self.spent = Decimal(0)
        self._tags: list[PriceTag | None] = []

    @property
    def price_tag(self) -> PriceTag:
        """The evaluation's cost so far: the rounds' costs added up, when read."""
        return PriceTag.of(self._tags)

    def resume(self, usage: Usage, tag: PriceTag | None) -> None:
        """Go on from an evaluation stopped earlier (a batch round), which used `usage`
        at the cost `tag`."""
        self.usage = usage
        self._tags = [tag]
        if self.budget is not None and self.budget.max_cost is not None:
            cost = tag.cost if tag is not None else None
            self.spent = cost.total if cost is not None else Decimal(0)

    def before_request(self) -> None:
        budget = self.budget
        if budget is None:
            return
        limit = budget.max_requests
        if limit is not None and self.usage.requests >= limit:
            self._fail(f"request limit of {limit} reached")
        most = budget.max_cost
        if most is not None and self.spent >= most:
            self._fail(f"cost budget of {most} spent ({self.spent}): no new round starts")

    def record(self, usage: Usage, tag: PriceTag | None = None) -> None:
        self.usage = self.usage + usage
        self._tags.append(tag)
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
        most = budget.max_cost
        if most is not None:
            cost = tag.cost if tag is not None else None
            if cost is None:
                raise ConfigurationError(
                    "Budget(max_cost=...) needs every answer priced, and this one has no "
                    "price (its model is not in genai-prices): give the adapter "
                    "prices=Prices(...) (docs/cost.md)",
                    option="prices",
                )
            self.spent += cost.total
            if self.spent > most:
                self._fail(f"cost budget exceeded: {self.spent} > {most}")

    def _fail(self, message: str) -> None:
        spent = self.usage
        raise BudgetExceededError(
            message,
            prompt_name=self.prompt_name,
            usage=spent,
            price_tag=self.price_tag,
            provider_payload={
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "requests": spent.requests,
            },
        )
