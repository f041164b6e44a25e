"""The OpenAI-compatible hosts at the wire: DeepSeek's thinking echo (and the emulator's
400 without it), OpenRouter's reasoning and billed cost, the refused settings of Groq,
Mistral and xAI, Ollama without a key, and each host's URL, key variable and names."""

from __future__ import annotations

import warnings
from typing import Any

import httpx
import openai
import pytest

from tests.helpers.adapters import KEY, NO_RETRY, answer
from tests.helpers.prompts import HELLO, make_prompt
from wink import (
    BadRequestError,
    ConfigurationError,
    Session,
    UnsupportedSettingWarning,
    create_adapter,
)
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

_HI = [{"role": "user", "content": "Hi"}]


def _chat_body(
    message: dict[str, Any], finish: str, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": "c-1",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-v4-pro",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _deepseek_round() -> list[Turn]:
    """DeepSeek's answers: thinking and a tool call, then thinking and the answer."""
    return [
        Turn.tool_calls(
            EmulatedToolCall("weather", {"city": "Paris"}), thinking="Need the weather."
        ),
        Turn.text("Sunny.", thinking="Got it."),
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_a_deepseek_tool_round_with_thinking_passes_the_400_rule(stream: bool) -> None:
    with ProviderEmulator(_deepseek_round()) as emu:
        adapter = create_adapter(
            "deepseek:deepseek-v4-pro",
            base_url=emu.url,
            api_key=KEY,
            thinking="high",
            retry_policy=NO_RETRY,
        )
        response = answer(adapter, make_prompt(), stream=stream)
        first, second = emu.requests
    assert response.text == "Sunny."
    assert first.path == second.path == "/chat/completions"
    assert first.headers["authorization"] == "[redacted]"
    assert "max_tokens" not in first.body
    assert "max_completion_tokens" not in first.body
    echoed = second.body["messages"][-2]
    assert echoed["role"] == "assistant"
    assert echoed["tool_calls"]
    assert echoed["reasoning_content"] == "Need the weather."
    assert _thoughts(response) == [["Need the weather."], ["Got it."]]
    assert adapter.host.system == "deepseek"


def _thoughts(response: Any) -> list[list[str | None]]:
    """The thinking texts of each assistant turn of the run."""
    return [
        [part.text for part in message.thinking]
        for message in response.transcript.messages
        if message.__class__.__name__ == "AssistantMessage"
    ]


def test_deepseek_answers_its_thinking_in_reasoning_content() -> None:
    """As DeepSeek sends it: beside the content, and in its own streamed deltas."""
    client = openai.OpenAI(api_key=KEY, max_retries=0)
    with ProviderEmulator([Turn.text("Hi.", thinking="Say hi.")] * 2) as emu:
        client = client.with_options(base_url=emu.url)
        answer = client.chat.completions.create(model="deepseek-chat", messages=_HI)
        chunks = list(
            client.chat.completions.create(model="deepseek-chat", messages=_HI, stream=True)
        )
    message = answer.choices[0].message.model_dump()
    assert (message["content"], message["reasoning_content"]) == ("Hi.", "Say hi.")
    deltas = [chunk.choices[0].delta.model_dump() for chunk in chunks if chunk.choices]
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "Say hi."
    assert "".join(d.get("content") or "" for d in deltas) == "Hi."


def test_without_the_echo_deepseek_answers_its_400() -> None:
    """The same round through the plain `openai` host, which sends no reasoning back."""
    with ProviderEmulator(_deepseek_round()) as emu:
        adapter = create_adapter(
            "openai:deepseek-v4-pro",
            base_url=emu.url,
            api_key=KEY,
            thinking="high",
            retry_policy=NO_RETRY,
        )
        with pytest.raises(BadRequestError, match="reasoning_content in the thinking mode"):
            adapter.evaluate(make_prompt(), session=Session())


def test_deepseek_names_its_output_limit_max_tokens() -> None:
    with ProviderEmulator([Turn.text("ok")]) as emu:
        create_adapter(
            "deepseek:deepseek-chat", base_url=emu.url, api_key=KEY, max_tokens=64
        ).evaluate(HELLO, session=Session())
        (request,) = emu.requests
    assert request.body["max_tokens"] == 64
    assert "max_completion_tokens" not in request.body


def test_openrouter_asks_for_the_cost_and_keeps_it() -> None:
    message = {"role": "assistant", "content": "Hi.", "reasoning": "Say hi."}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost": 0.00042}
    with ProviderEmulator([Fault.http(200, _chat_body(message, "stop", usage))]) as emu:
        adapter = create_adapter(
            "openrouter:anthropic/claude-sonnet-4.6", base_url=emu.url + "/api/v1", api_key=KEY
        )
        response = adapter.evaluate(HELLO, session=Session())
        (request,) = emu.requests
    assert request.path == "/api/v1/chat/completions"
    assert request.body["usage"] == {"include": True}
    assert response.usage.billed_cost == pytest.approx(0.00042)
    assert adapter.host.system == "openrouter"


@pytest.mark.parametrize("stream", [False, True])
def test_openrouter_thinking_is_read_streamed_and_not(stream: bool) -> None:
    script = [
        Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}), thinking="Look it up."),
        Turn.text("Sunny.", thinking=["Read it.", "Answer."]),
    ]
    with ProviderEmulator(script) as emu:
        adapter = create_adapter(
            "openrouter:openai/gpt-5", base_url=emu.url + "/api/v1", api_key=KEY, thinking="low"
        )
        response = answer(adapter, make_prompt(), stream=stream)
    assert response.text == "Sunny."
    assert _thoughts(response) == [["Look it up."], ["Read it.Answer."]]


