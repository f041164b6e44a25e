"""tests/conformance/reasoning: real thinking and tool traffic of the four APIs, replayed.

Each recorded response goes through the real SDK (the emulator sends it verbatim) and must
become the outcome its `expected` documents; each turn with calls must produce the
follow-up the API accepted (the recorded one where there is one), sent to the emulator,
whose own checks (a Gemini 3 step without its signature) apply to wink's request.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from wink import PromptEvaluationError, RetryPolicy, create_adapter
from wink.core.foundation.messages import (
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from wink.testing import Fault, ProviderEmulator, Turn

REASONING = Path(__file__).resolve().parents[1] / "conformance" / "reasoning"
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}
PROVIDERS = {
    "anthropic": "anthropic",
    "responses": "openai-responses",
    "google": "google",
    "openai": "openai",
}
# What the recorded request asked for, as wink's one setting (None: nothing asked).
THINKING: dict[str, Any] = {
    "anthropic/thinking_adaptive_tool_use.json": "high",
    "anthropic/followup_thinking_tool_use_tool_result.json": "high",
    "anthropic/thinking_budget_text_tool_use.json": 8000,
    "anthropic/thinking_budget_tool_use_no_text.json": 8000,
    "anthropic/thinking_text_usage_thinking_tokens.json": 1024,
    "responses/reasoning_summary_function_call.json": "low",
    "responses/followup_echoes_reasoning_summary.json": "low",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((REASONING / name).read_text(encoding="utf-8"))


def model_of(name: str) -> str:
    request = load(name)["request"]
    if name.startswith("google/"):
        return request["url"].rsplit("/models/", 1)[1].split(":")[0]
    return request["body"]["model"]


def recorded_answer(name: str) -> Fault:
    response = load(name)["response"]
    headers = {k: v for k, v in (response.get("headers") or {}).items() if k not in _HOP_BY_HOP}
    return Fault.http(response["status"], response["body"], headers)


def send(
    name: str, messages: tuple[Any, ...], answer: Fault | Turn | None = None
) -> tuple[ModelResponse | PromptEvaluationError, dict[str, Any]]:
    """`messages` sent as `name`'s request would be (same provider, model and thinking),
    answered by `answer` (default: the recorded response). (outcome, body sent)."""
    provider = PROVIDERS[name.split("/")[0]]
    options: dict[str, Any] = {"thinking": THINKING.get(name)}
    if name.startswith("anthropic/"):
        options["max_tokens"] = load(name)["request"]["body"]["max_tokens"]
    with ProviderEmulator([answer or recorded_answer(name)]) as emu:  # queued: checks apply
        adapter = create_adapter(
            f"{provider}:{model_of(name)}",
            base_url=emu.base_url(provider),  # type: ignore[arg-type]
            api_key="test-key",
            retry_policy=RetryPolicy(max_attempts=1),
            **options,
        )

        async def go() -> ModelResponse | PromptEvaluationError:
            try:
                return await adapter.model_client(blocking=False).request(
                    ModelRequest("recorded", messages)
                )
            except PromptEvaluationError as error:
                return error
            finally:
                await adapter.aclose()

        outcome = asyncio.run(go())
        (request,) = emu.requests
    return outcome, request.body


def ok(outcome: ModelResponse | PromptEvaluationError) -> ModelResponse:
    assert isinstance(outcome, ModelResponse), outcome
    return outcome


def first_user_text(name: str) -> str:
    body = load(name)["request"]["body"]
    if name.startswith("google/"):
        return body["contents"][0]["parts"][0]["text"]
    first = (body.get("messages") or body.get("input"))[0]
    content = first["content"]
    return content if isinstance(content, str) else content[0]["text"]


def without(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key not in keys}


def signature_bytes(signature: str) -> bytes:
    """A thought signature's bytes, whichever base64 alphabet spells it."""
    text = signature.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4))


NAMES = sorted(str(path.relative_to(REASONING)) for path in REASONING.rglob("*.json"))


# --- every response: the documented outcome


@pytest.mark.parametrize("name", NAMES)
def test_the_response_becomes_the_documented_outcome(name: str) -> None:
    expected = load(name)["expected"]
    response = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    assert response.finish_reason == expected["finish_reason"]
    assert response.text == expected["text"]
    calls = [(call.name, json.loads(call.arguments_json())) for call in response.tool_calls]
    assert calls == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    for call, documented in zip(response.tool_calls, expected["tool_calls"], strict=True):
        if documented["id"] is None:  # Gemini sent none: a local one, never sent
            assert (call.provider_data or {}).get("synthetic_id") is True
        else:
            assert call.id == documented["id"]
    usage = dataclasses.asdict(response.usage)
    assert {key: usage[key] for key in expected["usage"]} == expected["usage"]


