"""Multi-turn requests on the emulator: the history each one carried (`HistoryEntry`,
`Turn.expecting`), and the real APIs' 400s for a conversation they refuse.

Each rule is the provider's, with its own words: the messages were taken from the
providers' answers as users met them (an Anthropic `tool_result` must answer the
`tool_use` of the message before it, every OpenAI `tool_call` id must be answered by the
`tool` messages right after it, ...), and the o1-mini one from the recorded traffic in
tests/conformance/openai/chat_400_unsupported_value.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from wink.testing import (
    EmulatedRequest,
    EmulatorInternalError,
    HistoryEntry,
    ProviderEmulator,
    Turn,
)

CONFORMANCE = Path(__file__).parents[1] / "conformance"

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent"


def post(emu: ProviderEmulator, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(emu.url + path, json=body)


def chat(*messages: dict[str, Any], model: str = "gpt-4.1") -> dict[str, Any]:
    return {"model": model, "messages": list(messages)}


def assistant_calls(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "w", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


USER = {"role": "user", "content": "Weather?"}


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "sunny"}


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    return response.json()["error"]


# --- Chat Completions


def test_chat_answers_every_tool_call_id_or_refuses() -> None:
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        good = chat(USER, assistant_calls("c1", "c2"), tool("c2"), tool("c1"), USER)
        assert post(emu, CHAT, good).status_code == 200
        unanswered = error_of(
            post(emu, CHAT, chat(USER, assistant_calls("c1", "c2"), tool("c1"), USER))
        )
        assert unanswered["message"] == (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            "response messages: c2"
        )
        assert unanswered["param"] == "messages.[3].role"
        orphan = error_of(post(emu, CHAT, chat(USER, tool("c1"))))
        assert orphan["message"] == (
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'."
        )
        late = error_of(post(emu, CHAT, chat(USER, assistant_calls("c1"), USER, tool("c1"))))
        assert late["message"].startswith("An assistant message with 'tool_calls'")


def test_chat_refuses_a_call_id_over_40_characters() -> None:
    long_id = "call_" + "x" * 36
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        error = error_of(post(emu, CHAT, chat(USER, assistant_calls(long_id), tool(long_id))))
    assert error["message"] == (
        "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with "
        "maximum length 40, but got a string with length 41 instead."
    )
    assert (error["param"], error["code"]) == (
        "messages[1].tool_calls[0].id",
        "string_above_max_length",
    )


def test_the_first_o1_models_refuse_instructions_as_the_recording_shows() -> None:
    recorded = json.loads((CONFORMANCE / "openai/chat_400_unsupported_value.json").read_text())
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        error = error_of(post(emu, CHAT, recorded["request"]["body"]))
        developer = {"role": "developer", "content": "Be brief."}
        later = error_of(post(emu, CHAT, chat(USER, developer, model="o1-preview")))
        assert post(emu, CHAT, chat(developer, USER, model="o4-mini")).status_code == 200
    expected = recorded["response"]["body"]["error"]
    assert {k: error[k] for k in ("message", "param", "code")} == {
        k: expected[k] for k in ("message", "param", "code")
    }
    assert later["message"] == (
        "Unsupported value: 'messages[1].role' does not support 'developer' with this model."
    )


# --- Responses


def call_item(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "w", "arguments": "{}"}


def output_item(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "sunny"}


def test_responses_pairs_each_call_with_an_output() -> None:
    ask = {"role": "user", "content": "Weather?"}
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        good = {"model": "gpt-4.1", "input": [ask, call_item("c1"), output_item("c1")]}
        assert post(emu, RESPONSES, good).status_code == 200
        orphan = error_of(post(emu, RESPONSES, {"model": "m", "input": [ask, output_item("c9")]}))
        assert orphan["message"] == "No tool call found for function call output with call_id c9."
        assert orphan["param"] == "input"
        missing = error_of(post(emu, RESPONSES, {"model": "m", "input": [ask, call_item("c1")]}))
        assert missing["message"] == "No tool output found for function call c1."
        stored = {"model": "m", "input": [output_item("c1")], "previous_response_id": "resp_1"}
        assert post(emu, RESPONSES, stored).status_code == 200  # the call is stored upstream


# --- Anthropic


def use(*ids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": "w", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def result(*ids: str, text: str | None = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": i, "content": "sunny"} for i in ids
    ]
    if text is not None:
        blocks.append({"type": "text", "text": text})
    return {"role": "user", "content": blocks}


def messages(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": list(turns)}


def anthropic_error(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"]["type"] == "invalid_request_error"
    return body["error"]["message"]


def test_anthropic_answers_each_tool_use_in_the_next_message() -> None:
    ask = {"role": "user", "content": "Weather?"}
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        good = messages(ask, use("toolu_1", "toolu_2"), result("toolu_2", "toolu_1", text="And?"))
        assert post(emu, MESSAGES, good).status_code == 200
        unanswered = post(
            emu, MESSAGES, messages(ask, use("toolu_1", "toolu_2"), result("toolu_1"))
        )
        assert anthropic_error(unanswered) == (
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message."
        )
        late = post(emu, MESSAGES, messages(ask, use("toolu_1"), ask, result("toolu_1")))
        assert anthropic_error(late).startswith("messages.1: `tool_use` ids were found")
        orphan = post(
            emu, MESSAGES, messages(ask, {"role": "assistant", "content": "Hm."}, result("toolu_9"))
        )
        assert anthropic_error(orphan) == (
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message."
        )


def test_anthropic_refuses_a_tool_use_id_out_of_its_pattern_and_a_system_message() -> None:
    ask = {"role": "user", "content": "Weather?"}
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        dotted = post(emu, MESSAGES, messages(ask, use("call.1"), result("call.1")))
        system = post(emu, MESSAGES, messages({"role": "system", "content": "Be brief."}, ask))
    assert anthropic_error(dotted) == (
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
    )
    assert anthropic_error(system) == (
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
        'parameter, not "system" as an input message role.'
    )


# --- Gemini


def contents(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"contents": list(turns)}


def model_calls(count: int) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}] * count}


def responses(count: int) -> dict[str, Any]:
    part = {"functionResponse": {"name": "w", "response": {"output": "sunny"}}}
    return {"role": "user", "parts": [part] * count}


ASK = {"role": "user", "parts": [{"text": "Weather?"}]}


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        (
            (ASK, responses(1)),
            "Please ensure that function response turn comes immediately after a function "
            "call turn.",
        ),
        (
            (ASK, model_calls(2), responses(1)),
            "Please ensure that the number of function response parts is equal to the number "
            "of function call parts of the function call turn.",
        ),
        (
            (ASK, model_calls(1), ASK),
            "Please ensure that the number of function response parts is equal to the number "
            "of function call parts of the function call turn.",
        ),
        (
            (model_calls(1), responses(1)),
            "Please ensure that function call turn comes immediately after a user turn or "
            "after a function response turn.",
        ),
    ],
)
def test_gemini_refuses_turns_out_of_order(turns: tuple[dict[str, Any], ...], message: str) -> None:
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        good = contents(ASK, model_calls(2), responses(2), model_calls(1), responses(1))
        assert post(emu, GEMINI, good).status_code == 200
        error = error_of(post(emu, GEMINI, contents(*turns)))
    assert error["message"] == message
    assert error["status"] == "INVALID_ARGUMENT"


# --- the history each request carried


TOOL_ROUND = [
    "user: Weather?",
    'call w: {"city":"Paris"}',
    "result w: sunny",
    "assistant: Sunny.",
    "user: Thanks.",
]
BODIES: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": (
        CHAT,
        chat(
            {"role": "system", "content": "Be brief."},
            USER,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            tool("c1"),
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": "Thanks."},
        ),
    ),
    "openai-responses": (
        RESPONSES,
        {
            "model": "gpt-4.1",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather?"},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {**call_item("c1"), "arguments": '{"city":"Paris"}'},
                output_item("c1"),
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Sunny."}],
                },
                {"role": "user", "content": [{"type": "input_text", "text": "Thanks."}]},
            ],
        },
    ),
    "anthropic": (
        MESSAGES,
        {
            **messages(
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "x"},
                        {"type": "tool_use", "id": "c1", "name": "w", "input": {"city": "Paris"}},
                    ],
                },
                result("c1"),
                {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
                {"role": "user", "content": "Thanks."},
            ),
            "system": "Be brief.",
        },
    ),
    "google": (
        GEMINI,
        {
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                ASK,
                {
                    "role": "model",
                    "parts": [
                        {"text": "pondering", "thought": True},
                        {"functionCall": {"name": "w", "args": {"city": "Paris"}}},
                    ],
                },
                responses(1),
                {"role": "model", "parts": [{"text": "Sun"}, {"text": "ny."}]},
                {"role": "user", "parts": [{"text": "Thanks."}]},
            ],
        },
    ),
}


@pytest.mark.parametrize("provider", list(BODIES))
def test_each_wire_reads_back_the_conversation_a_request_carried(provider: str) -> None:
    path, body = BODIES[provider]
    seen: list[EmulatedRequest] = []
    with ProviderEmulator(lambda request: seen.append(request) or Turn.text("ok")) as emu:
        assert post(emu, path, body).status_code == 200
        (recorded,) = emu.requests
    assert [str(entry) for entry in seen[0].history] == TOOL_ROUND
    assert recorded.history == seen[0].history
    assert seen[0].instructions == recorded.instructions == "Be brief."
    call = seen[0].history[1]
    assert (call.role, call.name) == ("call", "w")


def test_a_history_entry_reads_as_one_line() -> None:
    assert str(HistoryEntry("user", "Hi")) == "user: Hi"
    assert str(HistoryEntry("assistant", "Hello")) == "assistant: Hello"
    assert str(HistoryEntry("call", '{"city":"Paris"}', "w", "c1")) == 'call w: {"city":"Paris"}'
    assert str(HistoryEntry("result", "sunny", "w", "c1", False)) == "result w: sunny"
    assert str(HistoryEntry("result", "no station", "w", "c1", True)) == "error w: no station"


def test_a_turn_answers_only_a_request_with_the_history_it_expects() -> None:
    expected = Turn.text("You are Ada.").expecting_history("user: I am Ada.", "user: Who am I?")
    body = chat({"role": "user", "content": "I am Ada."}, {"role": "user", "content": "Who?"})
    with ProviderEmulator([expected]) as emu:
        refused = post(emu, CHAT, body)
        assert refused.status_code == 418
        assert emu.pending == 1  # the turn was not used up
        with pytest.raises(EmulatorInternalError) as caught:
            emu.check()
        body["messages"][1]["content"] = "Who am I?"
        answered = post(emu, CHAT, body)
    (error,) = caught.value.errors
    assert error.source == "expectation"
    assert "step 1 of the history is 'user: Who?', the turn expects 'user: Who am I?'" in (
        error.message
    )
    assert answered.json()["choices"][0]["message"]["content"] == "You are Ada."
