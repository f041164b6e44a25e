"""How an answer is priced: `Pricer`, one per adapter (docs/cost.md).

The prices are genai-prices' (pydantic's curated data, installed with wink and never
fetched: its optional refresh, `genai_prices.UpdatePrices`, is the application's own call),
matched by the model the provider answered with, under the provider id the provider or
host class names (`Host.system`), with the tier the answer ran on and the
batch discount. An adapter's own `Prices` win over genai-prices; a host's billed figure
(`Usage.billed_cost`) wins over both. A model nobody prices costs None, with one
`UnpricedModelWarning` per model per process: never a guess.

genai-prices is imported on the first price, not with wink.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from .cost import Cost, Prices, PriceSource, PriceTag
from .errors import ConfigurationError, UnpricedModelWarning

if TYPE_CHECKING:
    from .messages import ModelResponse, Usage

__all__ = ["Pricer"]

_BATCH_SHARE = Decimal("0.5")  # what the three batch APIs bill of the standard price
_warned: set[tuple[str | None, str]] = set()
_warned_lock = threading.Lock()


class Pricer:
    """Prices one adapter's answers: `provider` is genai-prices' provider id (None: it
    finds the provider from the model name), `model` the model asked for (the price of
    an answer that names none), `prices` the adapter's own (they win), `batch` whether
    its answers came through a batch API (billed half)."""

    __slots__ = ("batch", "model", "prices", "provider")

    def __init__(
        self,
        provider: str | None,
        model: str,
        prices: Prices | None = None,
        *,
        batch: bool = False,
    ) -> None:
        self.provider = provider
        self.model = model
        self.prices = prices
        self.batch = batch

    def __repr__(self) -> str:
        return f"Pricer(provider={self.provider!r}, model={self.model!r}, batch={self.batch})"

    def for_batch(self) -> Pricer:
        """This adapter's pricer for the answers of its batches."""
        return Pricer(self.provider, self.model, self.prices, batch=True)

    def tag(self, response: ModelResponse) -> ModelResponse:
        """`response` with its price tag: the cost is worked out when first read."""
        return replace(response, price_tag=self.price_tag(response))

    def price_tag(self, response: ModelResponse) -> PriceTag:
        """The price tag of `response` (for a caller that sets other fields with it)."""
        usage = response.usage
        model = response.model or self.model
        tier = response.service_tier
        answered = time.time()
        return PriceTag(lambda: self.cost(usage, model, tier, answered))

    def check(self) -> None:
        """Raise `ConfigurationError` unless the asked model has a price: a budget in
        money needs one before the first request, never a limit that cannot trip."""
        if self.prices is not None:
            return
        if _calculation(_genai_usage(None), self.model, self.provider, None, None) is None:
            raise ConfigurationError(
                f"Budget(max_cost=...) needs a price for {self.model!r}, and genai-prices "
                f"has none{_under(self.provider)}: give the adapter prices=Prices(...) "
                "(docs/cost.md)",
                option="prices",
            )

    def cost(self, usage: Usage, model: str, tier: str | None, answered: float) -> Cost | None:
        """What `usage` cost on `model`, answered at `answered` (a Unix time) on `tier`."""
        listed = self._listed(usage, model, tier, answered)
        if usage.billed_cost is None:
            return listed
        billed = Decimal(str(usage.billed_cost))  # the host's figure, as it wrote it
        source = PriceSource("billed", self.provider, model)
        if listed is None:
            return Cost(billed, sources=(source,))
        return Cost(
            billed,
            listed.input,
            listed.cached_input,
            listed.cache_write,
            listed.output,
            sources=(source,),
        )

    def _listed(self, usage: Usage, model: str, tier: str | None, answered: float) -> Cost | None:
        own = self.prices
        if own is not None:
            cost = own.cost(
                usage.input_tokens,
                usage.cached_tokens,
                usage.cache_write_tokens,
                usage.output_tokens,
                PriceSource("prices=", self.provider, model),
            )
            return _halved(cost) if self.batch else cost
        context: dict[str, str] = {}
        if tier:
            context["service_tier"] = tier
        if self.batch:
            context["processing"] = "batch"
        when = datetime.fromtimestamp(answered, UTC)
        counts = _genai_usage(usage)
        calculation = _calculation(counts, model, self.provider, when, context or None)
        if calculation is None:
            if usage.billed_cost is None:
                _warn_unpriced(self.provider, model)
            return None
        cost = _from_calculation(calculation, counts, usage)
        if self.batch and not _has_batch_prices(calculation):
            return _halved(cost)  # genai-prices has no batch rates for it: the APIs' rule
        return cost


