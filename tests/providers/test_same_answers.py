"""A host answers as its wire's own provider does: the same scripted answers give the same
text, calls, usage and finish reason, and the same error classes, streamed or not; and a
conversation falls back from a host to the provider across the shared wire."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.adapters import KEY, NO_RETRY, answer
from tests.helpers.prompts import HELLO, make_prompt
from wink import FallbackAdapter, PromptEvaluationError, Session, create_adapter
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

HOSTS: dict[str, tuple[str, dict[str, Any]]] = {
    # host spec -> (the direct provider's spec, how the host is pointed at the emulator)
    "azure:gpt-4.1": ("openai:gpt-4.1", {"endpoint": "{url}"}),
    "azure-responses:gpt-4.1": ("openai-responses:gpt-4.1", {"endpoint": "{url}"}),
    "deepseek:deepseek-chat": ("openai:deepseek-chat", {"base_url": "{url}"}),
    "groq:llama-3.3-70b": ("openai:llama-3.3-70b", {"base_url": "{url}/v1"}),
    "openrouter:openai/gpt-5": ("openai:openai/gpt-5", {"base_url": "{url}/api/v1"}),
    "ollama:llama3.2": ("openai:llama3.2", {"base_url": "{url}/v1"}),
}


def _adapter(spec: str, emu: ProviderEmulator, where: dict[str, Any] | None = None) -> Any:
    if where is None:
        wire = spec.partition(":")[0]
        where = {"base_url": emu.base_url(wire)}  # type: ignore[arg-type]
    options = {key: value.format(url=emu.url) for key, value in where.items()}
    return create_adapter(spec, api_key=KEY, retry_policy=NO_RETRY, **options)


def _seen(response: Any) -> tuple[Any, ...]:
    return (
        response.text,
        response.usage.input_tokens,
        response.usage.output_tokens,
        [(m.__class__.__name__, getattr(m, "text", None)) for m in response.transcript.messages],
    )


SCRIPT = [
    Turn.tool_calls(
        EmulatedToolCall("weather", {"city": "Paris"}), input_tokens=11, output_tokens=3
    ),
    Turn.text("Sunny in Paris.", input_tokens=20, output_tokens=4),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("host", sorted(HOSTS))
def test_the_same_answers_give_the_same_response(host: str, stream: bool) -> None:
    direct, where = HOSTS[host]
    seen = []
    for spec, place in ((direct, None), (host, where)):
        with ProviderEmulator(list(SCRIPT)) as emu:
            seen.append(_seen(answer(_adapter(spec, emu, place), make_prompt(), stream=stream)))
    assert seen[0] == seen[1]


THINKING_SCRIPT = [
    Turn.tool_calls(
        EmulatedToolCall("weather", {"city": "Paris"}),
        thinking="Need the weather.",
        input_tokens=11,
        output_tokens=3,
    ),
    Turn.text("Sunny in Paris.", thinking=["Read it.", "Say it."], input_tokens=20),
]


def _thoughts(response: Any) -> list[str]:
    return [
        part.text
        for message in response.transcript.messages
        for part in getattr(message, "thinking", ())
    ]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("deepseek:deepseek-chat", ["Need the weather.", "Read it.Say it."]),
        ("openrouter:openai/gpt-5", ["Need the weather.", "Read it.Say it."]),
        ("azure:gpt-4.1", []),  # Azure answers as OpenAI: no thinking on Chat Completions
    ],
)
def test_a_host_shows_thinking_as_it_does_and_answers_the_same(
    host: str, shown: list[str], stream: bool
) -> None:
    """The provider's own Chat Completions shows no thinking; DeepSeek and OpenRouter show
    it, each in its own field: the rest of the response is the provider's, and the
    thinking reads the same streamed and not."""
    direct, where = HOSTS[host]
    responses = []
    for spec, place in ((direct, None), (host, where)):
        with ProviderEmulator(list(THINKING_SCRIPT)) as emu:
            responses.append(answer(_adapter(spec, emu, place), make_prompt(), stream=stream))
    own, hosted = responses
    assert _seen(own) == _seen(hosted)
    assert _thoughts(own) == []
    assert _thoughts(hosted) == shown


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize(
    "fault",
    [Fault.rate_limit(3), Fault.overloaded(), Fault.context_window_exceeded(), Fault.not_found()],
)
def test_the_same_failures_raise_the_same_classes(host: str, stream: bool, fault: Fault) -> None:
    direct, where = HOSTS[host]
    raised: list[type[BaseException]] = []
    for spec, place in ((direct, None), (host, where)):
        with ProviderEmulator([fault]) as emu, pytest.raises(PromptEvaluationError) as info:
            answer(_adapter(spec, emu, place), HELLO, stream=stream)
        raised.append(type(info.value))
    assert raised[0] is raised[1]


def test_a_conversation_falls_back_from_azure_to_openai() -> None:
    with ProviderEmulator([Fault.overloaded(), *SCRIPT]) as emu:
        azure = _adapter("azure:gpt-4.1", emu, {"endpoint": "{url}"})
        openai = _adapter("openai:gpt-4.1", emu)
        response = FallbackAdapter([azure, openai]).evaluate(make_prompt(), session=Session())
        paths = [request.path for request in emu.requests]
    assert response.text == "Sunny in Paris."
    assert paths == ["/openai/v1/chat/completions", "/v1/chat/completions", "/v1/chat/completions"]
