"""The Anthropic Messages adapter (`wink.adapters.anthropic`): recorded traffic replayed
through the SDK, the request and response translation, and the error map."""

from __future__ import annotations

import anthropic
import pytest

from tests.helpers.sdk_errors import exception_classes, mapped, sdk_exception, status_response
from tests.helpers.wire import load_recording, ok, replay, request_error
from wink import ThrottleError
from wink.adapters.anthropic import _map_errors
from wink.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

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
    messages = (
        UserMessage("price?"),
        AssistantMessage(tool_calls=(ToolCall(use["id"], use["name"], use["input"]),)),
        ToolResultMessage(use["id"], use["name"], result["content"], success=False),
    )
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
        mapped(_map_errors("p"), sdk_exception(cls, 500))


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, "rate_limit"), (500, "overloaded"), (503, "overloaded"), (529, "overloaded")],
)
def test_status_classes_pick_the_throttle_kind(status: int, kind: str) -> None:
    response = status_response(status, {"type": "error"})
    error = anthropic.APIStatusError("m", response=response, body={"type": "error"})  # type: ignore[arg-type]
    wink_error = mapped(_map_errors("p"), error)
    assert isinstance(wink_error, ThrottleError)
    assert wink_error.details.kind == kind
