"""Reasoning models through wink: one `thinking=` setting, thinking that travels back to
its own provider exactly as required (and never to another), `pause_turn`, usage.

Real SDKs against the emulator, whose checks refuse a follow-up that drops or alters
thinking with the real API's 400: a regression fails here the way production would.
"""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    ConfigurationError,
    MarkdownSection,
    ModelSettings,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    RetryPolicy,
    Session,
    Thinking,
    ThinkingReceived,
    Tool,
    ToolContext,
    ToolResult,
    UnsupportedSettingWarning,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.adapters.options import settings_from
from wink.core.foundation.messages import (
    AssistantMessage,
    ModelRequest,
    NativeOutput,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.testing import EmulatedThinking, EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.thinking import opens

PROVIDERS = ["openai", "openai-responses", "anthropic", "google"]
MODELS = {
    "openai": "o4-mini",
    "openai-responses": "o4-mini",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-3-flash-preview",
}


@dataclass(frozen=True)
class CityParams:
    city: str


def weather(params: CityParams, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok("sunny")


PROMPT = Prompt(
    name="reasoning",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Weather in Paris?",
            tools=[Tool(name="weather", description="Weather by city", handler=weather)],
        )
    ],
)
PARIS = EmulatedToolCall("weather", {"city": "Paris"}, id="call_paris")


def adapter_for(provider: str, emu: ProviderEmulator, **options: Any) -> ProviderAdapter:
    model = options.pop("model", MODELS[provider])
    return create_adapter(
        f"{provider}:{model}",
        base_url=emu.base_url(provider),  # type: ignore[arg-type]
        api_key="test-key",
        retry_policy=RetryPolicy(max_attempts=1),
        **options,
    )


def evaluate(provider: str, script: list[Any], **options: Any) -> tuple[Any, Session, Any]:
    """(response, session, the emulator's requests)."""
    session = Session()
    with ProviderEmulator(script) as emu:
        with adapter_for(provider, emu, **options) as adapter:
            response = adapter.evaluate(PROMPT, session=session)
        return response, session, emu.requests


# --- the setting, mapped to each provider's own parameter


