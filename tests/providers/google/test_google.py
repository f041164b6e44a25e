"""The Gemini adapter: conformance recordings, request/response translation, error map, wire."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from typing import Any, cast

import httpx2
import pytest

from tests.helpers.adapters import MODELS, NO_RETRY
from tests.helpers.sdk_errors import exception_classes, mapped, sdk_exception
from tests.helpers.wire import (
    failed_round,
    load_recording,
    ok,
    replay,
    request_error,
    request_once,
    send_once,
)
from wink import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    GoogleAdapter,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    ThrottleError,
    WinkError,
)
from wink.adapters.base import ModelSettings
from wink.core.foundation.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    OutputSpec,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    output_tool_spec,
)
from wink.core.transport.errors import MalformedResponse
from wink.providers.google.generate import build_request, parse_response
from wink.providers.google.http import DEFAULT_BASE_URL, GeminiErrorAnswer, endpoint, map_errors
from wink.testing import Fault, ProviderEmulator, Turn

MODEL = MODELS["google"]
NO_SETTINGS = ModelSettings()
CAPITAL_SCHEMA = {
    "additionalProperties": False,
    "properties": {"country": {"description": "The country name.", "type": "string"}},
    "required": ["country"],
    "type": "object",
}
CAPITAL_TOOL = ToolSpec("get_capital", "Get the capital of a country.", CAPITAL_SCHEMA)
FAILURE_TEXT = (
    'The country is not supported. Use "La France" instead.\n\nFix the errors and try again.'
)


def without_ids(value: Any) -> Any:
    """The recordings carry pydantic-ai's own call ids; Gemini itself sent none."""
    if isinstance(value, dict):
        return {k: without_ids(v) for k, v in cast(dict[str, Any], value).items() if k != "id"}
    if isinstance(value, list):
        return [without_ids(item) for item in cast(list[Any], value)]
    return value


def answer(fault: Fault, mode: str = "async", **options: Any) -> WinkError:
    """The error the adapter raises when the emulator answers with `fault`."""
    result, _, _ = request_once("google", fault, sync=mode == "sync", **options)
    assert isinstance(result, WinkError), result
    return result


# --- conformance: responses


def test_function_call_recording_keeps_the_thought_signature() -> None:
    body = load_recording("google/function_call.json")["response"]["body"]
    response = parse_response(body)
    assert response.finish_reason == "tool_calls"
    assert response.text is None
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("get_capital", {"country": "France"})
    # Gemini sent no id: a local, marked one, in characters every provider accepts
    assert re.fullmatch(r"call_[0-9a-f]{24}", call.id)
    part = body["candidates"][0]["content"]["parts"][0]
    assert call.provider_data == {
        "synthetic_id": True,
        "thought_signature": part["thoughtSignature"],
    }
    assert response.usage.input_tokens == 57
    assert response.usage.output_tokens == 15 + 124
    assert response.usage.reasoning_tokens == 124
    assert response.raw is body


