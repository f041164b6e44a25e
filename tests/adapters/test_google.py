"""The Gemini adapter: conformance recordings, request/response translation, error map, wire."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import httpx
import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors

from wink import PromptEvaluationError, ThrottleError, WinkError
from wink.adapters.base import ModelSettings
from wink.adapters.google import (
    GoogleAdapter,
    _build_request,
    _map_errors,
    _parse_response,
    _post_generate_content,
)
from wink.core.messages import (
    AssistantMessage,
    ModelRequest,
    OutputSpec,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    output_tool_spec,
)
from wink.core.provider_errors import MalformedResponse

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance" / "google"
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


def recording(name: str) -> dict[str, Any]:
    path = CONFORMANCE / f"{name}.json"
    if not path.exists():
        pytest.skip(f"conformance recording {path} is not available")
    return json.loads(path.read_text(encoding="utf-8"))


def without_ids(value: Any) -> Any:
    """The recordings carry pydantic-ai's own call ids; Gemini itself sent none."""
    if isinstance(value, dict):
        return {k: without_ids(v) for k, v in cast(dict[str, Any], value).items() if k != "id"}
    if isinstance(value, list):
        return [without_ids(item) for item in cast(list[Any], value)]
    return value


def status_error(status: int, body: Any, headers: dict[str, Any] | None = None) -> Exception:
    """The exception google-genai raises for this HTTP answer (its own factory)."""
    flat = {
        k: ", ".join(cast(list[str], v)) if isinstance(v, list) else str(v)
        for k, v in (headers or {}).items()
    }
    response = httpx2.Response(
        status,
        json=body,
        headers=flat,
        request=httpx2.Request("POST", "http://gemini.test/v1beta/models/m:generateContent"),
    )
    factory = cast(Any, genai_errors.APIError).raise_error
    with pytest.raises(genai_errors.APIError) as caught:
        factory(status, body, response)
    return caught.value


def mapped(error: BaseException, secrets: tuple[str, ...] = ()) -> WinkError:
    with pytest.raises(WinkError) as caught, _map_errors("capital", secrets):
        raise error
    assert caught.value.__cause__ is error
    return caught.value


# --- conformance: responses


def test_function_call_recording_keeps_the_thought_signature() -> None:
    body = recording("function_call")["response"]["body"]
    response = _parse_response(body, None)
    assert response.finish_reason == "tool_calls"
    assert response.text is None
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("get_capital", {"country": "France"})
    assert call.id == "call_0_get_capital"  # Gemini sent no id: a local, marked one
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
    first = recording("function_call")
    retry = recording("function_response_error_then_retry")
    answer = _parse_response(first["response"]["body"], None)
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
    body = _build_request(request, ModelSettings(temperature=0.0))
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

    next_answer = _parse_response(retry["response"]["body"], None)
    assert [(c.name, c.arguments) for c in next_answer.tool_calls] == [
        ("get_capital", {"country": "La France"})
    ]


def test_final_text_recording() -> None:
    data = recording("final_text_after_function_response")
    response = _parse_response(data["response"]["body"], None)
    assert (response.text, response.finish_reason, response.tool_calls) == ("Paris", "stop", ())
    part = data["response"]["body"]["candidates"][0]["content"]["parts"][0]
    assert response.provider_data == {"thought_signature": part["thoughtSignature"]}
    assert response.usage.input_tokens == 142
    # the successful result of the same request, in wink's `output` convention
    message = ToolResultMessage("call_0_get_capital", "get_capital", "Paris")
    body = _build_request(ModelRequest("capital", (message,)), NO_SETTINGS)
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_capital", "response": {"output": "Paris"}}}
            ],
        }
    ]


# --- conformance: errors


def test_404_recording_is_a_request_error() -> None:
    data = recording("404_not_found")
    error = mapped(status_error(404, data["response"]["body"], data["response"]["headers"]))
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert error.provider_payload is not None
    assert error.provider_payload["error"]["status"] == "NOT_FOUND"


def test_429_resource_exhausted_recording_is_a_rate_limit() -> None:
    data = recording("429_resource_exhausted")
    error = mapped(status_error(429, data["response"]["body"], data["response"]["headers"]))
    assert isinstance(error, ThrottleError)
    assert error.details.kind == "rate_limit"
    assert error.details.retry_safe is True
    assert error.details.retry_after is None


def test_429_daily_quota_recording_is_quota_exhausted_with_retry_delay_kept() -> None:
    data = recording("429_quota_failure_retryinfo_body")
    error = mapped(status_error(429, data["response"]["body"]))
    assert isinstance(error, ThrottleError)
    assert error.details.kind == "quota_exhausted"
    assert error.details.retry_safe is False
    assert error.details.retry_after_seconds == 42.0


# --- request building


def test_structured_output_without_tools_uses_the_native_schema() -> None:
    output = OutputSpec("Answer", {"type": "object", "properties": {"city": {"type": "string"}}})
    request = ModelRequest("p", (UserMessage("hi"),), output=output)
    body = _build_request(request, NO_SETTINGS)
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": output.schema,
    }
    assert "tools" not in body


def test_structured_output_with_tools_becomes_a_required_function() -> None:
    output = OutputSpec("Answer", {"type": "object"})
    request = ModelRequest("p", (UserMessage("hi"),), tools=(CAPITAL_TOOL,), output=output)
    body = _build_request(request, NO_SETTINGS)
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
    body = _build_request(ModelRequest("p", (UserMessage("hi"),)), settings)
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
    contents = _build_request(request, NO_SETTINGS)["contents"]
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
    assert _parse_response(candidate({"text": "x"}, reason=reason), None).finish_reason == expected


