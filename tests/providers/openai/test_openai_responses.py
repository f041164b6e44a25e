"""The OpenAI Responses adapter (`wink.providers.openai.responses`): recorded traffic
replayed through the SDK, and the request and response translation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.prompts import CONVERSATION, SEARCH_SPEC, WEATHER_SPEC
from tests.helpers.wire import HI, failed_round, load_recording, ok, replay, request_error
from wink.core.foundation.messages import (
    ModelRequest,
    OutputSpec,
    ToolCall,
    Usage,
)
from wink.core.foundation.settings import ModelSettings
from wink.core.transport.errors import MalformedResponse
from wink.providers.openai.responses import build_request, parse_response

# --- recorded traffic


def test_openai_responses_parallel_calls_in_order() -> None:
    response = ok(replay("openai-responses", "openai/responses_function_calls.json")[0])
    output = load_recording("openai/responses_function_calls.json")["response"]["body"]["output"]
    recorded = [item for item in output if item["type"] == "function_call"]
    assert [call.id for call in response.tool_calls] == [item["call_id"] for item in recorded]
    assert len(response.tool_calls) == 2


def test_openai_responses_failed_output_renders_like_the_recording() -> None:
    name = "openai/responses_final_after_failed_function_output.json"
    recorded_input = load_recording(name)["request"]["body"]["input"]
    failed = next(
        item
        for item in recorded_input
        if item.get("type") == "function_call_output" and "Fix the errors" in item["output"]
    )
    call = next(i for i in recorded_input if i.get("call_id") == failed["call_id"])
    messages = failed_round(
        ToolCall(call["call_id"], call["name"], call["arguments"]), failed["output"]
    )
    outcome, emu, _ = replay("openai-responses", name, messages)
    assert ok(outcome).text
    sent = emu.requests[0].body["input"]
    assert sent[-2] == {k: call[k] for k in ("type", "call_id", "name", "arguments")}
    assert sent[-1]["type"] == failed["type"]
    assert sent[-1]["call_id"] == failed["call_id"]
    assert sent[-1]["output"] == "Error: " + failed["output"]


def test_openai_responses_client_error() -> None:
    name = "openai/responses_400_invalid_temperature.json"
    error = request_error(replay("openai-responses", name)[0])
    recorded = load_recording(name)["response"]["body"]["error"]
    assert error.provider_payload is not None
    assert error.provider_payload["code"] == recorded["code"]
    assert error.provider_payload["param"] == recorded["param"]
    assert error.provider_payload["status_code"] == load_recording(name)["response"]["status"]


# --- request building


def body_for(**fields: Any) -> dict[str, Any]:
    """The Responses body for `messages` (default: one user question) and the other fields."""
    settings = fields.pop("settings", ModelSettings())
    messages = fields.pop("messages", HI)
    return build_request(ModelRequest("p", messages, **fields), "gpt-4.1", settings)


def test_a_conversation_maps_to_input_items_and_instructions() -> None:
    assert body_for(messages=CONVERSATION) == {
        "model": "gpt-4.1",
        "instructions": "Be brief.\n\nUse metric units.",
        "input": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "Checking."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "weather",
                "arguments": '{"city":"Paris"}',
            },
            {
                "type": "function_call",
                "call_id": "call_2",
                "name": "weather",
                "arguments": '{"city": ',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {
                "type": "function_call_output",
                "call_id": "call_2",
                "output": "Error: not valid JSON",
            },
            {"role": "user", "content": "And tomorrow?"},
        ],
    }


def test_tools_are_flat_and_say_whether_they_are_strict() -> None:
    weather, search = body_for(tools=(WEATHER_SPEC, SEARCH_SPEC))["tools"]
    assert weather == {
        "type": "function",
        "name": "weather",
        "description": "Weather by city",
        "parameters": {**WEATHER_SPEC.parameters, "additionalProperties": False},
        "strict": True,
    }
    assert (search["parameters"], search["strict"]) == (SEARCH_SPEC.parameters, False)


def test_structured_output_is_the_text_format() -> None:
    body = body_for(output=OutputSpec("Answer", WEATHER_SPEC.parameters))
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Answer",
            "schema": {**WEATHER_SPEC.parameters, "additionalProperties": False},
            "strict": True,
        }
    }


def test_settings_use_the_responses_names_and_never_send_stop_or_seed() -> None:
    settings = ModelSettings(
        temperature=0.2, max_tokens=100, top_p=0.9, stop=("END",), seed=7, extra={"store": False}
    )
    body = body_for(settings=settings)
    assert {key: value for key, value in body.items() if key not in ("model", "input")} == {
        "temperature": 0.2,
        "max_output_tokens": 100,
        "top_p": 0.9,
        "store": False,
    }


# --- response parsing


def message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": list(parts)}


def text(value: str) -> dict[str, Any]:
    return {"type": "output_text", "text": value, "annotations": []}


def test_text_parts_are_joined_and_a_plain_answer_stops() -> None:
    body = {"status": "completed", "output": [message(text("Sunny "), text("in Paris."))]}
    response = parse_response(body)
    assert (response.text, response.finish_reason, response.tool_calls) == (
        "Sunny in Paris.",
        "stop",
        (),
    )
    assert response.raw is body


def test_calls_come_back_in_order_with_their_arguments_as_sent() -> None:
    calls = [
        {"type": "function_call", "call_id": "a", "name": "weather", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "weather", "arguments": {"x": 1}},
    ]
    response = parse_response({"status": "completed", "output": calls})
    assert response.finish_reason == "tool_calls"
    assert response.text is None
    assert [(c.id, c.arguments) for c in response.tool_calls] == [("a", "{}"), ("b", '{"x": 1}')]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}, "length"),
        (
            {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
            "content_filter",
        ),
        ({"status": "incomplete", "incomplete_details": None}, "other"),
        ({"status": "failed"}, "error"),
    ],
)
def test_an_unfinished_response_says_why(fields: dict[str, Any], expected: str) -> None:
    response = parse_response({**fields, "output": [message(text("partial"))]})
    assert response.finish_reason == expected


def test_a_refusal_part_is_a_refusal() -> None:
    refusal = {"type": "refusal", "refusal": "I can't help with that."}
    response = parse_response({"status": "completed", "output": [message(refusal)]})
    assert (response.text, response.finish_reason) == (None, "refusal")


def test_usage_counts_cached_and_reasoning_tokens() -> None:
    usage = {
        "input_tokens": 90,
        "output_tokens": 50,
        "input_tokens_details": {"cached_tokens": 64},
        "output_tokens_details": {"reasoning_tokens": 30},
    }
    response = parse_response({"status": "completed", "output": [], "usage": usage})
    assert response.usage == Usage(
        input_tokens=90, output_tokens=50, cached_tokens=64, reasoning_tokens=30
    )


@pytest.mark.parametrize(
    "body",
    [
        "output",
        {"output": None},
        {"output": ["item"]},
        {"output": [{"type": "message", "content": "text"}]},
        {"output": [message({"type": "output_text"})]},
        {"output": [{"type": "function_call", "name": "weather", "arguments": "{}"}]},
    ],
)
def test_wrong_shapes_are_reported_not_crashed_on(body: Any) -> None:
    with pytest.raises(MalformedResponse):
        parse_response(body)
