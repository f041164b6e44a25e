"""The OpenAI Chat Completions adapter (`wink.adapters.openai`): recorded traffic replayed
through the SDK, the request and response translation, and the error map."""

from __future__ import annotations

import json

import openai
import pytest

from tests.helpers.sdk_errors import exception_classes, mapped, sdk_exception, status_response
from tests.helpers.wire import load_recording, ok, replay, request_error
from wink import PromptEvaluationError, ThrottleError
from wink.adapters.openai import map_openai_errors

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


def test_every_openai_exception_is_mapped() -> None:
    classes = exception_classes(openai, openai.OpenAIError)
    assert len(classes) > 10
    for cls in classes:
        status = getattr(cls, "status_code", None)
        error = sdk_exception(cls, status if isinstance(status, int) else 500)
        mapped(map_openai_errors("p"), error)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_client_errors_are_request_errors(status: int) -> None:
    response = status_response(status, {"error": {"message": "m"}})
    error = openai.APIStatusError("m", response=response, body={"message": "m"})  # type: ignore[arg-type]
    wink_error = mapped(map_openai_errors("p"), error)
    assert isinstance(wink_error, PromptEvaluationError)
    assert not isinstance(wink_error, ThrottleError)
    assert wink_error.phase == "request"