# ---- genai-prices (imported on the first price)


def _genai() -> Any:
    import genai_prices

    return genai_prices


def _genai_usage(usage: Usage | None) -> Any:
    """wink's counts as genai-prices' `Usage`: the same rule (input includes the cache
    reads and writes, output the reasoning)."""
    genai = _genai()
    if usage is None:
        return genai.Usage()
    counts: dict[str, int] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }
    if usage.cached_tokens:
        counts["cache_read_tokens"] = usage.cached_tokens
    if usage.cache_write_tokens:
        counts["cache_write_tokens"] = usage.cache_write_tokens
    if usage.cache_write_1h_tokens:
        counts["cache_write_1h_tokens"] = usage.cache_write_1h_tokens
    if usage.reasoning_tokens:
        counts["output_reasoning_tokens"] = usage.reasoning_tokens
    return genai.Usage(**counts)


def _calculation(
    counts: Any,
    model: str,
    provider: str | None,
    when: datetime | None,
    context: dict[str, str] | None,
) -> Any:
    """genai-prices' `PriceCalculation`, or None when it knows no such model."""
    try:
        return _genai().calc_price(
            counts,
            model,
            provider_id=provider,
            genai_request_timestamp=when,
            price_context=context,
        )
    except LookupError:
        return None


def _from_calculation(calculation: Any, counts: Any, usage: Usage) -> Cost:
    """A `Cost` of genai-prices' calculation: its totals, and the cache parts priced by
    the same resolved prices with every other rate at 0 (so its own rules, tiers
    included, split them)."""
    price = calculation.model_price
    cached = _part(price, counts, "read") if usage.cached_tokens else Decimal(0)
    written = _part(price, counts, "write") if usage.cache_write_tokens else Decimal(0)
    genai = _genai()
    source = PriceSource(
        f"genai-prices {genai.__version__}", calculation.provider.id, calculation.model.id
    )
    return Cost(
        calculation.total_price,
        calculation.input_price - cached - written,
        cached,
        written,
        calculation.output_price,
        sources=(source,),
    )


def _part(price: Any, counts: Any, kind: str) -> Decimal:
    """What the cache `kind` ("read", "write") tokens cost under `price`."""
    from genai_prices.types import ModelPrice

    rates = cast(dict[str, Any], vars(price))
    kept: dict[str, Any] = {
        key: value if key.startswith("cache_") and f"_{kind}" in key else Decimal(0)
        for key, value in rates.items()
        if not key.startswith("_") and value is not None
    }
    return ModelPrice(**kept).calc_price(counts)["total_price"]


def _has_batch_prices(calculation: Any) -> bool:
    variants = calculation.model.price_variants or ()
    return any(variant.when.get("processing") == "batch" for variant in variants)


def _halved(cost: Cost) -> Cost:
    share = _BATCH_SHARE
    return Cost(
        cost.total * share,
        cost.input * share,
        cost.cached_input * share,
        cost.cache_write * share,
        cost.output * share,
        cost.currency,
        cost.sources,
    )


def _under(provider: str | None) -> str:
    return f" under provider {provider!r}" if provider else ""


def _warn_unpriced(provider: str | None, model: str) -> None:
    key = (provider, model)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(
        f"no price for model {model!r}{_under(provider)} in genai-prices: its cost is "
        "None; give the adapter prices=Prices(...) to price it (docs/cost.md)",
        UnpricedModelWarning,
        stacklevel=2,
    )
