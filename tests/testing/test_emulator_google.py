"""The google-genai SDK (sync and `client.aio`) against the emulator, on /v1beta and /v1."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

MODEL = "gemini-2.5-flash"


def ask(client: genai.Client) -> types.GenerateContentResponse:
    return client.models.generate_content(model=MODEL, contents="Weather in Paris?")


def details(error: errors.APIError) -> dict[str, dict[str, Any]]:
    """The error's `details` entries by their short @type."""
    entries: list[dict[str, Any]] = error.details["error"].get("details", [])
    return {entry["@type"].rsplit(".", 1)[-1]: entry for entry in entries}


@pytest.mark.parametrize("version", ["v1beta", "v1"])
def test_text_turn_on_both_api_versions(
    emu: ProviderEmulator, make_google: Callable[..., genai.Client], version: str
) -> None:
    emu.enqueue(Turn.text("It is sunny.", input_tokens=12, output_tokens=8, reasoning_tokens=3))
    with make_google(version) as client:
        response = ask(client)
    recorded = emu.requests[-1]
    assert recorded.path == f"/{version}/models/{MODEL}:generateContent"
    assert recorded.provider == "google"
    assert recorded.headers["x-goog-api-key"] == "[redacted]"
    assert response.text == "It is sunny."
    assert response.model_version == MODEL
    assert response.response_id
    candidate = (response.candidates or [])[0]
    assert candidate.finish_reason == types.FinishReason.STOP
    usage = response.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (12, 5)
    assert (usage.thoughts_token_count, usage.total_token_count) == (3, 20)


