"""The OpenAI Chat Completions adapter (`wink.providers.openai.chat`): recorded traffic replayed
through the SDK, the request and response translation, and the error map."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

import wink
from tests.helpers.adapters import KEY
from tests.helpers.prompts import CONVERSATION, HELLO, SEARCH_SPEC, WEATHER_SPEC
from tests.helpers.sdk_errors import exception_classes, mapped, sdk_exception, status_response
from tests.helpers.wire import HI, load_recording, ok, replay, request_error
from wink import OpenAIAdapter, PromptEvaluationError, Session, ThrottleError, create_adapter
from wink.core.foundation.messages import (
    AssistantMessage,
    ModelRequest,
    OutputSpec,
    ToolResultMessage,
    ToolSpec,
    Usage,
)
from wink.core.foundation.settings import ModelSettings
from wink.core.transport.errors import MalformedResponse
from wink.providers.openai.chat import build_request, parse_response
from wink.providers.openai.client import failure_text, map_openai_errors, strict_schema
from wink.testing import ProviderEmulator, Turn

# --- recorded traffic


def test_openai_chat_tool_call() -> None:
    response = ok(replay("openai", "openai/chat_tool_call.json")[0])
    [call] = response.tool_calls
    recorded = load_recording("openai/chat_tool_call.json")["response"]["body"]["choices"][0][
        "message"
    ]
    assert call.id == recorded["tool_calls"][0]["id"]
    assert call.name == recorded["tool_calls"][0]["function"]["name"]
    assert json.loads(call.arguments_json()) == json.loads(
        recorded["tool_calls"][0]["function"]["arguments"]
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage.input_tokens > 0


def test_openai_chat_final_text() -> None:
    response = ok(replay("openai", "openai/chat_final_text_after_tool_result.json")[0])
    assert response.text
    assert response.finish_reason == "stop"
    assert response.usage.output_tokens > 0


def test_openai_rate_limit_headers_are_read() -> None:
    response = ok(replay("openai", "openai/chat_tool_call_with_ratelimit_headers.json")[0])
    assert len(response.tool_calls) == 1
    assert response.rate_limit is not None
    assert response.rate_limit.remaining_requests == 29999
    assert response.rate_limit.reset_requests == pytest.approx(0.002)


@pytest.mark.parametrize(
    "name", ["openai/chat_400_unsupported_value.json", "openai/chat_404_model_not_found.json"]
)
def test_openai_client_errors(name: str) -> None:
    error = request_error(replay("openai", name)[0])
    recorded = load_recording(name)["response"]["body"]["error"]
    assert error.provider_payload is not None
    assert error.provider_payload["code"] == recorded["code"]
    assert error.provider_payload["param"] == recorded["param"]
    assert error.provider_payload["status_code"] == load_recording(name)["response"]["status"]


def test_openai_compatible_429_is_a_rate_limit() -> None:
    outcome = replay("openai", "openai/compat_openrouter_429.json")[0]
    assert isinstance(outcome, ThrottleError)
    assert outcome.details.kind == "rate_limit"
    assert outcome.details.retry_safe is True
    assert outcome.details.retry_after is None


# --- the error map


@pytest.mark.slow
def test_every_openai_exception_is_mapped() -> None:
    classes = exception_classes(openai, openai.OpenAIError)
    assert len(classes) > 10
    for cls in classes:
        status = getattr(cls, "status_code", None)
        error = sdk_exception(cls, status if isinstance(status, int) else 500)
        mapped(map_openai_errors("p"), error)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, wink.BadRequestError),
        (401, wink.AuthenticationError),
        (403, wink.PermissionDeniedError),
        (404, wink.NotFoundError),
        (409, wink.BadRequestError),
        (422, wink.BadRequestError),
    ],
)
def test_client_errors_are_request_errors(status: int, kind: type[PromptEvaluationError]) -> None:
    response = status_response(status, {"error": {"message": "m"}})
    error = openai.APIStatusError("m", response=response, body={"message": "m"})  # type: ignore[arg-type]
    wink_error = mapped(map_openai_errors("p"), error)
    assert type(wink_error) is kind
    assert (wink_error.phase, wink_error.status_code) == ("request", status)


# --- request building


def body_for(**fields: Any) -> dict[str, Any]:
    """The Chat body for `messages` (default: one user question) and the other fields."""
    settings = fields.pop("settings", ModelSettings())
    messages = fields.pop("messages", HI)
    return build_request(ModelRequest("p", messages, **fields), "gpt-4.1", settings)


def test_a_conversation_maps_to_chat_messages() -> None:
    assert body_for(messages=CONVERSATION) == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {"role": "system", "content": "Use metric units."},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": '},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: not valid JSON"},
            {"role": "user", "content": "And tomorrow?"},
        ],
    }


def test_an_assistant_turn_without_calls_sends_no_tool_calls() -> None:
    turns = (AssistantMessage(text="Sunny."), AssistantMessage(text=None))
    assert body_for(messages=turns)["messages"] == [
        {"role": "assistant", "content": "Sunny."},
        {"role": "assistant", "content": None},
    ]


def test_a_success_never_reads_like_a_failure() -> None:
    """Chat has no error flag: the "Error: " prefix is the flag, so a success that happens
    to start with it is set apart."""
    looks_failed = ToolResultMessage("c", "search", "Error: 0 results is a valid answer")
    assert failure_text(looks_failed) == " Error: 0 results is a valid answer"
    failed = ToolResultMessage("c", "search", "Error: timeout", success=False)
    assert failure_text(failed) == "Error: Error: timeout"


def test_tools_are_strict_where_strict_mode_can_express_them() -> None:
    weather, search = body_for(tools=(WEATHER_SPEC, SEARCH_SPEC))["tools"]
    assert weather == {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Weather by city",
            "parameters": {**WEATHER_SPEC.parameters, "additionalProperties": False},
            "strict": True,
        },
    }
    assert search["function"]["parameters"] == SEARCH_SPEC.parameters
    assert "strict" not in search["function"]


def test_strict_schema_closes_every_object_and_leaves_its_input_alone() -> None:
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    schema = {"type": "object", "properties": {"where": city}, "required": ["where"]}
    strict = strict_schema(schema)
    assert strict is not None
    assert strict["additionalProperties"] is False
    assert strict["properties"]["where"]["additionalProperties"] is False
    assert "additionalProperties" not in schema
    assert "additionalProperties" not in city
    assert strict_schema({**city, "additionalProperties": True}) is None
    optional_item = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
    assert strict_schema({"type": "array", "items": optional_item}) is None


@pytest.mark.parametrize(("spec", "strict"), [(WEATHER_SPEC, True), (SEARCH_SPEC, False)])
def test_structured_output_is_a_json_schema_response_format(spec: ToolSpec, strict: bool) -> None:
    body = body_for(output=OutputSpec("Answer", spec.parameters))
    expected = {**spec.parameters, "additionalProperties": False} if strict else spec.parameters
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": expected, "strict": strict},
    }
    assert "tools" not in body


def test_settings_use_the_chat_names_and_extra_body_has_the_last_word() -> None:
    settings = ModelSettings(
        temperature=0.2,
        max_tokens=100,
        top_p=0.9,
        stop=("END",),
        seed=7,
        extra={"temperature": 0.3, "user": "u1"},
    )
    body = body_for(settings=settings)
    assert {key: value for key, value in body.items() if key not in ("model", "messages")} == {
        "temperature": 0.3,
        "max_completion_tokens": 100,
        "top_p": 0.9,
        "stop": ["END"],
        "seed": 7,
        "user": "u1",
    }


# --- response parsing


def completion(message: dict[str, Any], finish_reason: str | None = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("function_call", "tool_calls"),
        ("something_new", "other"),
        (None, "other"),
    ],
)
def test_finish_reasons(reason: str | None, expected: str) -> None:
    body = completion({"role": "assistant", "content": "x"}, reason)
    assert parse_response(body).finish_reason == expected


def test_a_refusal_is_its_own_finish_reason() -> None:
    message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    response = parse_response(completion(message))
    assert (response.text, response.finish_reason) == (None, "refusal")


def test_tool_calls_in_order_whatever_the_finish_reason_says() -> None:
    calls = [
        {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "weather", "arguments": {"x": 1}}},
        {"id": "c", "type": "function", "function": {"name": "weather", "arguments": None}},
    ]
    body = completion({"role": "assistant", "content": None, "tool_calls": calls}, "stop")
    response = parse_response(body)
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("a", "{}"),
        ("b", '{"x": 1}'),  # compatible servers that send an object: kept as JSON text
        ("c", ""),
    ]
    assert response.raw is body


def test_usage_counts_cached_and_reasoning_tokens_and_may_be_absent() -> None:
    body = completion({"role": "assistant", "content": "x"})
    assert parse_response(body).usage == Usage()  # a compatible server that sent none
    body["usage"] = {
        "prompt_tokens": 120,
        "completion_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 32},
    }
    assert parse_response(body).usage == Usage(
        input_tokens=120, output_tokens=40, cached_tokens=100, reasoning_tokens=32
    )


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"choices": []},
        {"choices": "none"},
        {"choices": ["x"]},
        {"choices": [{"finish_reason": "stop"}]},
        completion({"content": ["parts"]}),
        completion({"content": None, "tool_calls": {"id": "a"}}),
        completion({"content": None, "tool_calls": [{"id": "a"}]}),
        completion({"content": None, "tool_calls": [{"function": {"name": "w"}}]}),
        completion({"content": "x", "tool_calls": [{"id": "a", "function": {"name": 3}}]}),
    ],
)
def test_wrong_shapes_are_reported_not_crashed_on(body: Any) -> None:
    with pytest.raises(MalformedResponse):
        parse_response(body)


# --- the client


def test_the_sdk_client_has_its_retries_off_and_the_adapters_timeout() -> None:
    adapter = OpenAIAdapter("gpt-4.1", api_key=KEY, timeout=12.0)
    sync_client, async_client = (
        adapter.api.make_client(sync=True),
        adapter.api.make_client(sync=False),
    )
    assert (type(sync_client), type(async_client)) == (openai.OpenAI, openai.AsyncOpenAI)
    for client in (sync_client, async_client):
        assert (client.max_retries, client.timeout) == (0, 12.0)
    sync_client.close()


def test_a_compatible_server_needs_no_key(
    emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    emulator.enqueue(Turn.text("hello from a local model"))
    adapter = create_adapter("openai:llama3", base_url=emulator.base_url("openai"))
    assert adapter.evaluate(HELLO, session=Session()).text == "hello from a local model"
    adapter.close()