# --- Anthropic: the thinking block goes back first, verbatim


def _anthropic_follow_up(name: str, answer: Fault | Turn) -> tuple[Any, dict[str, Any]]:
    first = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    assert first.thinking[0].provider == "anthropic"
    results = tuple(ToolResultMessage(call.id, call.name, "README.md") for call in first.tool_calls)
    messages = (UserMessage(first_user_text(name)), first.to_message(), *results)
    outcome, body = send(name, messages, answer)
    return ok(outcome), body


def test_anthropic_recorded_follow_up_is_what_wink_sends() -> None:
    name = "anthropic/thinking_adaptive_tool_use.json"
    follow_up = "anthropic/followup_thinking_tool_use_tool_result.json"
    recorded = load(follow_up)["request"]["body"]
    second, body = _anthropic_follow_up(name, recorded_answer(follow_up))
    sent = [without(block, "caller") for block in body["messages"][1]["content"]]
    assert sent == recorded["messages"][1]["content"]  # thinking (signature) first, verbatim
    assert body["thinking"] == recorded["thinking"]
    [result] = body["messages"][2]["content"]
    assert without(result, "content") == without(
        recorded["messages"][2]["content"][0], "content", "is_error"
    )
    assert second.text == load(follow_up)["expected"]["text"]


@pytest.mark.parametrize(
    "name",
    [
        "anthropic/thinking_budget_text_tool_use.json",
        "anthropic/thinking_budget_tool_use_no_text.json",
    ],
)
def test_anthropic_budget_turns_go_back_as_received(name: str) -> None:
    _, body = _anthropic_follow_up(name, Turn.text("F(100) = 354224848179261915075"))
    recorded = load(name)
    assert body["messages"][1]["content"] == recorded["response"]["body"]["content"]
    assert body["thinking"] == recorded["request"]["body"]["thinking"]
    assert body["max_tokens"] == recorded["request"]["body"]["max_tokens"]


def test_anthropic_thinking_tokens_and_text_are_read_apart_from_the_answer() -> None:
    name = "anthropic/thinking_text_usage_thinking_tokens.json"
    response = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    block = load(name)["response"]["body"]["content"][0]
    assert response.thinking_text == block["thinking"]
    assert response.thinking[0].signature == block["signature"]
    assert block["thinking"] not in (response.text or "")


# --- Responses: items back verbatim, each followed by its own


@pytest.mark.parametrize(
    ("name", "follow_up", "output"),
    [
        (
            "responses/reasoning_summary_function_call.json",
            "responses/followup_echoes_reasoning_summary.json",
            "plan updated",
        ),
        (
            "responses/reasoning_encrypted_function_call.json",
            "responses/followup_echoes_reasoning_then_reasoning_message.json",
            "Mexico",
        ),
    ],
)
def test_responses_recorded_follow_up_is_what_wink_sends(
    name: str, follow_up: str, output: str
) -> None:
    first = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    reasoning = load(name)["response"]["body"]["output"][0]
    assert first.thinking[0].raw == reasoning
    assert first.text is None  # a summary is not answer text
    (call,) = first.tool_calls
    messages = (
        UserMessage(first_user_text(name)),
        first.to_message(),
        ToolResultMessage(call.id, call.name, output),
    )
    second, body = send(follow_up, messages)
    recorded = load(follow_up)["request"]["body"]["input"]
    sent = body["input"]
    assert sent[0] == recorded[0]
    assert sent[1] == recorded[1]  # the reasoning item verbatim, first
    assert without(sent[2], "status") == recorded[2]  # the function_call with its fc_ id
    assert sent[3] == recorded[3]
    assert ok(second).text == load(follow_up)["expected"]["text"]


def test_responses_a_later_echo_keeps_the_message_id_after_its_reasoning() -> None:
    name = "responses/followup_echoes_reasoning_then_reasoning_message.json"
    answer = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    messages = (UserMessage("Capital?"), answer.to_message(), UserMessage("And its population?"))
    _, body = send(name, messages, Turn.text("About 9 million."))
    output = load(name)["response"]["body"]["output"]
    assert body["input"][1:3] == output  # reasoning, then the message item with its msg_ id


def test_responses_summary_text_is_the_thinking() -> None:
    name = "responses/reasoning_summary_function_call.json"
    response = ok(send(name, (SystemMessage("plan"), UserMessage(first_user_text(name))))[0])
    summary = load(name)["response"]["body"]["output"][0]["summary"]
    assert response.thinking_text == "\n\n".join(part["text"] for part in summary)


# --- Gemini: every signature back on its own part


