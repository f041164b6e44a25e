"""The OpenAI Responses adapter (`wink.adapters.openai_responses`): recorded traffic
replayed through the SDK, and the request and response translation."""

from __future__ import annotations

from tests.helpers.wire import load_recording, ok, replay, request_error
from wink.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

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
    messages = (
        UserMessage("where?"),
        AssistantMessage(tool_calls=(ToolCall(call["call_id"], call["name"], call["arguments"]),)),
        ToolResultMessage(call["call_id"], call["name"], failed["output"], success=False),
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