@pytest.mark.parametrize(
    ("provider", "model", "thinking", "expected"),
    [
        (
            "anthropic",
            "claude-sonnet-4-6",
            Thinking(effort="high", budget_tokens=2048),  # adaptive preferred where taken
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
        ),
        (
            "anthropic",
            "claude-sonnet-4-5",
            Thinking(effort="high", budget_tokens=2048, show=True),
            {
                "thinking": {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
                "max_tokens": 2048 + 4096,  # room left for the answer
            },
        ),
        ("openai", "o4-mini", "medium", {"reasoning_effort": "medium"}),
        (
            "openai-responses",
            "gpt-5",
            Thinking(effort="low", show=True),
            {
                "reasoning": {"effort": "low", "summary": "auto"},
                "include": ["reasoning.encrypted_content"],
            },
        ),
        (
            "google",
            "gemini-2.5-flash",
            Thinking(effort="low", budget_tokens=1024),
            {"generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}},
        ),
        (
            "google",
            "gemini-3-pro-preview",
            Thinking(effort="high", budget_tokens=1024, show=True),
            {
                "generationConfig": {
                    "thinkingConfig": {"thinkingLevel": "HIGH", "includeThoughts": True}
                }
            },
        ),
    ],
)
def test_one_setting_becomes_each_providers_own_parameter(
    provider: str, model: str, thinking: Any, expected: dict[str, Any]
) -> None:
    _, _, requests = evaluate(provider, [Turn.text("Sunny.")], model=model, thinking=thinking)
    body = requests[0].body
    assert {key: body[key] for key in expected} == expected


def test_the_shorthands_and_the_settings_object_are_the_same_setting() -> None:
    assert ModelSettings(thinking="high").thinking == Thinking(effort="high")  # type: ignore[arg-type]
    assert settings_from({"thinking": 2048})[0].thinking == Thinking(budget_tokens=2048)
    assert settings_from({"thinking": None})[0].thinking is None
    given = ModelSettings(thinking=Thinking(effort="low"))
    adapter = create_adapter("anthropic:claude-sonnet-4-6", settings=given, api_key="k")
    assert adapter.settings.thinking == Thinking(effort="low")
    assert "thinking" in adapter.settings.set_fields()


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("openai:o4-mini", {"thinking": 2048}, "take an effort, not a token budget"),
        ("openai-responses:gpt-5", {"thinking": 2048}, "take an effort, not a token budget"),
        ("openai:gpt-4.1", {"thinking": "high"}, "gpt-4.1 is not a reasoning model"),
        ("anthropic:claude-sonnet-4-5", {"thinking": "high"}, "takes a thinking budget"),
        ("anthropic:claude-opus-4-7", {"thinking": 2048}, "takes an effort (adaptive"),
        ("anthropic:claude-3-5-haiku-latest", {"thinking": "low"}, "does not think"),
        ("anthropic:claude-sonnet-4-5", {"thinking": 512}, "at least 1024 tokens"),
        (
            "anthropic:claude-sonnet-4-5",
            {"thinking": 2048, "max_tokens": 2048},
            "max_tokens (2048) must be above the thinking budget",
        ),
        ("anthropic:claude-sonnet-4-6", {"thinking": "low", "temperature": 0.2}, "temperature"),
        ("anthropic:claude-sonnet-4-6", {"thinking": "low", "top_p": 0.5}, "top_p"),
        ("google:gemini-2.5-pro", {"thinking": "high"}, "takes a thinking budget"),
        ("google:gemini-2.0-flash", {"thinking": 1024}, "does not think"),
    ],
)
def test_a_model_that_cannot_take_the_setting_fails_when_the_adapter_is_built(
    spec: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)) as caught:
        create_adapter(spec, api_key="k", **options)
    assert caught.value.option == "thinking"
    assert caught.value.provider == spec.partition(":")[0]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Thinking, "needs an effort, a budget_tokens, or both"),
        (lambda: Thinking(effort="extreme"), "effort must be one of low, medium, high"),  # type: ignore[arg-type]
        (lambda: Thinking(budget_tokens=0), "budget_tokens must be an int >= 1"),
        (lambda: Thinking(budget_tokens=True), "budget_tokens must be an int >= 1"),
        (lambda: Thinking(effort="low", show="yes"), "show must be True or False"),  # type: ignore[arg-type]
        (lambda: ModelSettings(thinking=1.5), "thinking must be a Thinking"),  # type: ignore[arg-type]
        (lambda: settings_from({"thinking": True}), "thinking must be a Thinking"),
    ],
)
def test_a_bad_thinking_value_is_a_configuration_error(value: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        value()
    assert caught.value.option == "thinking"


def test_a_model_name_wink_does_not_know_is_sent_what_was_asked() -> None:
    _, _, requests = evaluate(
        "anthropic", [Turn.text("ok")], model="claude-next", thinking=Thinking(budget_tokens=2048)
    )
    assert requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


# --- Anthropic: thinking back with the tool round, intact and first


def test_anthropic_tool_round_sends_its_thinking_back_intact_and_first() -> None:
    script = [
        Turn.tool_calls(
            PARIS,
            text="Checking.",
            thinking=["Use the tool.", EmulatedThinking("hidden", redacted=True)],
            output_tokens=50,
            reasoning_tokens=30,
        ),
        Turn.text("Sunny.", thinking="Answer now."),
    ]
    response, session, requests = evaluate("anthropic", script, thinking="medium")
    assert response.text == "Sunny."
    assert response.thinking == "Use the tool.\n\nAnswer now."
    assert [(e.round, e.text) for e in session[ThinkingReceived]] == [
        (1, "Use the tool."),
        (2, "Answer now."),
    ]
    assert session[PromptExecuted][-1].thinking == response.thinking
    assert response.usage.reasoning_tokens == 30
    assistant = requests[1].body["messages"][1]
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use"]
    thinking = assistant["content"][0]
    assert opens(thinking["signature"], thinking["thinking"]) is True


def test_anthropic_a_tool_round_without_claudes_thinking_goes_out_with_thinking_off() -> None:
    """With thinking on, Anthropic refuses a final assistant turn that calls tools without
    starting with thinking (the emulator's 400 is shown with the SDK in docs/reasoning.md).
    A turn that has none (another provider's, or one whose thinking was lost) cannot get a
    signature: that request goes out with thinking off, and says so; a Claude turn with its
    thinking keeps it on."""
    with ProviderEmulator([Turn.tool_calls(PARIS, thinking="Use the tool.")]) as emu:
        adapter = adapter_for("anthropic", emu, thinking="low")
        first = _send(adapter, (UserMessage("Weather?"),))
        assert first.thinking
        bare = AssistantMessage(first.text, first.tool_calls)  # no thinking
        result = ToolResultMessage("call_paris", "weather", "sunny")
        with pytest.warns(UnsupportedSettingWarning, match="thinking is off"):
            bare_round = _send(adapter, (UserMessage("Weather?"), bare, result))
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnsupportedSettingWarning)
            kept = _send(adapter, (UserMessage("Weather?"), first.to_message(), result))
        bodies = [request.body for request in emu.requests]
    # both passed the API's check (and met the exhausted script)
    for error in (bare_round, kept):
        assert isinstance(error, PromptEvaluationError)
        assert "script is exhausted" in str(error)
    assert "thinking" not in bodies[1]
    assert bodies[2]["thinking"]["type"] in ("enabled", "adaptive")