def test_failed_result_renders_like_the_recording_and_signature_goes_back() -> None:
    first = load_recording("google/function_call.json")
    retry = load_recording("google/function_response_error_then_retry.json")
    answer = parse_response(first["response"]["body"])
    request = ModelRequest(
        "capital",
        (
            SystemMessage("You are a helpful chatbot."),
            UserMessage("What is the capital of France?"),
            answer.to_message(),
            ToolResultMessage(answer.tool_calls[0].id, "get_capital", FAILURE_TEXT, success=False),
        ),
        tools=(CAPITAL_TOOL,),
    )
    body = build_request(request, ModelSettings(temperature=0.0))
    recorded = retry["request"]["body"]
    assert without_ids(body["contents"][0]) == recorded["contents"][0]
    model_part = body["contents"][1]["parts"][0]
    signature = first["response"]["body"]["candidates"][0]["content"]["parts"][0]
    assert model_part["thoughtSignature"] == signature["thoughtSignature"]  # verbatim
    assert model_part["functionCall"] == {"name": "get_capital", "args": {"country": "France"}}
    assert without_ids(body["contents"][2]) == without_ids(recorded["contents"][2])
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {
        "error": FAILURE_TEXT
    }
    assert body["systemInstruction"]["parts"] == recorded["systemInstruction"]["parts"]
    (declaration,) = body["tools"][0]["functionDeclarations"]
    (recorded_declaration,) = recorded["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == recorded_declaration["parameters_json_schema"]
    assert body["generationConfig"] == {"temperature": 0.0}

    next_answer = parse_response(retry["response"]["body"])
    assert [(c.name, c.arguments) for c in next_answer.tool_calls] == [
        ("get_capital", {"country": "La France"})
    ]


def test_final_text_recording() -> None:
    data = load_recording("google/final_text_after_function_response.json")
    response = parse_response(data["response"]["body"])
    assert (response.text, response.finish_reason, response.tool_calls) == ("Paris", "stop", ())
    part = data["response"]["body"]["candidates"][0]["content"]["parts"][0]
    assert response.provider_data == {"thought_signature": part["thoughtSignature"]}
    assert response.usage.input_tokens == 142
    # the successful result of the same request, in wink's `output` convention
    message = ToolResultMessage("call_0_get_capital", "get_capital", "Paris")
    body = build_request(ModelRequest("capital", (message,)), NO_SETTINGS)
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_capital", "response": {"output": "Paris"}}}
            ],
        }
    ]


# --- conformance: replayed over HTTP (recorded status, headers and body, verbatim)


def test_google_function_call_keeps_its_thought_signature() -> None:
    name = "google/function_call.json"
    response = ok(replay("google", name)[0])
    [call] = response.tool_calls
    part = load_recording(name)["response"]["body"]["candidates"][0]["content"]["parts"]
    recorded = next(p for p in part if "functionCall" in p)
    assert call.name == recorded["functionCall"]["name"]
    messages = (UserMessage("capital?"), response.to_message())
    _, emu, _ = replay("google", "google/final_text_after_function_response.json", messages)
    echoed = emu.requests[0].body["contents"][-1]["parts"]
    assert any(p.get("thoughtSignature") == recorded["thoughtSignature"] for p in echoed)


def test_google_failed_result_renders_like_the_recording() -> None:
    name = "google/function_response_error_then_retry.json"
    model_turn, user_turn = load_recording(name)["request"]["body"]["contents"][-2:]
    call = model_turn["parts"][0]["functionCall"]
    [part] = user_turn["parts"]
    failure = part["functionResponse"]["response"]["error"]
    messages = failed_round(ToolCall(call["id"], call["name"], call["args"]), failure)
    outcome, emu, _ = replay("google", name, messages)
    assert len(ok(outcome).tool_calls) == 1
    [sent] = emu.requests[0].body["contents"][-1]["parts"]
    assert sent["functionResponse"]["response"] == part["functionResponse"]["response"]
    assert sent["functionResponse"]["name"] == call["name"]


def test_google_final_text() -> None:
    assert ok(replay("google", "google/final_text_after_function_response.json")[0]).text


def test_404_recording_is_a_request_error() -> None:
    error = request_error(replay("google", "google/404_not_found.json")[0])
    assert error.provider_payload is not None
    assert error.provider_payload["error"]["status"] == "NOT_FOUND"


def test_429_resource_exhausted_recording_is_a_rate_limit() -> None:
    error = replay("google", "google/429_resource_exhausted.json")[0]
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == ("rate_limit", True)
    assert error.details.retry_after is None


def test_429_daily_quota_recording_is_quota_exhausted_with_retry_delay_kept() -> None:
    error = replay("google", "google/429_quota_failure_retryinfo_body.json")[0]
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == ("quota_exhausted", False)
    assert error.details.retry_after_seconds == pytest.approx(42.0)


# --- request building


def test_structured_output_without_tools_uses_the_native_schema() -> None:
    output = OutputSpec("Answer", {"type": "object", "properties": {"city": {"type": "string"}}})
    request = ModelRequest("p", (UserMessage("hi"),), output=output)
    body = build_request(request, NO_SETTINGS)
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": output.schema,
    }
    assert "tools" not in body


