"""Every recorded exchange in tests/conformance, replayed over HTTP through the real SDK.

The emulator sends the recorded status, headers and body verbatim (`Fault.http`); the
adapter's `request` must turn it into the outcome the conformance README documents.
Request-side recordings check that a failed tool result renders like the real traffic.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from wink import PromptEvaluationError, RetryPolicy, ThrottleError, create_adapter
from wink.adapters.base import ProviderAdapter
from wink.core.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.testing import Fault, ProviderEmulator

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"  # recorded traffic, verbatim
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


def load(name: str) -> dict[str, Any]:
    return json.loads((CONFORMANCE / name).read_text(encoding="utf-8"))


def replay(
    provider: str, name: str, messages: tuple[Any, ...] = (UserMessage("hi"),)
) -> tuple[ModelResponse | PromptEvaluationError, ProviderEmulator, ProviderAdapter]:
    recording = load(name)
    response = recording["response"]
    headers = {
        key: value
        for key, value in (response.get("headers") or {}).items()
        if key not in _HOP_BY_HOP
    }
    with ProviderEmulator() as emu:
        emu.inject(Fault.http(response["status"], response["body"], headers))
        adapter = create_adapter(
            f"{provider}:model-x",
            base_url=emu.base_url(provider),  # type: ignore[arg-type]
            api_key="test-key",
            retry_policy=RetryPolicy(max_attempts=1),
        )

        async def send() -> ModelResponse | PromptEvaluationError:
            try:
                return await adapter._runner.request(ModelRequest("recorded", messages))
            except PromptEvaluationError as error:
                return error
            finally:
                await adapter.aclose()

        outcome = asyncio.run(send())
        assert len(emu.requests) == 1  # never retried, whatever the outcome
    return outcome, emu, adapter


def ok(outcome: ModelResponse | PromptEvaluationError) -> ModelResponse:
    assert isinstance(outcome, ModelResponse), outcome
    return outcome


def request_error(outcome: ModelResponse | PromptEvaluationError) -> PromptEvaluationError:
    assert isinstance(outcome, PromptEvaluationError), outcome
    assert not isinstance(outcome, ThrottleError)
    assert outcome.phase == "request"
    return outcome


# --- OpenAI


def test_openai_chat_tool_call() -> None:
    response = ok(replay("openai", "openai/chat_tool_call.json")[0])
    [call] = response.tool_calls
    recorded = load("openai/chat_tool_call.json")["response"]["body"]["choices"][0]["message"]
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


def test_openai_responses_parallel_calls_in_order() -> None:
    response = ok(replay("openai-responses", "openai/responses_function_calls.json")[0])
    recorded = [
        item
        for item in load("openai/responses_function_calls.json")["response"]["body"]["output"]
        if item["type"] == "function_call"
    ]
    assert [call.id for call in response.tool_calls] == [item["call_id"] for item in recorded]
    assert len(response.tool_calls) == 2


def test_openai_responses_failed_output_renders_like_the_recording() -> None:
    name = "openai/responses_final_after_failed_function_output.json"
    recorded_input = load(name)["request"]["body"]["input"]
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


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai", "openai/chat_400_unsupported_value.json"),
        ("openai-responses", "openai/responses_400_invalid_temperature.json"),
        ("openai", "openai/chat_404_model_not_found.json"),
    ],
)
def test_openai_client_errors(provider: str, name: str) -> None:
    error = request_error(replay(provider, name)[0])
    recorded = load(name)["response"]["body"]["error"]
    assert error.provider_payload is not None
    assert error.provider_payload["code"] == recorded["code"]
    assert error.provider_payload["param"] == recorded["param"]
    assert error.provider_payload["status_code"] == load(name)["response"]["status"]


def test_openai_compatible_429_is_a_rate_limit() -> None:
    outcome = replay("openai", "openai/compat_openrouter_429.json")[0]
    assert isinstance(outcome, ThrottleError)
    assert outcome.details.kind == "rate_limit"
    assert outcome.details.retry_safe is True
    assert outcome.details.retry_after is None


# --- Anthropic


def test_anthropic_tool_use() -> None:
    response = ok(replay("anthropic", "anthropic/tool_use.json")[0])
    recorded = load("anthropic/tool_use.json")["response"]["body"]["content"]
    use = next(block for block in recorded if block["type"] == "tool_use")
    assert response.text
    [call] = response.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == (use["id"], use["name"], use["input"])  # type: ignore[arg-type]


def test_anthropic_failed_result_renders_like_the_recording() -> None:
    name = "anthropic/tool_result_is_error_then_retry.json"
    assistant, user = load(name)["request"]["body"]["messages"][-2:]
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
    usage = load(name)["response"]["body"]["usage"]
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
    headers = load(name)["response"]["headers"]
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
    assert error.provider_payload["error"] == load(name)["response"]["body"]["error"]


# --- Google


def test_google_function_call_keeps_its_thought_signature() -> None:
    name = "google/function_call.json"
    response = ok(replay("google", name)[0])
    [call] = response.tool_calls
    part = load(name)["response"]["body"]["candidates"][0]["content"]["parts"]
    recorded = next(p for p in part if "functionCall" in p)
    assert call.name == recorded["functionCall"]["name"]
    messages = (UserMessage("capital?"), response.to_message())
    _, emu, _ = replay("google", "google/final_text_after_function_response.json", messages)
    echoed = emu.requests[0].body["contents"][-1]["parts"]
    assert any(p.get("thoughtSignature") == recorded["thoughtSignature"] for p in echoed)


def test_google_failed_result_renders_like_the_recording() -> None:
    name = "google/function_response_error_then_retry.json"
    model_turn, user_turn = load(name)["request"]["body"]["contents"][-2:]
    call = model_turn["parts"][0]["functionCall"]
    [part] = user_turn["parts"]
    messages = (
        UserMessage("capital?"),
        AssistantMessage(tool_calls=(ToolCall(call["id"], call["name"], call["args"]),)),
        ToolResultMessage(
            call["id"], call["name"], part["functionResponse"]["response"]["error"], success=False
        ),
    )
    outcome, emu, _ = replay("google", name, messages)
    assert len(ok(outcome).tool_calls) == 1
    [sent] = emu.requests[0].body["contents"][-1]["parts"]
    assert sent["functionResponse"]["response"] == part["functionResponse"]["response"]
    assert sent["functionResponse"]["name"] == call["name"]


def test_google_final_text() -> None:
    assert ok(replay("google", "google/final_text_after_function_response.json")[0]).text


def test_google_404() -> None:
    request_error(replay("google", "google/404_not_found.json")[0])


def test_google_short_429_is_a_rate_limit() -> None:
    outcome = replay("google", "google/429_resource_exhausted.json")[0]
    assert isinstance(outcome, ThrottleError)
    assert (outcome.details.kind, outcome.details.retry_safe) == ("rate_limit", True)
    assert outcome.details.retry_after is None


def test_google_daily_quota_is_not_retry_safe() -> None:
    outcome = replay("google", "google/429_quota_failure_retryinfo_body.json")[0]
    assert isinstance(outcome, ThrottleError)
    assert (outcome.details.kind, outcome.details.retry_safe) == ("quota_exhausted", False)
    assert outcome.details.retry_after_seconds == pytest.approx(42.0)


def test_every_recording_is_covered() -> None:
    """Whole-response recordings; reasoning/ and streams/ have test files of their own."""
    names = {
        str(p.relative_to(CONFORMANCE))
        for folder in ("anthropic", "google", "openai")
        for p in (CONFORMANCE / folder).rglob("*.json")
    }
    source = Path(__file__).read_text(encoding="utf-8")
    assert {name for name in names if name not in source} == set()


def test_the_recordings_are_unchanged_since_they_were_copied() -> None:
    """The recordings are evidence of what the real APIs sent: never edited by hand."""
    listed = {}
    for line in (CONFORMANCE / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    present = {
        str(path.relative_to(CONFORMANCE)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in CONFORMANCE.rglob("*")
        if path.is_file() and path.name != "SHA256SUMS"
    }
    assert present == listed