def _send(adapter: ProviderAdapter, messages: tuple[Any, ...]) -> Any:
    """One request through the adapter's runner, on a fresh event loop (a new client)."""

    async def go() -> Any:
        try:
            return await adapter.model_client(blocking=False).request(ModelRequest("r", messages))
        except PromptEvaluationError as error:
            return error
        finally:
            await adapter.aclose()

    return asyncio.run(go())


def test_anthropic_no_text_block_is_added_to_a_turn_without_text() -> None:
    script = [Turn.tool_calls(PARIS, thinking="Use the tool."), Turn.text("Sunny.")]
    _, _, requests = evaluate("anthropic", script, thinking=2048, model="claude-sonnet-4-5")
    kinds = [block["type"] for block in requests[1].body["messages"][1]["content"]]
    assert kinds == ["thinking", "tool_use"]


# --- Anthropic pause_turn: sent back unchanged, counted as a round


def test_pause_turn_is_sent_back_unchanged_and_the_model_goes_on() -> None:
    script = [Turn.paused("Searching.", thinking="Search first."), Turn.text("Found it.")]
    response, _, requests = evaluate("anthropic", script, thinking="low")
    assert (response.text, response.finish_reason, response.rounds) == ("Found it.", "stop", 2)
    assert response.usage.requests == 2
    messages = requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]  # the paused turn, last
    kinds = [block["type"] for block in messages[1]["content"]]
    assert kinds == ["thinking", "text", "server_tool_use", "web_search_tool_result"]


def test_a_pause_counts_as_a_round() -> None:
    with pytest.raises(PromptEvaluationError) as caught:
        evaluate("anthropic", [Turn.paused(), Turn.text("late")], max_rounds=1)
    assert caught.value.phase == "budget"


