"""`response.cost` equals genai-prices' own `calc_price` for the same usage and model, on
every provider wink speaks to; a `max_cost` budget stops a tool loop at the round that
crosses it, on every entry point."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from contextlib import ExitStack
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage, calc_price

from tests.helpers.google_auth import service_account
from wink import (
    Budget,
    BudgetExceededError,
    ConfigurationError,
    FallbackAdapter,
    MarkdownSection,
    Prices,
    Prompt,
    RoundFinished,
    Tool,
    ToolContext,
    ToolResult,
    UnpricedModelWarning,
    Usage,
    create_adapter,
)
from wink.core.foundation.pricing import Pricer
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

MODELS = {
    "openai": ("gpt-4.1", "openai"),
    "openai-responses": ("gpt-4.1", "openai"),
    "anthropic": ("claude-sonnet-4-5", "anthropic"),
    "google": ("gemini-2.5-flash", "google"),
}


@dataclass(frozen=True)
class CityParams:
    city: str


def _weather(params: CityParams, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok("sunny", message="sunny")


PROMPT = Prompt(
    name="weather",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Weather in Paris?",
            tools=[Tool(name="get_weather", description="Weather", handler=_weather)],
        )
    ],
)


def _expected(provider_id: str, model: str, **counts: int) -> Decimal:
    return calc_price(GenaiUsage(**counts), model, provider_id=provider_id).total_price


def _tool_turn(**usage: int) -> Turn:
    return Turn.tool_calls(EmulatedToolCall("get_weather", {"city": "Paris"}), **usage)


@pytest.mark.parametrize("provider", sorted(MODELS))
@pytest.mark.parametrize("streamed", [False, True])
def test_cost_is_genai_prices_own_for_each_round(provider: str, streamed: bool) -> None:
    model, provider_id = MODELS[provider]
    script = [
        _tool_turn(input_tokens=3000, output_tokens=400, cached_tokens=1000, reasoning_tokens=100),
        Turn.text("sunny", input_tokens=3500, output_tokens=50),
    ]
    with (
        ProviderEmulator(script) as emu,
        create_adapter(f"{provider}:{model}", base_url=emu.base_url(provider), api_key="k") as ad,
    ):
        if streamed:
            with ad.stream(PROMPT) as stream:
                rounds = [event for event in stream if isinstance(event, RoundFinished)]
            response = stream.response
            round_costs = [event.cost for event in rounds]
        else:
            response = ad.evaluate(PROMPT)
            round_costs = None
    first = _expected(
        provider_id,
        model,
        input_tokens=3000,
        output_tokens=400,
        cache_read_tokens=1000,
        output_reasoning_tokens=100,
    )
    second = _expected(provider_id, model, input_tokens=3500, output_tokens=50)
    assert response.cost is not None
    assert response.cost.total == first + second
    assert response.model == model
    cost = response.cost
    assert cost.input + cost.cached_input + cost.cache_write + cost.output == cost.total
    assert cost.cached_input > 0
    if round_costs is not None:
        assert [c.total if c else None for c in round_costs] == [first, second]


def test_anthropic_cache_writes_5m_and_1h_and_long_context_tier() -> None:
    pricer = Pricer("anthropic", "claude-sonnet-4-5")
    usage = Usage(
        input_tokens=250_000,
        output_tokens=1000,
        cached_tokens=10_000,
        cache_write_tokens=30_000,
        cache_write_1h_tokens=20_000,
    )
    cost = pricer.cost(usage, "claude-sonnet-4-5", None, 1.8e9)
    assert cost is not None
    expected = calc_price(
        GenaiUsage(
            input_tokens=250_000,
            output_tokens=1000,
            cache_read_tokens=10_000,
            cache_write_tokens=30_000,
            cache_write_1h_tokens=20_000,
        ),
        "claude-sonnet-4-5",
        provider_id="anthropic",
    )
    assert cost.total == expected.total_price
    below = pricer.cost(
        Usage(input_tokens=100_000, output_tokens=1000), "claude-sonnet-4-5", None, 1.8e9
    )
    assert below is not None
    assert below.output < cost.output
    assert cost.cache_write > 0


@pytest.mark.parametrize(
    ("provider_id", "model"), [("openai", "gpt-5"), ("google", "gemini-2.5-flash")]
)
@pytest.mark.parametrize("tier", ["flex", "priority"])
def test_the_tier_the_answer_ran_on(provider_id: str, model: str, tier: str) -> None:
    cost = Pricer(provider_id, model).cost(
        Usage(input_tokens=10_000, output_tokens=2000), model, tier, 1.8e9
    )
    expected = calc_price(
        GenaiUsage(input_tokens=10_000, output_tokens=2000),
        model,
        provider_id=provider_id,
        price_context={"service_tier": tier},
    )
    assert cost is not None
    assert cost.total == expected.total_price
    if provider_id == "openai":  # gpt-5 has flex and priority rates of its own
        standard = _expected(provider_id, model, input_tokens=10_000, output_tokens=2000)
        assert cost.total != standard


@pytest.mark.parametrize(
    ("provider_id", "model"),
    [("openai", "gpt-4.1"), ("anthropic", "claude-sonnet-4-5"), ("google", "gemini-2.5-flash")],
)
def test_batch_items_at_the_batch_price(provider_id: str, model: str) -> None:
    usage = Usage(input_tokens=10_000, output_tokens=2000)
    cost = Pricer(provider_id, model).for_batch().cost(usage, model, None, 1.8e9)
    expected = calc_price(
        GenaiUsage(input_tokens=10_000, output_tokens=2000),
        model,
        provider_id=provider_id,
        price_context={"processing": "batch"},
    )
    assert cost is not None
    assert cost.total == expected.total_price
    assert cost.total * 2 == _expected(provider_id, model, input_tokens=10_000, output_tokens=2000)


def test_own_prices_win_and_billed_cost_wins_over_both() -> None:
    own = Pricer("openai", "my-finetune", Prices(input="2", output="8", cached_input="0.5"))
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cached_tokens=200_000)
    cost = own.cost(usage, "my-finetune", None, 1.8e9)
    assert cost is not None
    assert (cost.input, cost.cached_input, cost.output) == (
        Decimal("1.6"),
        Decimal("0.1"),
        Decimal(4),
    )
    assert cost.total == Decimal("5.7")
    billed = own.cost(Usage(input_tokens=10, billed_cost=Decimal("0.0123")), "x", None, 1.8e9)
    assert billed is not None
    assert billed.total == Decimal("0.0123")
    assert billed.sources[0].prices == "billed"


def test_unknown_model_costs_none_with_one_warning() -> None:
    pricer = Pricer("openai", "no-such-model-xyz")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert pricer.cost(Usage(input_tokens=5), "no-such-model-xyz", None, 1.8e9) is None
        assert pricer.cost(Usage(input_tokens=5), "no-such-model-xyz", None, 1.8e9) is None
    assert [w.category for w in caught] == [UnpricedModelWarning]


# ---- budgets in money


def _loop_script() -> list[Turn]:
    # each tool round costs the same; the budget allows one round and a bit
    return [_tool_turn(input_tokens=100_000, output_tokens=1000) for _ in range(5)] + [
        Turn.text("done")
    ]


def _one_round() -> Decimal:
    return _expected("openai", "gpt-4.1", input_tokens=100_000, output_tokens=1000)


def _budget() -> Budget:
    return Budget(max_cost=_one_round() * Decimal("1.5"))


def _check_stopped(error: BudgetExceededError, emu: ProviderEmulator) -> None:
    assert error.phase == "budget"
    assert len(emu.requests) == 2  # the round that crossed the limit was the second
    assert error.cost is not None
    assert error.cost.total == _one_round() * 2


async def _run(entry: str, adapter: Any) -> None:
    if entry == "evaluate":
        adapter.evaluate(PROMPT, budget=_budget())
    elif entry in ("evaluate_async", "fallback"):
        await adapter.evaluate_async(PROMPT, budget=_budget())
    elif entry == "stream":
        with adapter.stream(PROMPT, budget=_budget()) as stream:
            for _ in stream:
                pass
    else:
        async with adapter.stream_async(PROMPT, budget=_budget()) as stream:
            async for _ in stream:
                pass


@pytest.mark.parametrize(
    "entry", ["evaluate", "evaluate_async", "stream", "stream_async", "fallback"]
)
async def test_max_cost_stops_the_loop_at_the_round_that_crosses_it(entry: str) -> None:
    with ProviderEmulator(_loop_script()) as emu:
        adapter: Any = create_adapter(
            "openai:gpt-4.1", base_url=emu.base_url("openai"), api_key="k"
        )
        if entry == "fallback":
            adapter = FallbackAdapter([adapter])
        with pytest.raises(BudgetExceededError) as caught:
            await _run(entry, adapter)
        await adapter.aclose()
        adapter.close()
        _check_stopped(caught.value, emu)


def test_an_unpriced_model_with_max_cost_is_refused_before_any_request() -> None:
    with ProviderEmulator([Turn.text("hi")]) as emu:
        adapter = create_adapter(
            "openai:my-private-model", base_url=emu.base_url("openai"), api_key="k"
        )
        with pytest.raises(ConfigurationError):
            adapter.evaluate(PROMPT, budget=Budget(max_cost=Decimal(1)))
        assert emu.requests == []
        priced = create_adapter(
            "openai:my-private-model",
            base_url=emu.base_url("openai"),
            api_key="k",
            prices=Prices(input=1, output=2),
        )
        response = priced.evaluate(PROMPT, budget=Budget(max_cost=Decimal(1)))
        assert response.cost is not None
        assert response.cost.sources[0].prices == "prices="


def test_import_wink_does_not_import_genai_prices() -> None:
    code = "import sys, wink; wink.Cost; wink.Budget; print('genai_prices' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_each_request_span_carries_its_cost() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(exporter))
    script = [_tool_turn(input_tokens=1000, output_tokens=100), Turn.text("ok", output_tokens=10)]
    with ProviderEmulator(script) as emu:
        adapter = create_adapter(
            "openai:gpt-4.1", base_url=emu.base_url("openai"), api_key="k", tracer_provider=tracing
        )
        adapter.evaluate(PROMPT)
        adapter.close()
    chats = [span for span in exporter.get_finished_spans() if span.name.startswith("chat ")]
    costs = [(span.attributes or {}).get("wink.cost.usd") for span in chats]
    assert costs == [
        float(_expected("openai", "gpt-4.1", input_tokens=1000, output_tokens=100)),
        float(_expected("openai", "gpt-4.1", input_tokens=10, output_tokens=10)),
    ]


HOSTED = [
    ("azure:gpt-4.1", "azure", "gpt-4.1"),
    ("azure-responses:gpt-4.1", "azure", "gpt-4.1"),
    ("deepseek:deepseek-chat", "deepseek", "deepseek-chat"),
    ("groq:llama-3.3-70b-versatile", "groq", "llama-3.3-70b-versatile"),
    ("mistral:mistral-large-latest", "mistral", "mistral-large-latest"),
    ("xai:grok-4", "x-ai", "grok-4"),
    ("openrouter:openai/gpt-4.1", "openrouter", "openai/gpt-4.1"),
]


@pytest.mark.parametrize(("spec", "provider_id", "model"), HOSTED)
def test_a_host_prices_under_its_own_genai_prices_id(
    spec: str, provider_id: str, model: str
) -> None:
    """Each host's answers are priced by genai-prices under the host's id (its own prices
    where genai-prices has them: Azure's are not OpenAI's by definition), computed here
    with genai-prices directly."""
    script = [Turn.text("sunny", input_tokens=2000, output_tokens=300, cached_tokens=500)]
    with ProviderEmulator(script) as emu:
        where = (
            {"endpoint": emu.url}
            if spec.startswith(("azure:", "azure-responses:"))
            else {"base_url": emu.base_url("openai")}
        )
        with create_adapter(spec, api_key="k", **where) as adapter:  # type: ignore[call-overload]
            response = adapter.evaluate("Weather in Paris?")
    expected = _expected(
        provider_id, model, input_tokens=2000, output_tokens=300, cache_read_tokens=500
    )
    assert response.cost is not None
    assert response.cost.total == expected


CLOUDS = [
    ("vertex:gemini-2.5-flash", "google", "gemini-2.5-flash"),
    ("vertex-anthropic:claude-sonnet-4-5@20250929", "anthropic", "claude-sonnet-4-5@20250929"),
    ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", None),
    ("bedrock:amazon.nova-pro-v1:0", "aws", None),
]


@pytest.mark.parametrize(("spec", "provider_id", "answered"), CLOUDS)
@pytest.mark.parametrize("streamed", [False, True])
def test_vertex_and_bedrock_answers_are_priced_under_their_own_id(
    spec: str,
    provider_id: str,
    answered: str | None,
    streamed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Vertex (Gemini and Claude, signed with a service-account key made here) and Bedrock
    (a Bedrock API key) answers, through the emulator, cost what genai-prices' calc_price
    gives for the host's provider id and the model: Bedrock's own prices (its ids, its
    regional rates), not the direct provider's."""
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    model = answered or spec.split(":", 1)[1]
    script = [
        _tool_turn(input_tokens=3000, output_tokens=400, cached_tokens=1000),
        Turn.text("sunny", input_tokens=3500, output_tokens=50),
    ]
    with ExitStack() as stack:
        emu = stack.enter_context(ProviderEmulator(script))
        if spec.startswith("bedrock:"):
            where: dict[str, Any] = {
                "base_url": emu.base_url("bedrock"),
                "api_key": "k-0123456789",
                "region": "us-east-1",
            }
        else:
            key_file, _ = stack.enter_context(service_account(tmp_path, project="p"))
            where = {"base_url": emu.url, "credentials": key_file}
        adapter = stack.enter_context(create_adapter(spec, **where))
        if streamed:
            stream = stack.enter_context(adapter.stream(PROMPT))
            rounds = [event.cost for event in stream if isinstance(event, RoundFinished)]
            response = stream.response
        else:
            response = adapter.evaluate(PROMPT)
            rounds = None
    first = _expected(
        provider_id, model, input_tokens=3000, output_tokens=400, cache_read_tokens=1000
    )
    second = _expected(provider_id, model, input_tokens=3500, output_tokens=50)
    assert adapter.host.system == provider_id
    assert response.cost is not None
    assert response.cost.total == first + second
    assert response.cost.cached_input > 0
    assert response.cost.sources[0].provider == provider_id
    if rounds is not None:
        assert [cost.total if cost else None for cost in rounds] == [first, second]