def test_structured_output_with_tools_becomes_a_required_function() -> None:
    output = OutputSpec("Answer", {"type": "object"})
    request = ModelRequest("p", (UserMessage("hi"),), tools=(CAPITAL_TOOL,), output=output)
    body = build_request(request, NO_SETTINGS)
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert names == ["get_capital", output_tool_spec(output).name]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "generationConfig" not in body  # never a JSON mime type next to functions


def test_settings_and_extra_body_merge() -> None:
    settings = ModelSettings(
        temperature=0.5,
        max_tokens=100,
        top_p=0.9,
        stop=("END",),
        seed=7,
        extra={"generationConfig": {"topK": 3}, "safetySettings": []},
    )
    body = build_request(ModelRequest("p", (UserMessage("hi"),)), settings)
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "maxOutputTokens": 100,
        "topP": 0.9,
        "seed": 7,
        "stopSequences": ["END"],
        "topK": 3,
    }
    assert body["safetySettings"] == []


def test_parallel_results_share_one_user_content_and_real_ids_go_back() -> None:
    calls = (
        ToolCall("fc_1", "a", {"x": 1}),
        ToolCall("call_1_b", "b", "{not json", {"synthetic_id": True}),
    )
    request = ModelRequest(
        "p",
        (
            UserMessage("go"),
            AssistantMessage("thinking", calls, {"thought_signature": "sig"}),
            ToolResultMessage("fc_1", "a", "done"),
            ToolResultMessage("call_1_b", "b", "bad arguments", success=False),
            UserMessage("and now?"),
        ),
    )
    contents = build_request(request, NO_SETTINGS)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"text": "thinking", "thoughtSignature": "sig"},
        {"functionCall": {"name": "a", "args": {"x": 1}, "id": "fc_1"}},
        {"functionCall": {"name": "b"}},  # no synthetic id, no non-object args
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "a", "response": {"output": "done"}, "id": "fc_1"}},
        {"functionResponse": {"name": "b", "response": {"error": "bad arguments"}}},
        {"text": "and now?"},
    ]


# --- response parsing


def candidate(*parts: dict[str, Any], reason: str | None = "STOP") -> dict[str, Any]:
    body: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": list(parts)}}]}
    if reason is not None:
        body["candidates"][0]["finishReason"] = reason
    return body


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("STOP", "stop"),
        (None, "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("OTHER", "other"),
        ("SOMETHING_NEW", "other"),
    ],
)
def test_finish_reasons(reason: str | None, expected: str) -> None:
    assert parse_response(candidate({"text": "x"}, reason=reason)).finish_reason == expected


def test_blocked_candidate_without_content_is_a_finish_reason() -> None:
    body = {"candidates": [{"finishReason": "SAFETY"}]}
    response = parse_response(body)
    assert (response.text, response.finish_reason, response.raw) == (None, "content_filter", body)


def test_blocked_prompt_is_content_filter_with_raw() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 4}}
    response = parse_response(body)
    assert response.finish_reason == "content_filter"
    assert response.raw is body
    assert response.usage.input_tokens == 4


def test_parallel_calls_in_order_with_unique_ids_and_raw_arguments() -> None:
    body = candidate(
        {"text": "Let me check. "},
        {"functionCall": {"name": "w", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "w", "args": "not an object", "id": "given"}},
        {"functionCall": {"name": "w", "args": [1, 2]}},
        {"functionCall": {"name": "x"}},
        {"text": "hidden", "thought": True},
    )
    response = parse_response(body)
    assert response.text == "Let me check. "
    assert [c.arguments for c in response.tool_calls] == [
        {"city": "Paris"},
        "not an object",
        "[1, 2]",
        {},
    ]
    assert response.tool_calls[1].id == "given"
    again = parse_response(body).tool_calls  # the same answer in a later round
    made = [c.id for c in (*response.tool_calls, *again) if c.id != "given"]
    assert len(set(made)) == 6  # never repeated, within a response or across rounds
    assert response.tool_calls[1].provider_data is None