def test_a_paused_turn_and_its_continuation_go_back_as_one_assistant_turn() -> None:
    script = [
        Turn.paused("Searching.", thinking="Search first."),
        Turn.tool_calls(PARIS),
        Turn.text("Sunny."),
    ]
    response, _, requests = evaluate("anthropic", script, thinking="low")
    assert response.text == "Sunny."
    roles = [m["role"] for m in requests[2].body["messages"]]
    assert roles == ["user", "assistant", "user"]
    kinds = [block["type"] for block in requests[2].body["messages"][1]["content"]]
    assert kinds == ["thinking", "text", "server_tool_use", "web_search_tool_result", "tool_use"]


# --- OpenAI Responses: items back as the API gave them


def test_responses_items_go_back_as_given_with_their_ids() -> None:
    script = [
        Turn.tool_calls(PARIS, text="Checking.", thinking="Use the tool."),
        Turn.text("Sunny."),
    ]
    response, _, requests = evaluate(
        "openai-responses", script, thinking=Thinking(effort="low", show=True)
    )
    assert (response.text, response.thinking) == ("Sunny.", "Use the tool.")
    items = requests[1].body["input"]
    assert [item.get("type", item.get("role")) for item in items] == [
        "user",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    reasoning, message, call = items[1:4]
    assert reasoning["id"].startswith("rs_")
    assert reasoning["encrypted_content"]
    assert message["id"].startswith("msg_")
    assert call["id"].startswith("fc_")
    assert call["call_id"] == "call_paris"


def test_responses_turn_rebuilt_without_its_items_leaves_its_reasoning_out() -> None:
    part = ThinkingPart("openai-responses", text="t", raw={"type": "reasoning", "id": "rs_1"})
    message = AssistantMessage("Checking.", (ToolCall("c1", "weather", "{}"),), thinking=(part,))
    body = _body("openai-responses", (UserMessage("go"), message))
    assert [item.get("type", item.get("role")) for item in body["input"]] == [
        "user",
        "assistant",
        "function_call",
    ]


# --- Gemini: parts back as given, thought parts and signatures in place


def test_gemini3_steps_go_back_with_their_parts_and_signatures() -> None:
    script = [
        Turn.tool_calls(PARIS, EmulatedToolCall("weather", {"city": "Lyon"}), thinking="Both."),
        Turn.text("Sunny.", thinking="Done."),
    ]
    response, _, requests = evaluate("google", script, thinking=Thinking(effort="low", show=True))
    assert (response.text, response.thinking) == ("Sunny.", "Both.\n\nDone.")
    parts = requests[1].body["contents"][1]["parts"]
    assert parts[0] == {"text": "Both.", "thought": True}
    assert [("thoughtSignature" in part) for part in parts[1:]] == [True, False]


def test_gemini_unexpected_tool_call_is_an_error_and_runs_nothing() -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}],
                },
                "finishReason": "UNEXPECTED_TOOL_CALL",
            }
        ],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3},
    }
    with pytest.raises(PromptEvaluationError) as caught:
        evaluate("google", [Fault.http(200, body)])
    # had the call run, its result would have gone out and met the exhausted script
    assert caught.value.phase == "response"
    assert "reported an error" in caught.value.message
    assert caught.value.provider_payload is not None  # the body, to read what was called


# --- Chat Completions: thinking parts read, never sent back


MISTRAL = {
    "id": "x",
    "object": "chat.completion",
    "model": "magistral-medium-latest",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": "Use it."}]},
                    {"type": "text", "text": "Checking."},
                ],
                "tool_calls": [
                    {
                        "id": "call_paris",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
}


def test_chat_reads_thinking_parts_and_sends_only_the_text_back() -> None:
    response, _, requests = evaluate(
        "openai", [Fault.http(200, MISTRAL), Turn.text("Sunny.")], model="magistral-medium"
    )
    assert (response.text, response.thinking) == ("Sunny.", "Use it.")
    assistant = requests[1].body["messages"][1]
    assert assistant["content"] == "Checking."
    assert "thinking" not in json.dumps(requests[1].body)


# --- never to another provider


CLAUDE_TURN = AssistantMessage(
    "Checking.",
    (ToolCall("call_1", "weather", {"city": "Paris"}),),
    thinking=(
        ThinkingPart(
            "anthropic",
            text="secret",
            signature="SIG",
            raw={"type": "thinking", "thinking": "secret", "signature": "SIG"},
        ),
    ),
    native=NativeOutput(
        "anthropic",
        (
            {"type": "thinking", "thinking": "secret", "signature": "SIG"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}},
        ),
    ),
)


