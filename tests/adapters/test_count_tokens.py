"""`count_tokens`: the request `evaluate` would send, counted by the provider's endpoint,
through the real SDKs and the emulator over HTTP; refused where no endpoint exists."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.helpers.adapters import FAST_RETRY, KEY, MODELS, make_adapter
from tests.helpers.media import png
from tests.helpers.prompts import Answer, weather
from wink import (
    AuthenticationError,
    Image,
    InvalidArgumentError,
    MarkdownSection,
    ModelSettings,
    Prompt,
    Session,
    ThrottleError,
    Tool,
    UnsupportedFeatureError,
    create_adapter,
)
from wink.testing import Fault, ProviderEmulator, Turn
from wink.testing.token_counts import derived_count

COUNTING = ("openai-responses", "anthropic", "google")
# The fields `evaluate` sends here that each endpoint does not take
DROPPED = {
    "openai-responses": {"max_output_tokens", "temperature"},
    "anthropic": {"max_tokens", "temperature"},
    "google": set[str](),
}
SETTINGS = ModelSettings(temperature=0.2, max_tokens=300)


def make_prompt() -> Prompt[Answer]:
    tool = Tool(name="weather", description="Weather by city", handler=weather)
    section = MarkdownSection(key="task", title="Task", template="Weather in Paris?", tools=[tool])
    return Prompt(name="counted", sections=[section], output_type=Answer, instructions="Be brief.")


@pytest.fixture
def emulator() -> Any:
    with ProviderEmulator() as emu:
        yield emu


def history(provider: str, emu: ProviderEmulator) -> Any:
    """A conversation so far, made on `provider`."""
    emu.enqueue(Turn.text('{"city": "Lyon", "degrees": 18}'))
    adapter = make_adapter(provider, emu, settings=SETTINGS)
    transcript = adapter.evaluate(make_prompt()).transcript
    emu.clear()
    return transcript


def counted_body(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the endpoint is sent for a generation body `body`."""
    if provider == "google":
        return {"generateContentRequest": {"model": f"models/{MODELS[provider]}", **body}}
    return {key: value for key, value in body.items() if key not in DROPPED[provider]}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("provider", COUNTING)
def test_count_tokens_sends_what_evaluate_sends_less_what_the_endpoint_refuses(
    provider: str, mode: str, emulator: ProviderEmulator
) -> None:
    earlier = history(provider, emulator)
    adapter = make_adapter(provider, emulator, settings=SETTINGS)
    image = Image.from_bytes(png(), "image/png")
    options: dict[str, Any] = {"history": earlier, "attachments": [image]}
    if mode == "sync":
        count = adapter.count_tokens(make_prompt(), **options)
    else:

        async def run() -> int:
            async with adapter:
                return await adapter.count_tokens_async(make_prompt(), **options)

        count = asyncio.run(run())
    emulator.enqueue(Turn.text('{"city": "Paris", "degrees": 21}'))
    adapter.evaluate(make_prompt(), **options)

    counted, evaluated = emulator.requests
    assert DROPPED[provider] <= set(evaluated.body)  # the test drops something real
    assert counted.body == counted_body(provider, evaluated.body)
    assert counted.path != evaluated.path
    generation = counted.body.get("generateContentRequest", counted.body)
    assert count == derived_count(generation) > 0


def test_each_endpoint_is_the_documented_one(emulator: ProviderEmulator) -> None:
    paths = []
    for provider in COUNTING:
        make_adapter(provider, emulator).count_tokens("Hello")
        paths.append(emulator.requests[-1].path)
    assert paths == [
        "/v1/responses/input_tokens",
        "/v1/messages/count_tokens",
        "/v1beta/models/gemini-2.5-flash:countTokens",
    ]


def test_the_count_moves_with_the_request(emulator: ProviderEmulator) -> None:
    adapter = make_adapter("anthropic", emulator)
    short = adapter.count_tokens("Hi")
    long = adapter.count_tokens("Hi " * 200, instructions="Answer in French.")
    assert long > short