def test_gemini_recorded_follow_up_carries_the_signature_on_the_first_call() -> None:
    name = "google/parallel_calls_signature_on_first.json"
    follow_up = "google/followup_parallel_echo_signature_text_signature.json"
    first = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    results = tuple(ToolResultMessage(c.id, c.name, "notes") for c in first.tool_calls)
    messages = (UserMessage(first_user_text(name)), first.to_message(), *results)
    second, body = send(follow_up, messages)
    sent = body["contents"][1]["parts"]
    recorded = load(follow_up)["request"]["body"]["contents"][1]["parts"]
    assert [part["functionCall"] for part in sent] == [part["functionCall"] for part in recorded]
    assert [signature_bytes(p["thoughtSignature"]) for p in sent if "thoughtSignature" in p] == [
        signature_bytes(p["thoughtSignature"]) for p in recorded if "thoughtSignature" in p
    ]
    assert "thoughtSignature" in sent[0]  # on the first only, and no id was invented
    assert all("id" not in part["functionCall"] for part in sent)
    # the answer's text part carries a signature of its own: it goes back on that part
    answer = ok(second)
    later = (*messages, answer.to_message(), UserMessage("Thanks."))
    _, third = send(follow_up, later, Turn.text("You're welcome."))
    text_part = load(follow_up)["response"]["body"]["candidates"][0]["content"]["parts"][0]
    assert third["contents"][-2] == {"role": "model", "parts": [text_part]}


def test_gemini3_both_signed_steps_of_the_turn_go_back() -> None:
    """The emulator answers for gemini-3 models as Gemini 3 does: a step of the current
    turn sent back without its signature is a 400, so each request here is checked."""
    name = "google/gemini3_parallel_calls_signature.json"
    follow_up = "google/gemini3_followup_echo_then_signed_call.json"
    first = ok(send(name, (UserMessage(""),))[0])
    results = tuple(ToolResultMessage(c.id, c.name, "cars") for c in first.tool_calls)
    messages: tuple[Any, ...] = (UserMessage(""), first.to_message(), *results)
    second = ok(send(follow_up, messages)[0])
    (call,) = second.tool_calls
    messages = (*messages, second.to_message(), ToolResultMessage(call.id, call.name, "dogs"))
    outcome, body = send(follow_up, messages, Turn.text("Three jokes."))
    assert ok(outcome).text == "Three jokes."
    steps = [content for content in body["contents"] if content["role"] == "model"]
    assert [["thoughtSignature" in part for part in step["parts"]] for step in steps] == [
        [True, False, False],
        [True],
    ]


def test_gemini3_a_step_without_its_signature_is_refused_like_the_real_api() -> None:
    name = "google/gemini3_parallel_calls_signature.json"
    first = ok(send(name, (UserMessage(""),))[0])
    unsigned = tuple(dataclasses.replace(call, provider_data=None) for call in first.tool_calls)
    bare = dataclasses.replace(first.to_message(), tool_calls=unsigned, native=None)
    results = tuple(ToolResultMessage(c.id, c.name, "cars") for c in unsigned)
    outcome, _ = send(name, (UserMessage(""), bare, *results))
    assert isinstance(outcome, PromptEvaluationError)
    assert outcome.phase == "request"
    assert "Function call is missing a thought_signature" in str(outcome)


# --- Chat Completions: reasoning counted, never echoed; a compatible server's parts read


def test_chat_recorded_follow_up_is_what_wink_sends() -> None:
    name = "openai/chat_o3mini_tool_call_reasoning_tokens.json"
    follow_up = "openai/chat_o3mini_final_after_tool_reasoning_tokens.json"
    recorded = load(follow_up)["request"]["body"]["messages"]
    first = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    (call,) = first.tool_calls
    messages = (
        UserMessage(recorded[0]["content"]),
        first.to_message(),
        ToolResultMessage(call.id, call.name, "12"),
        UserMessage(recorded[3]["content"]),
    )
    second, body = send(follow_up, messages)
    assert body["messages"] == recorded
    assert ok(second).usage.reasoning_tokens == 64


def test_compatible_server_content_parts_are_text_and_thinking() -> None:
    name = "openai/compat_mistral_content_parts_thinking.json"
    response = ok(send(name, (UserMessage(first_user_text(name)),))[0])
    [thinking_part, _] = load(name)["response"]["body"]["choices"][0]["message"]["content"]
    assert response.thinking_text == thinking_part["thinking"][0]["text"]
    assert response.thinking[0].provider == "openai"


def test_every_reasoning_recording_is_covered() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert len(NAMES) == 16
    assert [name for name in NAMES if name not in source] == []