def _body(provider: str, messages: tuple[Any, ...]) -> dict[str, Any]:
    adapter = create_adapter(f"{provider}:{MODELS[provider]}", api_key="k")
    return dict(adapter.api.build_request(ModelRequest("r", messages)).body)


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "google"])
def test_thinking_never_goes_to_another_provider(provider: str) -> None:
    messages = (
        UserMessage("go"),
        CLAUDE_TURN,
        ToolResultMessage("call_1", "weather", "sunny"),
    )
    text = json.dumps(_body(provider, messages))
    assert "secret" not in text
    assert "SIG" not in text
    assert "Checking." in text
    assert "weather" in text


def test_the_same_provider_gets_it_back_and_a_foreign_part_is_dropped() -> None:
    foreign = ThinkingPart("google", text="other", raw={"text": "other", "thought": True})
    turn = AssistantMessage("Checking.", CLAUDE_TURN.tool_calls, thinking=(foreign,))
    for message, expected in ((CLAUDE_TURN, "SIG"), (turn, None)):
        body = _body("anthropic", (UserMessage("go"), message))
        blocks = body["messages"][1]["content"]
        if expected is None:
            assert [block["type"] for block in blocks] == ["text", "tool_use"]
        else:
            assert blocks[0] == {"type": "thinking", "thinking": "secret", "signature": "SIG"}


# --- usage: one name, one convention


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reasoning_tokens_are_part_of_output_tokens_everywhere(provider: str) -> None:
    script = [Turn.text("Sunny.", output_tokens=50, reasoning_tokens=30)]
    response, _, _ = evaluate(provider, script)
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (50, 30)


# --- a malformed reasoning part is a malformed answer, not a crash


@pytest.mark.parametrize(
    ("provider", "body", "message"),
    [
        (
            "anthropic",
            {"content": [{"type": "thinking", "thinking": "t"}], "usage": {}},
            "a thinking block has no thinking text or signature",
        ),
        (
            "anthropic",
            {"content": [{"type": "redacted_thinking"}], "usage": {}},
            "a redacted_thinking block has no data",
        ),
        (
            "google",
            {"candidates": [{"content": {"parts": [{"text": 3, "thought": True}]}}]},
            "a thought part's text is not a string",
        ),
        (
            "openai",
            {"choices": [{"message": {"content": {"type": "text"}}}]},
            "neither a string nor a list of parts",
        ),
        (
            "openai",
            {"choices": [{"message": {"content": [{"type": "text", "text": None}]}}]},
            "a text part of message.content has no text",
        ),
    ],
)
def test_a_malformed_reasoning_part_is_a_response_error(
    provider: str, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(PromptEvaluationError) as caught:
        evaluate(provider, [Fault.http(200, body)])
    assert caught.value.phase == "response"
    assert message in str(caught.value)


def test_anthropic_thinking_parts_alone_still_go_first() -> None:
    """A transcript kept without the native turn (built by hand, restored): the parts
    are enough to send Claude's thinking back in front."""
    parts = (
        ThinkingPart("anthropic", text="plan", signature="SIG"),
        ThinkingPart("anthropic", redacted="DATA"),
    )
    turn = AssistantMessage(None, CLAUDE_TURN.tool_calls, thinking=parts)
    blocks = _body("anthropic", (UserMessage("go"), turn))["messages"][1]["content"]
    assert blocks == [
        {"type": "thinking", "thinking": "plan", "signature": "SIG"},
        {"type": "redacted_thinking", "data": "DATA"},
        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}},
    ]