def test_a_call_to_the_output_function_is_reported_like_any_call() -> None:
    """Which call is the structured answer is the loop's decision, not the translator's."""
    output = OutputSpec("Answer", {"type": "object"})
    name = output_tool_spec(output).name
    body = candidate({"functionCall": {"name": name, "args": {"city": "Paris"}}})
    response = parse_response(body)
    assert [(call.name, call.arguments) for call in response.tool_calls] == [
        (name, {"city": "Paris"})
    ]


def test_usage_counts_cached_and_tool_prompt_tokens() -> None:
    body = candidate({"text": "x"})
    body["usageMetadata"] = {
        "promptTokenCount": 100,
        "cachedContentTokenCount": 60,
        "toolUsePromptTokenCount": 5,
        "candidatesTokenCount": 7,
        "thoughtsTokenCount": 3,
    }
    usage = parse_response(body).usage
    assert (usage.input_tokens, usage.cached_tokens) == (105, 60)
    assert (usage.output_tokens, usage.reasoning_tokens) == (10, 3)


WRONG_SHAPES: list[Any] = [
    [],
    "text",
    {},
    {"candidates": []},
    {"candidates": "x"},
    {"candidates": [None]},
    {"candidates": [{"finishReason": "STOP"}]},
    {"candidates": [{"content": "x"}]},
    {"candidates": [{"content": {"parts": {"text": "x"}}}]},
    {"candidates": [{"content": {"parts": ["x"]}}]},
    {"candidates": [{"content": {"parts": [{"text": 3}]}}]},
    {"candidates": [{"content": {"parts": [{"functionCall": "x"}]}}]},
    {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
    {"candidates": [{"content": {"parts": [{"functionCall": {"name": "a", "id": 3}}]}}]},
    {"candidates": [{"content": {"parts": []}, "finishReason": 3}]},
    {**candidate({"text": "x"}), "usageMetadata": "x"},
    {**candidate({"text": "x"}), "usageMetadata": {"promptTokenCount": "9"}},
]


@pytest.mark.parametrize("body", WRONG_SHAPES)
def test_wrong_shapes_are_reported_not_crashed_on(body: Any) -> None:
    with pytest.raises(MalformedResponse):
        parse_response(body)


# --- the HTTP status decides (real adapter, real HTTP, the emulator answering verbatim)

LATIN1_PAGE = (
    "<html><body><h1>503 Service Unavailable</h1>"
    "<p>Dienst vorübergehend nicht verfügbar</p></body></html>"
)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_503_with_a_latin1_html_page_is_overloaded(mode: str) -> None:
    page = LATIN1_PAGE.encode("latin-1")
    error = answer(Fault.http(503, page, {"content-type": "text/html; charset=ISO-8859-1"}), mode)
    assert isinstance(error, ThrottleError)
    details = error.details
    assert (details.kind, details.retry_safe, details.status_code) == ("overloaded", True, 503)
    assert error.provider_payload == {"status_code": 503, "body": LATIN1_PAGE}
    assert "not a Gemini error body" in error.message


def test_an_undeclared_latin1_page_is_still_classified_by_status() -> None:
    page = "Passerelle défaillante".encode("latin-1")  # not UTF-8, no charset declared
    error = answer(Fault.http(502, page, {"content-type": "text/html"}))
    assert isinstance(error, ThrottleError)
    assert error.details.kind == "overloaded"
    assert error.provider_payload is not None
    assert error.provider_payload["body"].startswith("Passerelle d")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("status", [200, 201, 203])
def test_any_2xx_with_a_generate_content_body_is_an_answer(status: int, mode: str) -> None:
    body = load_recording("google/final_text_after_function_response.json")["response"]["body"]
    result, _, _ = request_once("google", Fault.http(status, body), sync=mode == "sync")
    assert isinstance(result, ModelResponse), result
    assert (result.text, result.finish_reason) == ("Paris", "stop")


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, b"Bad Request", BadRequestError),
        (401, b"<html><body>Unauthorized</body></html>", AuthenticationError),
        # JSON, not the shape
        (404, b'[{"error": {"code": 404, "message": "not here"}}]', NotFoundError),
        (403, b'{"error": "forbidden"}', PermissionDeniedError),  # `error` is not an object
        (429, b"slow down", "rate_limit"),
        (408, b"", "timeout"),
        (500, b"", "overloaded"),
        (502, b'{"message": "upstream failed"}', "overloaded"),
        (504, b"upstream timed out", "overloaded"),
    ],
)
def test_error_bodies_that_are_not_gemini_errors_are_classified_by_status(
    status: int, body: bytes, kind: str | type[PromptEvaluationError]
) -> None:
    error = answer(Fault.http(status, body, {"content-type": "text/plain"}))
    if not isinstance(kind, str):
        assert type(error) is kind
        assert error.phase == "request"
    else:
        assert isinstance(error, ThrottleError)
        assert (error.details.kind, error.details.retry_safe) == (kind, True)
    assert error.provider_payload == {"status_code": status, "body": body.decode()}
    assert error.message.startswith(f"HTTP {status}")