# --- no endpoint: refused before anything is rendered or sent


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_chat_completions_has_no_token_count(mode: str, emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", emulator)
    count = (
        (lambda: adapter.count_tokens("Hello"))
        if mode == "sync"
        else (lambda: asyncio.run(adapter.count_tokens_async("Hello")))
    )
    with pytest.raises(UnsupportedFeatureError, match="no token-count endpoint") as caught:
        count()
    assert caught.value.feature == "count_tokens"
    assert caught.value.provider == "openai"
    assert emulator.requests == []


@pytest.mark.parametrize("host", ["deepseek", "groq", "ollama"])
def test_compatible_hosts_have_no_token_count(host: str, emulator: ProviderEmulator) -> None:
    adapter = create_adapter(f"{host}:some-model", api_key=KEY, base_url=emulator.url)
    with pytest.raises(UnsupportedFeatureError):
        adapter.count_tokens("Hello")
    assert emulator.requests == []


def test_azure_responses_does_not_serve_the_endpoint(emulator: ProviderEmulator) -> None:
    adapter = create_adapter("azure-responses:my-deployment", api_key=KEY, endpoint=emulator.url)
    with pytest.raises(UnsupportedFeatureError, match="azure-responses does not count") as caught:
        adapter.count_tokens("Hello")
    assert caught.value.provider == "azure-responses"
    assert emulator.requests == []
    # and the emulated Azure answers the path as Azure does
    reply = httpx.post(
        f"{emulator.url}/openai/v1/responses/input_tokens",
        json={"model": "my-deployment", "input": "Hello"},
        headers={"api-key": KEY},
    )
    assert reply.status_code == 404


def test_options_that_shape_no_request_are_refused(emulator: ProviderEmulator) -> None:
    adapter = make_adapter("anthropic", emulator)
    with pytest.raises(InvalidArgumentError, match="count_tokens does not take budget"):
        adapter.count_tokens("Hello", budget=None)  # type: ignore[call-arg]
    with pytest.raises(InvalidArgumentError):
        adapter.count_tokens(b"Hello")  # type: ignore[arg-type]
    assert emulator.requests == []


# --- the same contract and retries as evaluate


@pytest.mark.parametrize("provider", COUNTING)
def test_a_throttled_count_is_retried_by_the_policy(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.inject(Fault.rate_limit(0.001))
    adapter = make_adapter(provider, emulator, retry_policy=FAST_RETRY)
    assert adapter.count_tokens("Hello", session=Session()) > 0
    assert len(emulator.requests) == 2
    first, second = emulator.requests
    assert first.path == second.path


@pytest.mark.parametrize("provider", COUNTING)
def test_a_count_fails_as_evaluate_fails(provider: str, emulator: ProviderEmulator) -> None:
    adapter = make_adapter(provider, emulator)
    emulator.inject(Fault.rate_limit(0.001))
    with pytest.raises(ThrottleError) as throttled:
        adapter.count_tokens("Hello")
    assert throttled.value.details.kind == "rate_limit"
    emulator.inject(Fault.unauthorized())
    with pytest.raises(AuthenticationError):
        adapter.count_tokens("Hello")


def test_a_count_of_another_providers_turns_goes_by_the_portable_rules(
    emulator: ProviderEmulator,
) -> None:
    earlier = history("openai", emulator)
    adapter = make_adapter("anthropic", emulator)
    assert adapter.count_tokens("And now?", history=earlier) > 0
    assert emulator.requests[-1].body["messages"][-1]["content"][0]["text"] == "And now?"


# --- the emulated endpoints refuse what the real ones refuse


def test_the_emulated_endpoints_refuse_fields_they_do_not_take(
    emulator: ProviderEmulator,
) -> None:
    url = emulator.url
    message = {"role": "user", "content": "Hi"}
    refused = httpx.post(
        f"{url}/v1/messages/count_tokens",
        json={"model": "claude-sonnet-4-6", "messages": [message], "max_tokens": 10},
        headers={"x-api-key": KEY},
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "max_tokens: Extra inputs are not permitted"
    refused = httpx.post(
        f"{url}/v1/responses/input_tokens",
        json={"model": "gpt-4.1", "input": "Hi", "max_output_tokens": 10},
        headers={"authorization": f"Bearer {KEY}"},
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "unknown_parameter"
    refused = httpx.post(
        f"{url}/v1beta/models/gemini-2.5-flash:countTokens",
        json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}], "maxTokens": 3},
        headers={"x-goog-api-key": KEY},
    )
    assert refused.status_code == 400
    assert 'Unknown name "maxTokens"' in refused.json()["error"]["message"]
    missing = httpx.post(f"{url}/v1/chat/completions/count_tokens", json={"model": "gpt-4.1"})
    assert missing.status_code == 404


def test_the_emulated_endpoints_answer_the_sdks_own_methods(emulator: ProviderEmulator) -> None:
    claude = anthropic.Anthropic(api_key=KEY, base_url=emulator.base_url("anthropic"))
    counted = claude.messages.count_tokens(
        model="claude-sonnet-4-6", messages=[{"role": "user", "content": "Hello, Claude"}]
    )
    assert counted.input_tokens == derived_count(emulator.requests[-1].body)
    gpt = openai.OpenAI(api_key=KEY, base_url=emulator.base_url("openai-responses"))
    tokens = gpt.responses.input_tokens.count(model="gpt-4.1", input="Hello, GPT")
    assert tokens.object == "response.input_tokens"
    assert tokens.input_tokens == derived_count(emulator.requests[-1].body)


def test_a_broken_conversation_is_refused_by_the_count_as_by_generation(
    emulator: ProviderEmulator,
) -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}],
            },
            {"role": "user", "content": "no result for the call"},
        ],
    }
    refused = httpx.post(
        f"{emulator.url}/v1/messages/count_tokens", json=body, headers={"x-api-key": KEY}
    )
    generated = httpx.post(
        f"{emulator.url}/v1/messages", json={**body, "max_tokens": 5}, headers={"x-api-key": KEY}
    )
    assert refused.status_code == generated.status_code == 400
    assert refused.json()["error"]["message"] == generated.json()["error"]["message"]
