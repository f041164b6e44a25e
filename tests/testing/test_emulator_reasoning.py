"""Scripted thinking on every wire, through the real SDKs, and the emulator refusing a
follow-up that sends it back wrong with the 400 the real API gives."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from wink.testing import EmulatedThinking, EmulatedToolCall, ProviderEmulator, Turn
from wink.testing.thinking import ReasoningLedger, intact, opens, seal

THINKING_ON: dict[str, Any] = {"type": "enabled", "budget_tokens": 2048}
USER: dict[str, Any] = {"role": "user", "content": "Weather in Paris?"}
WEATHER = EmulatedToolCall("get_weather", {"city": "Paris"}, id="toolu_weather")


def claude(client: anthropic.Anthropic, messages: list[Any], **extra: Any) -> Any:
    return client.messages.create(
        model="claude-sonnet-4-6", max_tokens=4096, messages=messages, **extra
    )


def tool_round(message: Any) -> list[Any]:
    """The follow-up of a tool round: the assistant turn as received, then its result."""
    return [
        USER,
        {"role": "assistant", "content": message.to_dict()["content"]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_weather", "content": "sun"}],
        },
    ]


# --- tokens


def test_sealed_tokens_open_only_for_their_text_and_survive_base64url() -> None:
    token = seal("I should look it up.")
    assert opens(token, "I should look it up.") is True
    assert opens(token, "I should look it up!") is False
    assert intact(token) is True
    assert intact(token.replace("+", "-").replace("/", "_").rstrip("=")) is True
    assert intact(token[:-6]) is False  # truncated
    assert intact("EoECCkYICxgCKkC9kJCX") is None  # a real signature: not the emulator's


def test_the_ledger_is_bounded() -> None:
    ledger = ReasoningLedger(limit=2)
    for key in "abc":
        ledger.remember(key, key.upper())
    assert [ledger.recall(key) for key in "abc"] == [None, "B", "C"]
    ledger.clear()
    assert ledger.recall("c") is None


# --- Anthropic


def test_anthropic_thinking_blocks_come_first_and_only_with_thinking_on(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    turn = Turn.tool_calls(
        WEATHER,
        text="Checking.",
        thinking=["Paris: use the tool.", EmulatedThinking("hidden", redacted=True)],
    )
    emu.enqueue(turn, turn)
    message = claude(anthropic_client, [USER], thinking=THINKING_ON)
    assert [block.type for block in message.content] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    thinking, redacted = message.content[0], message.content[1]
    assert thinking.type == "thinking"
    assert redacted.type == "redacted_thinking"
    assert thinking.thinking == "Paris: use the tool."
    assert opens(thinking.signature, thinking.thinking) is True
    assert intact(redacted.data) is True
    # without thinking on, the real API does not think
    plain = claude(anthropic_client, [USER])
    assert [block.type for block in plain.content] == ["text", "tool_use"]


def test_anthropic_display_omitted_empties_the_text(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.text("Sunny.", thinking="secret reasoning"))
    message = claude(anthropic_client, [USER], thinking={"type": "adaptive", "display": "omitted"})
    block = message.content[0]
    assert block.type == "thinking"
    assert block.thinking == ""
    assert opens(block.signature, "") is True


def test_anthropic_follow_up_with_the_thinking_intact_is_accepted(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.tool_calls(WEATHER, thinking="Use the tool."), Turn.text("Sunny."))
    first = claude(anthropic_client, [USER], thinking=THINKING_ON)
    second = claude(anthropic_client, tool_round(first), thinking=THINKING_ON)
    assert second.content[0].type == "text"


@pytest.mark.parametrize(
    ("alter", "message"),
    [
        (
            lambda blocks: blocks[1:],  # the thinking block dropped
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            "`tool_use`. When `thinking` is enabled, a final `assistant` message must start "
            "with a thinking block",
        ),
        (
            lambda blocks: [{**blocks[0], "thinking": "Use the tool!"}, *blocks[1:]],
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (
            lambda blocks: [blocks[1], blocks[0]],  # not first any more
            "Expected `thinking` or `redacted_thinking`, but found `tool_use`",
        ),
    ],
)
def test_anthropic_follow_up_that_drops_or_alters_thinking_is_refused(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic, alter: Any, message: str
) -> None:
    emu.enqueue(Turn.tool_calls(WEATHER, thinking="Use the tool."), Turn.text("Sunny."))
    first = claude(anthropic_client, [USER], thinking=THINKING_ON)
    messages = tool_round(first)
    messages[1]["content"] = alter(messages[1]["content"])
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude(anthropic_client, messages, thinking=THINKING_ON)
    assert caught.value.status_code == 400
    assert message in caught.value.message
    assert emu.pending == 1  # a refused request uses up no turn


def test_anthropic_altered_redacted_thinking_is_refused(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.tool_calls(WEATHER, thinking=EmulatedThinking("x", redacted=True)))
    messages = tool_round(claude(anthropic_client, [USER], thinking=THINKING_ON))
    block = messages[1]["content"][0]
    messages[1]["content"][0] = {**block, "data": block["data"][:-8]}
    with pytest.raises(anthropic.BadRequestError, match="Invalid `data` in `redacted_thinking`"):
        claude(anthropic_client, messages, thinking=THINKING_ON)


def test_anthropic_thinking_without_thinking_on_in_final_position_is_refused(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.text("Sunny.", thinking="Easy."))
    first = claude(anthropic_client, [USER], thinking=THINKING_ON)
    prefill = [USER, {"role": "assistant", "content": [first.content[0].model_dump()]}]
    with pytest.raises(anthropic.BadRequestError, match="When thinking is disabled"):
        claude(anthropic_client, prefill)


def test_anthropic_paused_turn_and_its_unchanged_continuation(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.paused("Searching.", thinking="Search first."), Turn.text("Found it."))
    paused = claude(anthropic_client, [USER], thinking=THINKING_ON)
    assert paused.stop_reason == "pause_turn"
    kinds = [block.type for block in paused.content]
    assert kinds == ["thinking", "text", "server_tool_use", "web_search_tool_result"]
    blocks = paused.to_dict()["content"]  # as received
    altered = [USER, {"role": "assistant", "content": blocks[:3]}]  # the result dropped
    with pytest.raises(anthropic.BadRequestError, match="must be sent back unchanged"):
        claude(anthropic_client, altered, thinking=THINKING_ON)
    unchanged = [USER, {"role": "assistant", "content": blocks}]
    assert claude(anthropic_client, unchanged, thinking=THINKING_ON).content[0].type == "text"


# --- OpenAI Responses


def test_responses_reasoning_item_summary_and_encrypted_content_when_asked(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    turn = Turn.tool_calls(WEATHER, text="Checking.", thinking="Use the tool.")
    emu.enqueue(turn, turn)
    response = openai_client.responses.create(
        model="o4-mini",
        input="Weather?",
        reasoning={"effort": "low", "summary": "auto"},
        include=["reasoning.encrypted_content"],
    )
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    reasoning = response.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.id.startswith("rs_")
    assert [part.text for part in reasoning.summary] == ["Use the tool."]
    assert intact(reasoning.encrypted_content) is True
    plain = openai_client.responses.create(model="o4-mini", input="Weather?")
    first = plain.output[0]
    assert first.type == "reasoning"
    assert (first.summary, first.encrypted_content) == ([], None)


def _responses_follow_up(client: openai.OpenAI, emu: ProviderEmulator) -> list[dict[str, Any]]:
    emu.enqueue(Turn.tool_calls(WEATHER, text="Checking.", thinking="Use the tool."))
    response = client.responses.create(model="o4-mini", input="Weather?")
    items = [item.model_dump(exclude_none=True) for item in response.output]
    result = {"type": "function_call_output", "call_id": "toolu_weather", "output": "sun"}
    return [{"role": "user", "content": "Weather?"}, *items, result]


def test_responses_items_sent_back_as_given_are_accepted(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    follow_up = _responses_follow_up(openai_client, emu)
    emu.enqueue(Turn.text("Sunny."))
    answer = openai_client.responses.create(model="o4-mini", input=follow_up)  # type: ignore[arg-type]
    assert answer.output_text == "Sunny."


def test_responses_reasoning_without_its_following_item_is_refused(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    user, reasoning, message, call, result = _responses_follow_up(openai_client, emu)
    rebuilt = {"role": "assistant", "content": message["content"][0]["text"]}  # no id
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(
            model="o4-mini",
            input=[user, reasoning, rebuilt, call, result],  # type: ignore[list-item]
        )
    assert caught.value.body == {
        "message": f"Item '{reasoning['id']}' of type 'reasoning' was provided without its "
        "required following item.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }


def test_responses_item_without_its_reasoning_is_refused(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    user, reasoning, message, call, result = _responses_follow_up(openai_client, emu)
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(
            model="o4-mini",
            input=[user, message, call, result],  # type: ignore[list-item]
        )
    assert caught.value.body["message"] == (  # type: ignore[index]
        f"Item '{message['id']}' of type 'message' was provided without its required "
        f"'reasoning' item: '{reasoning['id']}'."
    )
    # dropping the reasoning together with the items it led to is fine
    emu.enqueue(Turn.text("Sunny."))
    plain_call = {k: call[k] for k in ("type", "call_id", "name", "arguments")}
    answer = openai_client.responses.create(model="o4-mini", input=[user, plain_call, result])  # type: ignore[list-item]
    assert answer.output_text == "Sunny."


def test_chat_completions_shows_no_reasoning(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.text("Sunny.", thinking="hidden", output_tokens=20, reasoning_tokens=12))
    completion = openai_client.chat.completions.create(
        model="o4-mini", messages=[{"role": "user", "content": "Weather?"}]
    )
    assert completion.choices[0].message.content == "Sunny."
    assert completion.usage is not None
    details = completion.usage.completion_tokens_details
    assert details is not None
    assert details.reasoning_tokens == 12


# --- Gemini


def _thinking_config(include: bool) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=include, thinking_budget=1024)
    )


def test_gemini_thought_parts_when_asked_and_a_signature_on_the_first_call(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    turn = Turn.tool_calls(WEATHER, EmulatedToolCall("get_time"), thinking="Two calls.")
    emu.enqueue(turn, turn)
    shown = google_client.models.generate_content(
        model="gemini-2.5-flash", contents="Weather?", config=_thinking_config(True)
    )
    parts = shown.candidates[0].content.parts  # type: ignore[index,union-attr]
    assert [(bool(p.thought), p.text, p.function_call is not None) for p in parts] == [
        (True, "Two calls.", False),
        (False, None, True),
        (False, None, True),
    ]
    assert parts[1].thought_signature
    assert not parts[2].thought_signature
    hidden = google_client.models.generate_content(
        model="gemini-2.5-flash", contents="Weather?", config=_thinking_config(False)
    )
    assert [bool(p.thought) for p in hidden.candidates[0].content.parts] == [False, False]  # type: ignore[index,union-attr]


def test_gemini_text_answer_carries_the_signature_on_its_last_part(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(Turn.text("Sunny.", thinking="Easy."))
    answer = google_client.models.generate_content(model="gemini-2.5-flash", contents="Weather?")
    (part,) = answer.candidates[0].content.parts  # type: ignore[index,union-attr]
    assert (part.text, bool(part.thought_signature)) == ("Sunny.", True)


def _gemini3_follow_up(emu: ProviderEmulator, signed: bool) -> dict[str, Any]:
    model_parts: list[dict[str, Any]] = [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_time", "args": {}}},
    ]
    if signed:
        model_parts[0]["thoughtSignature"] = seal("x")
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": model_parts},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"output": "sun"}}},
                    {"functionResponse": {"name": "get_time", "response": {"output": "noon"}}},
                ],
            },
        ]
    }


def test_gemini3_signs_every_step_and_refuses_a_step_without_its_signature(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    import httpx2

    emu.enqueue(Turn.tool_calls(WEATHER), Turn.text("Sunny."))
    step = google_client.models.generate_content(model="gemini-3-flash-preview", contents="W?")
    assert step.candidates[0].content.parts[0].thought_signature  # type: ignore[index,union-attr]
    url = f"{emu.base_url('google')}/v1beta/models/gemini-3-flash-preview:generateContent"
    missing = httpx2.post(url, json=_gemini3_follow_up(emu, signed=False))
    assert missing.status_code == 400
    error = missing.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith(
        "Function call is missing a thought_signature in functionCall parts."
    )
    assert "`default_api:get_weather` , position 2." in error["message"]
    signed = httpx2.post(url, json=_gemini3_follow_up(emu, signed=True))
    assert signed.status_code == 200
    # Gemini 2.5 does not check
    older = f"{emu.base_url('google')}/v1beta/models/gemini-2.5-flash:generateContent"
    emu.enqueue(Turn.text("ok"))
    assert httpx2.post(older, json=_gemini3_follow_up(emu, signed=False)).status_code == 200


def test_reset_forgets_the_thinking(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    """A call its Claude made without thinking needs none; once reset, the emulator no
    longer knows the call, and takes it as another model's (the API's rule applies)."""
    emu.enqueue(Turn.tool_calls(WEATHER), Turn.text("Sunny."))
    messages = tool_round(claude(anthropic_client, [USER], thinking=THINKING_ON))
    assert claude(anthropic_client, messages, thinking=THINKING_ON).content[0].type == "text"
    emu.reset()
    emu.enqueue(Turn.text("Sunny."))
    with pytest.raises(anthropic.BadRequestError, match="Expected `thinking`"):
        claude(anthropic_client, messages, thinking=THINKING_ON)


def test_a_tool_call_another_model_made_needs_thinking_first(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    """With thinking on, the API refuses a final assistant turn calling tools without a
    thinking block first, whoever made it; with thinking off, the same turn is taken."""
    foreign = [
        USER,
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_other",
                    "name": "weather",
                    "input": {"city": "Paris"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_other", "content": "sunny"}],
        },
    ]
    emu.enqueue(Turn.text("Sunny."))
    with pytest.raises(anthropic.BadRequestError, match="Expected `thinking`"):
        claude(anthropic_client, foreign, thinking=THINKING_ON)
    assert claude(anthropic_client, foreign).content[0].type == "text"


def test_anthropic_a_call_id_reused_without_thinking_needs_none(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.tool_calls(WEATHER, thinking="Use the tool."), Turn.tool_calls(WEATHER))
    claude(anthropic_client, [USER], thinking=THINKING_ON)
    second = claude(anthropic_client, [USER], thinking={"type": "adaptive"})
    assert [block.type for block in second.content] == ["tool_use"]
    emu.enqueue(Turn.text("Sunny."))
    answer = claude(anthropic_client, tool_round(second), thinking={"type": "adaptive"})
    assert answer.content[0].type == "text"