def test_a_long_error_page_is_truncated_in_the_payload() -> None:
    error = answer(Fault.http(500, b"x" * 10_000, {"content-type": "text/html"}))
    assert error.provider_payload is not None
    assert error.provider_payload["body"] == "x" * 2000


def test_a_gemini_error_body_gives_the_message_and_the_whole_payload() -> None:
    error = answer(Fault.bad_request("* GenerateContentRequest.contents: bad"))
    assert type(error) is BadRequestError
    assert error.phase == "request"
    assert "GenerateContentRequest.contents: bad" in error.message
    assert error.provider_payload is not None
    assert error.provider_payload["error"]["status"] == "INVALID_ARGUMENT"
    assert error.provider_payload["status_code"] == 400


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_429_keeps_the_retry_info_delay(mode: str) -> None:
    error = answer(Fault.rate_limit(retry_after=0.25), mode)
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == ("rate_limit", True)
    assert error.details.retry_after_seconds == 0.25


def test_a_429_without_a_gemini_body_still_reads_retry_after() -> None:
    error = answer(Fault.http(429, b"slow down", {"retry-after": "3"}))
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_after_seconds) == ("rate_limit", 3.0)


def test_a_daily_quota_is_exhausted_not_retried() -> None:
    error = answer(Fault.quota_exhausted(retry_after=30))
    assert isinstance(error, ThrottleError)
    details = error.details
    assert (details.kind, details.retry_safe, details.retry_after_seconds) == (
        "quota_exhausted",
        False,
        30.0,
    )


@pytest.mark.parametrize(
    "fault", [Fault.non_json(), Fault.http(200, b"\xff\xfe not json"), Fault.wrong_shape()]
)
def test_a_2xx_that_is_not_a_generate_content_body_is_a_response_error(fault: Fault) -> None:
    error = answer(fault)
    assert type(error) is PromptEvaluationError
    assert error.phase == "response"


# --- connection failures


def closed_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_refused_connection_is_a_retry_safe_connection_failure(mode: str) -> None:
    adapter = GoogleAdapter(
        MODEL, base_url=f"http://127.0.0.1:{closed_port()}", api_key="k", retry_policy=NO_RETRY
    )
    error = send_once(adapter, sync=mode == "sync")
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == ("connection", True)


def test_an_unresolvable_host_is_a_configuration_error_naming_it() -> None:
    adapter = GoogleAdapter(
        MODEL, base_url="http://wink-no-such-host.invalid", api_key="k", retry_policy=NO_RETRY
    )
    error = send_once(adapter)
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert "wink-no-such-host.invalid" in error.message


