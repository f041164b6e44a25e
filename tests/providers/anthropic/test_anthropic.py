"""The Anthropic Messages adapter (`wink.providers.anthropic.messages`): recorded traffic replayed
through the SDK, the request and response translation, and the error map."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.helpers.adapters import KEY
from tests.helpers.prompts import CONVERSATION, WEATHER_SPEC
from tests.helpers.sdk_errors import exception_classes, mapped, sdk_exception, status_response
from tests.helpers.wire import HI, failed_round, load_recording, ok, replay, request_error
from wink import AnthropicAdapter, ThrottleError
from wink.core.foundation.messages import (
    ModelRequest,
    OutputSpec,
    ToolCall,
    Usage,
)
from wink.core.foundation.settings import ModelSettings
from wink.core.transport.errors import MalformedResponse
from wink.providers.anthropic.messages import build_request, map_errors, parse_response

# --- recorded traffic


def test_anthropic_tool_use() -> None:
    response = ok(replay("anthropic", "anthropic/tool_use.json")[0])
    recorded = load_recording("anthropic/tool_use.json")["response"]["body"]["content"]
    use = next(block for block in recorded if block["type"] == "tool_use")
    assert response.text
    [call] = response.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == (use["id"], use["name"], use["input"])  # type: ignore[arg-type]


def test_anthropic_failed_result_renders_like_the_recording() -> None:
    name = "anthropic/tool_result_is_error_then_retry.json"
    assistant, user = load_recording(name)["request"]["body"]["messages"][-2:]
    use = next(block for block in assistant["content"] if block["type"] == "tool_use")
    [result] = user["content"]
    messages = failed_round(ToolCall(use["id"], use["name"], use["input"]), result["content"])
    outcome, emu, _ = replay("anthropic", name, messages)
    assert len(ok(outcome).tool_calls) == 1
    sent = emu.requests[0].body["messages"][-1]
    assert sent == {"role": "user", "content": [result]}


def test_anthropic_final_text_with_cache_usage() -> None:
    name = "anthropic/final_text_after_tool_results.json"
    response = ok(replay("anthropic", name)[0])
    usage = load_recording(name)["response"]["body"]["usage"]
    assert response.text
    assert response.finish_reason == "stop"
    assert response.usage.cached_tokens == usage.get("cache_read_input_tokens", 0)
    assert response.usage.input_tokens == (
        usage["input_tokens"]
        + usage.get("cache_read_input_tokens", 0)
        + usage.get("cache_creation_input_tokens", 0)
    )


def test_anthropic_rate_limit_headers_are_read() -> None:
    name = "anthropic/tool_use_with_ratelimit_headers.json"
    response = ok(replay("anthropic", name)[0])
    headers = load_recording(name)["response"]["headers"]
    assert len(response.tool_calls) == 1
    assert response.rate_limit is not None
    assert response.rate_limit.limit_requests == int(headers["anthropic-ratelimit-requests-limit"])


def test_anthropic_retry_after_on_a_200_causes_no_wait() -> None:
    outcome, _, adapter = replay("anthropic", "anthropic/text_with_ratelimit_headers.json")
    assert ok(outcome).text
    assert adapter._pacer.idle  # a retry-after on a success blocks nobody


@pytest.mark.parametrize(
    "name", ["anthropic/400_invalid_request.json", "anthropic/404_not_found.json"]
)
def test_anthropic_client_errors(name: str) -> None:
    error = request_error(replay("anthropic", name)[0])
    assert error.provider_payload is not None
    assert error.provider_payload["error"] == load_recording(name)["response"]["body"]["error"]


# --- the error map


def test_every_anthropic_exception_is_mapped() -> None:
    classes = exception_classes(anthropic, anthropic.AnthropicError)
    assert len(classes) > 10
    for cls in classes:
        mapped(map_errors("p"), sdk_exception(cls, 500))


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, "rate_limit"), (500, "overloaded"), (503, "overloaded"), (529, "overloaded")],
)
def test_status_classes_pick_the_throttle_kind(status: int, kind: str) -> None:
    response = status_response(status, {"type": "error"})
    error = anthropic.APIStatusError("m", response=response, body={"type": "error"})  # type: ignore[arg-type]
    wink_error = mapped(map_errors("p"), error)
    assert isinstance(wink_error, ThrottleError)
    assert wink_error.details.kind == kind


# --- request building


def body_for(**fields: Any) -> dict[str, Any]:
    """The Messages body for `messages` (default: one user question) and the other fields."""
    settings = fields.pop("settings", ModelSettings())
    messages = fields.pop("messages", HI)
    return build_request(ModelRequest("p", messages, **fields), "claude-sonnet-4-6", settings)


def test_a_conversation_maps_to_alternating_turns_and_a_system_text() -> None:
    assert body_for(messages=CONVERSATION) == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,  # the API requires one
        "system": "Be brief.\n\nUse metric units.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    },
                    # arguments that are not an object went back as a failure; the echo of
                    # the call must still carry an object
                    {"type": "tool_use", "id": "call_2", "name": "weather", "input": {}},
                ],
            },
            {  # the results and the next question: one user turn
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_2",
                        "content": "not valid JSON",
                        "is_error": True,
                    },
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
    }


def test_structured_output_is_one_more_tool_after_the_prompts() -> None:
    output = OutputSpec("Answer", {"type": "object", "properties": {"city": {"type": "string"}}})
    body = body_for(tools=(WEATHER_SPEC,), output=output)
    assert body["tools"] == [
        {
            "name": "weather",
            "description": "Weather by city",
            "input_schema": WEATHER_SPEC.parameters,
        },
        {
            "name": "final_result_Answer",
            "description": "Give the final answer as a Answer. Call this once, when done.",
            "input_schema": output.schema,
        },
    ]


def test_settings_use_the_messages_names() -> None:
    settings = ModelSettings(
        temperature=0.2, max_tokens=100, top_p=0.9, stop=("END",), extra={"top_k": 5}
    )
    body = body_for(settings=settings)
    assert {key: value for key, value in body.items() if key not in ("model", "messages")} == {
        "max_tokens": 100,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "top_k": 5,
    }


# --- response parsing

USAGE = {"input_tokens": 12, "output_tokens": 5}


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "refusal"),
        ("pause_turn", "paused"),
        ("something_new", "other"),
    ],
)
def test_stop_reasons(reason: str, expected: str) -> None:
    body = {"content": [{"type": "text", "text": "x"}], "stop_reason": reason, "usage": USAGE}
    assert parse_response(body).finish_reason == expected


def test_text_and_calls_come_back_together_in_order() -> None:
    body = {
        "content": [
            {"type": "thinking", "thinking": "...", "signature": "s"},
            {"type": "text", "text": "Let me "},
            {"type": "text", "text": "check."},
            {"type": "tool_use", "id": "a", "name": "weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "b", "name": "weather", "input": "Paris"},
            {"type": "tool_use", "id": "c", "name": "weather", "input": ["Paris"]},
        ],
        "stop_reason": "tool_use",
        "usage": USAGE,
    }
    response = parse_response(body)
    assert (response.text, response.finish_reason) == ("Let me check.", "tool_calls")
    # an input that is not an object is kept raw, for the executor to report
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("a", {"city": "Paris"}),
        ("b", "Paris"),
        ("c", '["Paris"]'),
    ]
    assert response.raw is body


def test_usage_counts_cache_reads_and_writes_as_input() -> None:
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 300,
        "output_tokens": 7,
    }
    body = {"content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn", "usage": usage}
    assert parse_response(body).usage == Usage(
        input_tokens=2310, output_tokens=7, cached_tokens=2000, cache_write_tokens=300
    )


@pytest.mark.parametrize(
    "body",
    [
        "content",
        {"content": None, "usage": USAGE},
        {"content": ["text"], "usage": USAGE},
        {"content": [{"type": "text"}], "usage": USAGE},
        {"content": [{"type": "tool_use", "name": "weather", "input": {}}], "usage": USAGE},
        {"content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn"},
        {"content": [], "stop_reason": "tool_use", "usage": USAGE},
    ],
)
def test_wrong_shapes_are_reported_not_crashed_on(body: Any) -> None:
    with pytest.raises(MalformedResponse):
        parse_response(body)


# --- the client


def test_the_sdk_client_has_its_retries_off_and_the_adapters_timeout() -> None:
    adapter = AnthropicAdapter("claude-sonnet-4-6", api_key=KEY, timeout=12.0)
    sync_client, async_client = (
        adapter.api.make_client(sync=True),
        adapter.api.make_client(sync=False),
    )
    assert (type(sync_client), type(async_client)) == (
        anthropic.Anthropic,
        anthropic.AsyncAnthropic,
    )
    for client in (sync_client, async_client):
        assert (client.max_retries, client.timeout) == (0, 12.0)
    sync_client.close()
