"""What an answer cost, in money: `Cost`, the `Prices` a user gives, and `PriceTag`.

A round's cost is worked out when first read, not when the answer arrives: genai-prices
takes a few tenths of a millisecond per answer, more than the rest of a round against a
local server, and most programs read the total once. A budget in money reads every
round's cost as it comes (`wink.core.foundation.limits`). `wink.core.foundation.pricing`
finds the prices; docs/cost.md says how.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .errors import ConfigurationError, InvalidArgumentError

__all__ = ["Cost", "PriceSource", "PriceTag", "Prices", "as_amount", "sum_costs"]

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class PriceSource:
    """Where the prices of a cost came from.

    `prices` names the source: `"genai-prices 0.2.3"` (its version), `"prices="` (the
    adapter's own), or `"billed"` (the host's billed figure: its `total` is the bill).
    `provider` and `model` are what the prices were matched to (genai-prices' ids), or
    the model that answered, for the adapter's own prices.
    """

    prices: str
    provider: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class Cost:
    """What one answer, or a whole evaluation, cost; every amount a `Decimal` in `currency`.

    `total` is the bill; the parts are the input tokens read at the full input rate
    (`input`), those read from the prompt cache (`cached_input`), those written to it
    (`cache_write`), and the output, reasoning included (`output`). The parts add up to
    the total, except for fees that are not per token (a request fee), which are in the
    total alone, and a host's billed figure (`PriceSource.prices == "billed"`), which
    replaces the total. `sources` says where the prices came from, one entry per source.
    Two costs add (`response.cost` is the sum of its rounds').
    """

    total: Decimal
    input: Decimal = _ZERO
    cached_input: Decimal = _ZERO
    cache_write: Decimal = _ZERO
    output: Decimal = _ZERO
    currency: str = "USD"
    sources: tuple[PriceSource, ...] = ()

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):  # pyright: ignore[reportUnnecessaryIsInstance]
            return NotImplemented
        if other.currency != self.currency:
            raise ConfigurationError(
                f"cannot add a cost in {other.currency} to one in {self.currency}",
                option="prices",
            )
        return Cost(
            total=self.total + other.total,
            input=self.input + other.input,
            cached_input=self.cached_input + other.cached_input,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
            currency=self.currency,
            sources=tuple(dict.fromkeys((*self.sources, *other.sources))),
        )

    def __str__(self) -> str:
        symbol = "$" if self.currency == "USD" else f"{self.currency} "
        return f"{symbol}{self.total:.6f}"


def sum_costs(costs: Sequence[Cost | None]) -> Cost | None:
    """The sum of several costs; None if any is None (a sum with a hole is no total)."""
    if not costs:
        return Cost(_ZERO)
    total: Cost | None = None
    for cost in costs:
        if cost is None:
            return None
        total = cost if total is None else total + cost
    return total


def as_amount(value: object, what: str, option: str) -> Decimal:
    """An amount of money (a rate, a limit) as a Decimal: an int, a str or a Decimal (a
    float via its shortest repr, so 0.15 is 0.15); refused with a `ConfigurationError`
    naming `what` when negative, not finite or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ConfigurationError(
            f"{what} must be an amount (a Decimal, an int, a str), got {value!r}", option=option
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigurationError(f"{what} must be finite, got {value!r}", option=option)
    try:
        amount = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        raise ConfigurationError(
            f"{what} must be an amount, got {value!r}", option=option
        ) from None
    if not amount.is_finite() or amount < 0:
        raise ConfigurationError(
            f"{what} must be a finite amount of 0 or more, got {value!r}", option=option
        )
    return amount


@dataclass(frozen=True, slots=True)
class Prices:
    """Your own prices, per million tokens, for a model genai-prices does not know or
    prices otherwise (a fine-tune, a private deployment, a negotiated rate):
    `create_adapter(..., prices=Prices(input="0.30", output="1.20"))`. They win over
    genai-prices for that adapter.

    `cached_input` (tokens read from the prompt cache) and `cache_write` (tokens written
    to it) default to the `input` rate. Rates are `Decimal`s (an int, a str or a float is
    taken as written); a batch item is billed half (as the batch APIs bill).
    """

    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None
    cache_write: Decimal | None = None
    currency: str = "USD"

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write"):
            value = getattr(self, name)
            if value is not None or name in ("input", "output"):
                object.__setattr__(self, name, as_amount(value, f"Prices.{name}", "prices"))
        currency = self.currency
        if not isinstance(currency, str) or not currency.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"Prices.currency must be a currency code such as 'USD', got {currency!r}",
                option="prices",
            )

    def cost(
        self,
        input_tokens: int,
        cached_tokens: int,
        cache_write_tokens: int,
        output_tokens: int,
        source: PriceSource,
    ) -> Cost:
        """What these token counts cost at these prices (`input_tokens` includes the
        cached and written ones, wink's `Usage` rule)."""
        counts = {
            "input_tokens": input_tokens,
            "cached_tokens": cached_tokens,
            "cache_write_tokens": cache_write_tokens,
            "output_tokens": output_tokens,
        }
        for name, count in counts.items():
            if type(count) is not int or count < 0:
                raise InvalidArgumentError(
                    f"{name} must be an int >= 0, got {count!r}", argument=name
                )
        if cached_tokens + cache_write_tokens > input_tokens:
            raise InvalidArgumentError(
                "input_tokens includes the cached and written ones: it cannot be fewer, got "
                f"{input_tokens} with {cached_tokens} cached and {cache_write_tokens} written",
                argument="input_tokens",
            )
        if not isinstance(source, PriceSource):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidArgumentError(
                f"source must be a PriceSource, got {source!r}", argument="source"
            )
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        write_rate = self.cache_write if self.cache_write is not None else self.input
        million = Decimal(1_000_000)
        fresh = max(input_tokens - cached_tokens - cache_write_tokens, 0)
        parts = (
            fresh * self.input / million,
            cached_tokens * cached_rate / million,
            cache_write_tokens * write_rate / million,
            output_tokens * self.output / million,
        )
        return Cost(sum(parts, _ZERO), *parts, currency=self.currency, sources=(source,))


class PriceTag:
    """A round's cost, worked out on first read (`cost`) and kept.

    `compute` is called at most once (a few tenths of a millisecond with genai-prices).
    `PriceTag.of(tags)` is the sum of several tags, worked out when read too.
    """

    __slots__ = ("_compute", "_cost", "_done")

    def __init__(self, compute: Callable[[], Cost | None]) -> None:
        self._compute = compute
        self._cost: Cost | None = None
        self._done = False

    @property
    def cost(self) -> Cost | None:
        if not self._done:
            self._cost = self._compute()
            self._done = True
        return self._cost

    def __repr__(self) -> str:
        return f"PriceTag({self._cost!r})" if self._done else "PriceTag(<not read yet>)"

    @classmethod
    def of(cls, tags: Sequence[PriceTag | None]) -> PriceTag:
        """The sum of `tags` (None: a round nothing priced, so the sum is None too)."""
        kept = tuple(tags)
        return cls(lambda: sum_costs([tag.cost if tag is not None else None for tag in kept]))