def test_function_calls_omit_ids_by_default(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(
        Turn.tool_calls(
            EmulatedToolCall("get_weather", {"city": "Paris"}, id="ignored"),
            EmulatedToolCall("get_weather", {"city": "Rome"}),
        )
    )
    response = ask(google_client)
    calls = response.function_calls or []
    assert [(call.name, call.args, call.id) for call in calls] == [
        ("get_weather", {"city": "Paris"}, None),
        ("get_weather", {"city": "Rome"}, None),
    ]
    assert (response.candidates or [])[0].finish_reason == types.FinishReason.STOP


def test_function_call_ids_and_raw_args_when_enabled(
    provider_emulator_factory: Callable[..., ProviderEmulator],
) -> None:
    emu = provider_emulator_factory(google_function_call_ids=True)
    emu.enqueue(
        Turn.tool_calls(EmulatedToolCall("f", {"a": 1}, id="call-1"), EmulatedToolCall("g", "{x"))
    )
    with httpx2.Client(base_url=emu.base_url("google")) as http:
        body = http.post(f"/v1beta/models/{MODEL}:generateContent", json={"contents": []}).json()
    parts = body["candidates"][0]["content"]["parts"]
    assert parts[0]["functionCall"] == {"name": "f", "args": {"a": 1}, "id": "call-1"}
    assert parts[1]["functionCall"]["args"] == "{x"  # raw string, as scripted
    assert parts[1]["functionCall"]["id"].startswith("call-")
    assert body["candidates"][0]["finishMessage"] == "Model generated function call(s)."


def test_max_tokens_safety_and_blocked_prompt(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(Turn.text("Par", finish="length"), Turn.text("", finish="content_filter"))
    emu.enqueue(Turn.refusal())
    assert (ask(google_client).candidates or [])[0].finish_reason == types.FinishReason.MAX_TOKENS
    safety = (ask(google_client).candidates or [])[0]
    assert safety.finish_reason == types.FinishReason.SAFETY
    assert any(rating.blocked for rating in safety.safety_ratings or [])
    blocked = ask(google_client)
    assert blocked.candidates is None
    assert blocked.prompt_feedback is not None
    assert blocked.prompt_feedback.block_reason == types.BlockedReason.SAFETY


async def test_async_client_json_turn(
    emu: ProviderEmulator, make_google: Callable[..., genai.Client]
) -> None:
    emu.enqueue(Turn.json({"city": "Paris"}, input_tokens=50, cached_tokens=40))
    async with make_google().aio as client:
        response = await client.models.generate_content(model=MODEL, contents="x")
    assert json.loads(response.text or "") == {"city": "Paris"}
    assert response.usage_metadata is not None
    assert response.usage_metadata.cached_content_token_count == 40


def test_rate_limit_is_per_minute_with_retry_info(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.inject(Fault.rate_limit(1.5))
    with pytest.raises(errors.ClientError) as caught:
        ask(google_client)
    error = caught.value
    assert (error.code, error.status) == (429, "RESOURCE_EXHAUSTED")
    found = details(error)
    assert found["RetryInfo"]["retryDelay"] == "1.500s"
    violation = found["QuotaFailure"]["violations"][0]
    assert violation["quotaId"] == "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    assert violation["quotaDimensions"]["model"] == MODEL
    assert "Help" in found


def test_quota_exhausted_is_per_day(emu: ProviderEmulator, google_client: genai.Client) -> None:
    emu.inject(Fault.quota_exhausted())
    with pytest.raises(errors.ClientError) as caught:
        ask(google_client)
    found = details(caught.value)
    assert caught.value.code == 429
    assert "PerDay" in found["QuotaFailure"]["violations"][0]["quotaId"]
    assert "RetryInfo" not in found


@pytest.mark.parametrize(
    ("fault", "error_type", "code", "status"),
    [
        (Fault.overloaded(), errors.ServerError, 503, "UNAVAILABLE"),
        (Fault.server_error(), errors.ServerError, 500, "INTERNAL"),
        (Fault.server_error(504), errors.ServerError, 504, "DEADLINE_EXCEEDED"),
        (Fault.bad_request("bad schema"), errors.ClientError, 400, "INVALID_ARGUMENT"),
        (Fault.unauthorized(), errors.ClientError, 401, "UNAUTHENTICATED"),
    ],
)
def test_status_faults(
    emu: ProviderEmulator,
    google_client: genai.Client,
    fault: Fault,
    error_type: type[errors.APIError],
    code: int,
    status: str,
) -> None:
    emu.inject(fault)
    with pytest.raises(error_type) as caught:
        ask(google_client)
    assert (caught.value.code, caught.value.status) == (code, status)
    assert caught.value.response.headers["content-type"] == "application/json; charset=UTF-8"


def test_transport_faults(emu: ProviderEmulator, make_google: Callable[..., genai.Client]) -> None:
    with make_google(timeout_ms=300) as client:
        emu.inject(Fault.drop_connection())
        with pytest.raises(httpx2.RemoteProtocolError):
            ask(client)
        emu.inject(Fault.hang(5))
        with pytest.raises(httpx2.ReadTimeout):
            ask(client)
        emu.inject(Fault.wrong_shape())
        assert ask(client).candidates is None


def test_a_content_of_no_parts_is_refused_as_the_api_does(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    contents: Any = [{"role": "user", "parts": [{"text": "Hi"}]}, {"role": "model", "parts": []}]
    with pytest.raises(errors.ClientError) as caught:
        google_client.models.generate_content(model=MODEL, contents=contents)
    assert (caught.value.code, caught.value.status) == (400, "INVALID_ARGUMENT")
    assert caught.value.message == (
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n"
    )


def test_empty_and_blank_text_parts_are_taken(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    """As the real API took them (a recorded request with a user part of empty text)."""
    emu.enqueue(Turn.text("Sunny."))
    contents: Any = [
        {"role": "user", "parts": [{"text": ""}]},
        {"role": "model", "parts": [{"text": "", "thoughtSignature": "c2lnbmVk"}]},
        {"role": "user", "parts": [{"text": " \n"}]},
    ]
    assert google_client.models.generate_content(model=MODEL, contents=contents).text == "Sunny."