@pytest.mark.parametrize(
    ("fault", "options", "kind"),
    [(Fault.hang(5.0), {"timeout": 0.3}, "timeout"), (Fault.drop_connection(), {}, "connection")],
    ids=["hang", "drop"],
)
def test_a_hung_or_dropped_answer_is_retry_safe(
    fault: Fault, options: dict[str, Any], kind: str
) -> None:
    error = answer(fault, **options)
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == (kind, True)


# --- transport exceptions, one by one


@pytest.mark.parametrize("cls", exception_classes(httpx2, Exception), ids=lambda cls: cls.__name__)
def test_every_transport_exception_is_mapped(cls: type[BaseException]) -> None:
    assert isinstance(mapped(map_errors("capital"), sdk_exception(cls)), WinkError)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (httpx2.ReadTimeout("slow"), "timeout"),
        (httpx2.ConnectError("refused"), "connection"),
        (httpx2.RemoteProtocolError("x"), "connection"),
    ],
)
def test_transport_failures_are_retry_safe(error: Exception, kind: str) -> None:
    wink_error = mapped(map_errors("capital"), error)
    assert isinstance(wink_error, ThrottleError)
    assert (wink_error.details.kind, wink_error.details.retry_safe) == (kind, True)


def test_a_gemini_error_answer_is_mapped_by_its_status() -> None:
    request = httpx2.Request("POST", "http://gemini.test/")
    answer = GeminiErrorAnswer(httpx2.Response(503, request=request))
    error = mapped(map_errors("capital"), answer)
    assert isinstance(error, ThrottleError)


def test_a_body_that_cannot_be_decoded_is_a_response_error() -> None:
    error = mapped(map_errors("capital"), httpx2.DecodingError("bad gzip"))
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "response"


# --- the request: URL, key, client