def test_blocked_candidate_without_content_is_a_finish_reason() -> None:
    body = {"candidates": [{"finishReason": "SAFETY"}]}
    response = _parse_response(body, None)
    assert (response.text, response.finish_reason, response.raw) == (None, "content_filter", body)


def test_blocked_prompt_is_content_filter_with_raw() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 4}}
    response = _parse_response(body, None)
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
    response = _parse_response(body, None)
    assert response.text == "Let me check. "
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("call_0_w", {"city": "Paris"}),
        ("given", "not an object"),
        ("call_2_w", "[1, 2]"),
        ("call_3_x", {}),
    ]
    assert response.tool_calls[1].provider_data is None


def test_a_call_to_the_output_function_is_the_final_answer() -> None:
    output = OutputSpec("Answer", {"type": "object"})
    name = output_tool_spec(output).name
    body = candidate({"functionCall": {"name": name, "args": {"city": "Paris"}}})
    response = _parse_response(body, output)
    assert response.tool_calls == ()
    assert response.finish_reason == "stop"
    assert json.loads(response.text or "") == {"city": "Paris"}


def test_usage_counts_cached_and_tool_prompt_tokens() -> None:
    body = candidate({"text": "x"})
    body["usageMetadata"] = {
        "promptTokenCount": 100,
        "cachedContentTokenCount": 60,
        "toolUsePromptTokenCount": 5,
        "candidatesTokenCount": 7,
        "thoughtsTokenCount": 3,
    }
    usage = _parse_response(body, None).usage
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
        _parse_response(body, None)


# --- error mapping


def _sdk_exceptions() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for module in (genai_errors, httpx2, httpx):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Exception):
                found.append(value)
    return found


def _construct(cls: type[BaseException]) -> BaseException:
    request = httpx2.Request("POST", "http://gemini.test/")
    if issubclass(cls, genai_errors.APIError):
        return cls(503, {"error": {"code": 503, "status": "UNAVAILABLE", "message": "m"}})
    factory: Any = cls
    if issubclass(cls, httpx2.HTTPStatusError):
        return factory("m", request=request, response=httpx2.Response(500, request=request))
    if issubclass(cls, httpx.HTTPStatusError):
        old = httpx.Request("POST", "http://gemini.test/")
        return factory("m", request=old, response=httpx.Response(500, request=old))
    for args in (("boom",), ()):
        try:
            return factory(*args)
        except TypeError:
            continue
    return factory("boom", request=request)


@pytest.mark.parametrize(
    "cls", _sdk_exceptions(), ids=lambda cls: f"{cls.__module__}.{cls.__name__}"
)
def test_every_sdk_exception_is_mapped(cls: type[BaseException]) -> None:
    error = mapped(_construct(cls))
    assert isinstance(error, WinkError)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (httpx2.ReadTimeout("slow"), "timeout"),
        (httpx2.ConnectError("refused"), "timeout"),
        (httpx2.RemoteProtocolError("dropped"), "timeout"),
        (TimeoutError(), "timeout"),
        (
            genai_errors.ServerError(503, {"error": {"code": 503, "status": "UNAVAILABLE"}}),
            "overloaded",
        ),
    ],
)
def test_transport_failures_are_retry_safe_throttles(error: Exception, kind: str) -> None:
    wink_error = mapped(error)
    assert isinstance(wink_error, ThrottleError)
    assert (wink_error.details.kind, wink_error.details.retry_safe) == (kind, True)


def test_unreadable_answers_are_response_errors() -> None:
    error = mapped(genai_errors.UnknownApiResponseError("Failed to parse response as JSON"))
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "response"


def test_secrets_never_reach_the_error() -> None:
    key = "AIzaSyTHISISASECRETKEY123"
    sdk_error = genai_errors.ClientError(
        400, {"error": {"code": 400, "message": f"bad key {key}", "status": "INVALID_ARGUMENT"}}
    )
    error = mapped(sdk_error, secrets=(key,))
    assert isinstance(error, PromptEvaluationError)
    assert key not in str(error) + repr(error) + json.dumps(error.provider_payload)
    other = mapped(ValueError(f"cannot use {key}"), secrets=(key,))
    assert key not in str(other) + repr(other)


# --- the one private SDK path


def test_private_sdk_path_is_still_there() -> None:
    client = genai.Client(api_key="test-key").aio
    api_client = client._api_client
    parameters = list(inspect.signature(api_client.async_request).parameters)
    assert parameters[:4] == ["http_method", "path", "request_dict", "http_options"]
    generate = cast(Any, type(client.models))._generate_content
    source = inspect.getsource(generate)
    assert "'{model}:generateContent'" in source
    assert "self._api_client.async_request(" in source
    assert inspect.iscoroutinefunction(_post_generate_content)


def test_client_pins_v1beta_and_turns_sdk_retries_off() -> None:
    adapter = GoogleAdapter("gemini-2.5-flash", api_key="test-key", timeout=2.5)
    api_client = adapter._load_client()._api_client
    options = api_client._http_options
    assert options.api_version == "v1beta"
    assert options.timeout == 2500
    assert options.retry_options.attempts == 1


def test_importing_wink_does_not_import_the_sdk() -> None:
    code = "import sys, wink; assert 'google.genai' not in sys.modules, 'SDK imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