def test_openrouter_answers_reasoning_and_its_details() -> None:
    """As OpenRouter sends a model's thinking: `reasoning` and typed `reasoning_details`,
    both in the message and in each streamed delta that carries a piece."""
    client = openai.OpenAI(api_key=KEY, max_retries=0)
    with ProviderEmulator([Turn.text("Hi.", thinking=["One.", "Two."])] * 2) as emu:
        client = client.with_options(base_url=emu.url + "/api/v1")
        answer = client.chat.completions.create(model="openai/gpt-5", messages=_HI)
        chunks = list(
            client.chat.completions.create(model="openai/gpt-5", messages=_HI, stream=True)
        )
    message = answer.choices[0].message.model_dump()
    assert message["reasoning"] == "One.Two."
    details = message["reasoning_details"]
    assert [(d["type"], d["text"], d["index"]) for d in details] == [
        ("reasoning.text", "One.", 0),
        ("reasoning.text", "Two.", 1),
    ]
    deltas = [chunk.choices[0].delta.model_dump() for chunk in chunks if chunk.choices]
    assert "".join(d.get("reasoning") or "" for d in deltas) == "One.Two."
    streamed = [entry for d in deltas for entry in d.get("reasoning_details") or ()]
    assert {entry["index"] for entry in streamed} == {0, 1}


def test_openrouter_reasoning_details_are_thinking() -> None:
    details = [{"type": "reasoning.text", "text": "Step one.", "signature": None}]
    message = {"role": "assistant", "content": "Hi.", "reasoning_details": details}
    with ProviderEmulator([Fault.http(200, _chat_body(message, "stop"))]) as emu:
        adapter = create_adapter(
            "openrouter:openai/gpt-5", base_url=emu.url + "/api/v1", api_key=KEY
        )
        response = adapter.evaluate(HELLO, session=Session())
    assert [part.text for part in response.transcript.messages[-1].thinking] == ["Step one."]


def test_openrouter_refuses_a_request_without_its_key() -> None:
    with ProviderEmulator([Turn.text("never")]) as emu:
        reply = httpx.post(
            emu.url + "/api/v1/chat/completions", json={"model": "m", "messages": []}
        )
    assert reply.status_code == 401
    assert reply.json() == {"error": {"message": "No auth credentials found", "code": 401}}


@pytest.mark.parametrize(
    ("host", "refused"),
    [("groq", "prompt_cache_key"), ("mistral", "seed"), ("xai", "stop")],
)
def test_a_refused_setting_is_warned_about_and_not_sent(host: str, refused: str) -> None:
    values: dict[str, Any] = {"prompt_cache_key": "k1", "seed": 7, "stop": ["END"]}
    with ProviderEmulator([Turn.text("ok")]) as emu:
        with pytest.warns(UnsupportedSettingWarning, match=refused):
            adapter = create_adapter(
                f"{host}:m",
                base_url=emu.base_url("openai"),
                api_key=KEY,
                **{refused: values[refused]},
            )
        adapter.evaluate(HELLO, session=Session())
        (request,) = emu.requests
    assert refused not in request.body


@pytest.mark.parametrize(
    ("host", "variable", "url", "system"),
    [
        ("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com", "deepseek"),
        ("openrouter", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", "openrouter"),
        ("groq", "GROQ_API_KEY", "https://api.groq.com/openai/v1", "groq"),
        ("mistral", "MISTRAL_API_KEY", "https://api.mistral.ai/v1", "mistral"),
        ("xai", "XAI_API_KEY", "https://api.x.ai/v1", "x-ai"),
    ],
)
def test_each_host_reads_its_own_key_and_never_openais(
    host: str, variable: str, url: str, system: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-travel-0123456789")
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigurationError, match=variable):  # OPENAI_API_KEY is not its key
        create_adapter(f"{host}:m")
    monkeypatch.setenv(variable, "host-key-0123456789")
    adapter = create_adapter(f"{host}:m")
    assert adapter.host.system == system
    client = adapter.api.make_client()
    assert str(client.base_url).rstrip("/") == url
    assert client.api_key == "host-key-0123456789"


def test_ollama_needs_no_key_and_never_sends_openais(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-travel-0123456789")
    adapter = create_adapter("ollama:llama3.2")
    client = adapter.api.make_client()
    assert str(client.base_url).rstrip("/") == "http://localhost:11434/v1"
    assert client.api_key == "not-needed"
    with ProviderEmulator([Turn.text("ok")]) as emu:
        answer = create_adapter("ollama:llama3.2", base_url=emu.base_url("openai")).evaluate(
            HELLO, session=Session()
        )
    assert answer.text == "ok"


def test_a_compatible_host_offers_no_batches() -> None:

    with warnings.catch_warnings():
        adapter = create_adapter("deepseek:deepseek-chat", api_key=KEY)
    with pytest.raises(ConfigurationError, match="DeepSeek has no batch API"):
        adapter.submit_batch([HELLO])