def test_the_endpoint_is_v1beta_generate_content() -> None:
    assert DEFAULT_BASE_URL == "https://generativelanguage.googleapis.com"
    assert endpoint(DEFAULT_BASE_URL, MODEL) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    )
    assert endpoint("http://proxy:8080/gemini/", "models/m") == (
        "http://proxy:8080/gemini/v1beta/models/m:generateContent"
    )
    assert endpoint("http://h", "tunedModels/t1").endswith("/v1beta/tunedModels/t1:generateContent")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_request_carries_the_key_header_and_the_json_body(mode: str) -> None:
    result, emulator, _ = request_once("google", sync=mode == "sync")
    assert isinstance(result, ModelResponse)
    (sent,) = emulator.requests
    assert (sent.method, sent.path) == ("POST", f"/v1beta/models/{MODEL}:generateContent")
    assert sent.headers["x-goog-api-key"] == "[redacted]"  # present; the emulator hides it
    assert sent.headers["content-type"] == "application/json"
    assert sent.body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GOOGLE_API_KEY": "google-key", "GEMINI_API_KEY": "gemini-key"}, "google-key"),
        ({"GEMINI_API_KEY": "gemini-key"}, "gemini-key"),
        ({"GOOGLE_API_KEY": "", "GEMINI_API_KEY": "gemini-key"}, "gemini-key"),  # empty: unset
        ({"GOOGLE_API_KEY": " google-key\n"}, "google-key"),
    ],
)
def test_the_key_comes_from_the_environment_google_api_key_first(
    clean_env: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    """google-genai's documented order (`get_env_api_key`): GOOGLE_API_KEY wins."""
    for name, value in env.items():
        clean_env.setenv(name, value)
    seen: list[str | None] = []
    hook = {"request": [lambda request: seen.append(request.headers.get("x-goog-api-key"))]}
    with ProviderEmulator([Turn.text("ok")]) as emulator:
        client = httpx2.Client(event_hooks=hook)
        adapter = GoogleAdapter(MODEL, base_url=emulator.base_url("google"), client=client)
        assert isinstance(send_once(adapter, sync=True), ModelResponse)
        client.close()
    assert seen == [expected]
    own = GoogleAdapter(MODEL).api.make_client(sync=True)
    assert own.headers["x-goog-api-key"] == expected
    own.close()
    assert expected in GoogleAdapter(MODEL)._secrets  # every key it may send is masked
    assert "given" in GoogleAdapter(MODEL, api_key="given")._secrets


def test_no_key_anywhere_is_a_configuration_error_naming_the_variables(
    clean_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        GoogleAdapter(MODEL, base_url="http://127.0.0.1:9", retry_policy=NO_RETRY)
    assert str(caught.value) == (
        "no API key for google: set GOOGLE_API_KEY or GEMINI_API_KEY or pass api_key="
    )


def test_a_key_from_the_environment_never_reaches_the_error(
    clean_env: pytest.MonkeyPatch,
) -> None:
    key = "env-secret-key-0123456789"
    clean_env.setenv("GEMINI_API_KEY", key)
    body = {"error": {"code": 400, "message": f"API key {key} not valid", "status": "X"}}
    error = answer(Fault.http(400, body), api_key=None)
    assert key not in str(error) + repr(error) + json.dumps(error.provider_payload)


def test_the_timeout_goes_to_the_client() -> None:
    adapter = GoogleAdapter(MODEL, api_key="k", timeout=2.5)
    assert adapter.api.make_client(sync=False).timeout == httpx2.Timeout(2.5)
    assert adapter.api.make_client(sync=True).timeout == httpx2.Timeout(2.5)


def test_a_callers_sync_httpx2_client_is_used_and_left_open() -> None:
    seen: list[str | None] = []
    hooks = {"request": [lambda request: seen.append(request.headers.get("x-goog-api-key"))]}
    headers = {"x-goog-api-key": "client-key", "user-agent": "my-app/1.0"}
    with ProviderEmulator([Turn.text("ok")]) as emulator:
        client = httpx2.Client(headers=headers, event_hooks=hooks)
        adapter = GoogleAdapter(
            MODEL, base_url=emulator.base_url("google"), api_key="adapter-key", client=client
        )
        assert isinstance(send_once(adapter, sync=True), ModelResponse)
        assert not client.is_closed  # the caller's
        client.close()
        assert emulator.requests[0].headers["user-agent"] == "my-app/1.0"
    assert seen == ["client-key"]  # the client's own key is kept


def test_a_callers_async_httpx2_client_gets_the_adapters_key() -> None:
    seen: list[str | None] = []

    async def look(request: httpx2.Request) -> None:
        seen.append(request.headers.get("x-goog-api-key"))

    async def run(base_url: str) -> ModelResponse | WinkError:
        async with httpx2.AsyncClient(event_hooks={"request": [look]}) as client:
            adapter = GoogleAdapter(MODEL, base_url=base_url, api_key="adapter-key", client=client)
            try:
                return await adapter.model_client(blocking=False).request(
                    ModelRequest("capital", (UserMessage("hi"),))
                )
            finally:
                await adapter.aclose()
                assert not client.is_closed  # the caller's

    with ProviderEmulator([Turn.text("ok")]) as emulator:
        assert isinstance(asyncio.run(run(emulator.base_url("google"))), ModelResponse)
        assert emulator.requests[0].headers["content-type"] == "application/json"
    assert seen == ["adapter-key"]  # added per request: the client had none


def test_a_google_genai_client_is_refused_with_a_hint() -> None:
    genai = pytest.importorskip("google.genai")
    sdk_client = genai.Client(api_key="k")
    error = send_once(GoogleAdapter(MODEL, client=sdk_client, retry_policy=NO_RETRY))
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert "httpx2.Client or httpx2.AsyncClient" in error.message
    assert "pass base_url= and api_key=" in error.message
    sdk_client.close()


@pytest.mark.parametrize("extra", [{"x": object()}, {"generationConfig": {"topK": float("nan")}}])
def test_a_body_that_cannot_be_json_is_a_request_error(extra: dict[str, Any]) -> None:
    adapter = GoogleAdapter(MODEL, api_key="k", extra_body=extra, retry_policy=NO_RETRY)
    error = send_once(adapter)
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert "cannot build the google request" in error.message
