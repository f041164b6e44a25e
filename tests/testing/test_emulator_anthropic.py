"""The Anthropic SDK (sync and async) against the emulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import anthropic
import pytest

from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

MESSAGES: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Weather in Paris?"}]


def ask(client: anthropic.Anthropic) -> anthropic.types.Message:
    return client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES)


def test_text_turn(emu: ProviderEmulator, anthropic_client: anthropic.Anthropic) -> None:
    emu.enqueue(Turn.text("It is sunny.", input_tokens=30, cached_tokens=20, output_tokens=9))
    raw = anthropic_client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES
    )
    message = raw.parse()
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["request-id"].startswith("req_")
    assert message.id.startswith("msg_")
    assert message.model == "claude-sonnet-4-6"
    assert message.stop_reason == "end_turn"
    assert message.stop_sequence is None
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].type == "text"
    assert message.content[0].text == "It is sunny."
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (10, 20, 9)
    recorded = emu.requests[0]
    assert recorded.provider == "anthropic"
    assert recorded.headers["authorization"] == "[redacted]"
    assert recorded.headers["anthropic-version"]
    assert usage.cache_creation_input_tokens == 0


def test_tool_use_blocks(emu: ProviderEmulator, anthropic_client: anthropic.Anthropic) -> None:
    emu.enqueue(
        Turn.tool_calls(
            EmulatedToolCall("get_weather", {"city": "Paris"}),
            EmulatedToolCall("get_weather", "{broken", id="toolu_fixed"),
            text="Checking.",
        )
    )
    message = ask(anthropic_client)
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    first, second = message.content[1], message.content[2]
    assert first.type == "tool_use"
    assert second.type == "tool_use"
    assert first.id.startswith("toolu_01")
    assert first.input == {"city": "Paris"}
    assert second.id == "toolu_fixed"
    assert second.input == "{broken"  # the raw string reaches the SDK untouched


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        (Turn.text("Par", finish="length"), "max_tokens"),
        (Turn.refusal(), "refusal"),
        (Turn.text("x", finish="content_filter"), "refusal"),
    ],
)
def test_stop_reasons(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic, turn: Turn, reason: str
) -> None:
    emu.enqueue(turn)
    message = ask(anthropic_client)
    assert message.stop_reason == reason
    if reason == "refusal":
        assert message.stop_details is not None
        assert message.stop_details.type == "refusal"


async def test_async_client_and_json_turn(
    emu: ProviderEmulator, async_anthropic: Callable[..., anthropic.AsyncAnthropic]
) -> None:
    emu.enqueue(Turn.json({"answer": 4}, output_tokens=50, reasoning_tokens=20))
    async with async_anthropic() as client:
        message = await client.messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=MESSAGES
        )
    assert message.content[0].type == "text"
    assert json.loads(message.content[0].text) == {"answer": 4}
    assert message.usage.output_tokens == 50
    assert message.usage.output_tokens_details is not None
    assert message.usage.output_tokens_details.thinking_tokens == 20


def test_rate_limit(emu: ProviderEmulator, anthropic_client: anthropic.Anthropic) -> None:
    emu.inject(Fault.rate_limit(2.0, header_style="both"))
    with pytest.raises(anthropic.RateLimitError) as caught:
        ask(anthropic_client)
    error = caught.value
    assert error.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": error.body["error"]["message"]},  # type: ignore[index]
        "request_id": error.request_id,
    }
    headers = error.response.headers
    assert headers["retry-after"] == "2"
    assert headers["retry-after-ms"] == "2000"
    assert headers["anthropic-ratelimit-requests-remaining"] == "0"
    reset = datetime.fromisoformat(headers["anthropic-ratelimit-requests-reset"])
    assert 0 < (reset - datetime.now(UTC)).total_seconds() <= 2.5


def test_overloaded_is_529(emu: ProviderEmulator, anthropic_client: anthropic.Anthropic) -> None:
    emu.inject(Fault.overloaded())
    with pytest.raises(anthropic.OverloadedError) as caught:
        ask(anthropic_client)
    assert isinstance(caught.value, anthropic.InternalServerError)
    assert caught.value.status_code == 529


@pytest.mark.parametrize(
    ("fault", "error_type", "kind"),
    [
        (Fault.quota_exhausted(), anthropic.BadRequestError, "invalid_request_error"),
        (
            Fault.bad_request("max_tokens: too big"),
            anthropic.BadRequestError,
            "invalid_request_error",
        ),
        (Fault.unauthorized(), anthropic.AuthenticationError, "authentication_error"),
        (Fault.server_error(), anthropic.InternalServerError, "api_error"),
        (Fault.server_error(503), anthropic.ServiceUnavailableError, "api_error"),
    ],
)
def test_status_faults(
    emu: ProviderEmulator,
    anthropic_client: anthropic.Anthropic,
    fault: Fault,
    error_type: type[anthropic.APIStatusError],
    kind: str,
) -> None:
    emu.inject(fault)
    with pytest.raises(error_type) as caught:
        ask(anthropic_client)
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == kind  # type: ignore[index]
    assert body["request_id"] == caught.value.response.headers["request-id"]
    if fault.kind == "quota_exhausted":
        assert "credit balance is too low" in str(caught.value)


async def test_transport_faults_async(
    emu: ProviderEmulator, async_anthropic: Callable[..., anthropic.AsyncAnthropic]
) -> None:
    async with async_anthropic(timeout=0.3) as client:
        emu.inject(Fault.drop_connection())
        with pytest.raises(anthropic.APIConnectionError):
            await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
        emu.inject(Fault.hang(5))
        with pytest.raises(anthropic.APITimeoutError):
            await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
        emu.inject(Fault.wrong_shape())
        message = await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
    assert message.content is None  # type: ignore[comparison-overlap]