def test_answers_are_priced_by_the_price_data_in_force() -> None:
    """Each answer of a model costs what calc_price gives for its counts; new price data
    (what genai-prices' `UpdatePrices` installs) prices the answers after it."""
    from genai_prices import data_snapshot

    pricer = Pricer("openai", "gpt-4.1")
    counts = [(1000, 100, 0), (2500, 40, 2000), (10, 1, 0)]
    for input_tokens, output_tokens, cached in counts:
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, cached_tokens=cached)
        cost = pricer.cost(usage, "gpt-4.1-2025-04-14", None, 1.8e9)
        expected = _expected(
            "openai",
            "gpt-4.1-2025-04-14",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cached,
        )
        assert cost is not None
        assert cost.total == expected
    usage = Usage(input_tokens=1000, output_tokens=100)
    data_snapshot.set_custom_snapshot(data_snapshot.DataSnapshot([], from_auto_update=True))
    try:
        with pytest.warns(UnpricedModelWarning):
            assert pricer.cost(usage, "gpt-4.1-2025-04-14", None, 1.8e9) is None
    finally:
        data_snapshot.set_custom_snapshot(None)
    assert pricer.cost(usage, "gpt-4.1-2025-04-14", None, 1.8e9) is not None


def _openrouter_chunks(usage: dict[str, Any]) -> str:
    """OpenRouter's stream: the text, then a last chunk with the usage and its cost."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": usage},
    ]
    head = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "openai/gpt-4.1",
    }
    lines = [f"data: {json.dumps(head | chunk)}\n\n" for chunk in chunks]
    return "".join(lines) + "data: [DONE]\n\n"


@pytest.mark.parametrize("streamed", [False, True])
def test_openrouter_billed_cost_is_the_response_cost(streamed: bool) -> None:
    """OpenRouter's billed `usage.cost` is what the answer cost, beside genai-prices' parts
    for the same counts (under OpenRouter's own id), streamed and not."""
    usage = {"prompt_tokens": 2000, "completion_tokens": 300, "total_tokens": 2300}
    usage["cost"] = 0.00123  # type: ignore[assignment]
    if streamed:
        answer = Fault.http(200, _openrouter_chunks(usage), {"content-type": "text/event-stream"})
    else:
        message = {"role": "assistant", "content": "Hi."}
        body = {
            "id": "gen-1",
            "object": "chat.completion",
            "created": 1,
            "model": "openai/gpt-4.1",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }
        answer = Fault.http(200, body)
    with (
        ProviderEmulator([answer]) as emu,
        create_adapter(
            "openrouter:openai/gpt-4.1", base_url=emu.url + "/v1", api_key="k"
        ) as adapter,
    ):
        if streamed:
            with adapter.stream("Hi?") as stream:
                for _ in stream:
                    pass
            response = stream.response
        else:
            response = adapter.evaluate("Hi?")
    listed = calc_price(
        GenaiUsage(input_tokens=2000, output_tokens=300), "openai/gpt-4.1", provider_id="openrouter"
    )
    assert response.cost is not None
    assert response.cost.total == Decimal("0.00123")
    assert response.cost.sources[0].prices == "billed"
    assert response.cost.output == listed.output_price
    assert response.cost.input == listed.input_price


def test_an_ollama_model_is_unpriced_until_given_prices() -> None:
    """A local model has no price anywhere: its cost is None with one warning (never a
    guess), a budget in money is refused before the first request, and `prices=` prices
    it."""
    model = "llama3.2-wink-local"
    with ProviderEmulator([Turn.text("hi"), Turn.text("hi", input_tokens=1000)]) as emu:
        with create_adapter(f"ollama:{model}", base_url=emu.base_url("openai")) as adapter:
            with pytest.warns(UnpricedModelWarning, match=model):
                assert adapter.evaluate("Hi?").cost is None
            with pytest.raises(ConfigurationError, match="prices=Prices"):
                adapter.evaluate("Hi?", budget=Budget(max_cost=Decimal(1)))
        assert len(emu.requests) == 1
        with create_adapter(
            f"ollama:{model}", base_url=emu.base_url("openai"), prices=Prices(input=1, output=2)
        ) as priced:
            cost = priced.evaluate("Hi?").cost
    assert cost is not None
    assert cost.total == Decimal(1000 * 1 + 5 * 2) / 1_000_000
