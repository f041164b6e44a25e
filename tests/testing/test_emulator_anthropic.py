"""The Anthropic SDK (sync and async) against the emulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

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
    async with async_anthropic() as client:  # a short timeout for the hang only (below)
        emu.inject(Fault.drop_connection())
        with pytest.raises(anthropic.APIConnectionError):
            await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
        emu.inject(Fault.hang(5))
        hurried = client.with_options(timeout=0.3)
        with pytest.raises(anthropic.APITimeoutError):
            await hurried.messages.create(model="c", max_tokens=5, messages=MESSAGES)
        emu.inject(Fault.wrong_shape())
        message = await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
    assert message.content is None  # type: ignore[comparison-overlap]


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            "messages: text content blocks must be non-empty",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": " \n"}]}],
            "messages: text content blocks must contain non-whitespace text",
        ),
        (
            [{"role": "user", "content": ""}],
            "messages.0: all messages must have non-empty content except for the optional "
            "final assistant message",
        ),
        (
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": [{"type": "text", "text": ""}]},
                {"role": "user", "content": "Well?"},
            ],
            "messages: text content blocks must be non-empty",
        ),
    ],
)
def test_empty_text_is_refused_as_the_api_does(
    emu: ProviderEmulator,
    anthropic_client: anthropic.Anthropic,
    messages: list[anthropic.types.MessageParam],
    words: str,
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model="claude-sonnet-4-6", max_tokens=100, messages=messages
        )
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": words},
        "request_id": caught.value.request_id,
    }


def test_an_empty_final_assistant_message_is_a_prefill(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.set_script([Turn.text("Sunny.")])
    message = anthropic_client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=100,
        messages=[{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": []}],
    )
    assert message.content[0].type == "text"


def test_claude_answers_an_empty_text_block_beside_its_calls(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    """What the real model does, so a client's echo of it can be tested."""
    emu.set_script([Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}), text="")])
    message = ask(anthropic_client)
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == ""  # type: ignore[union-attr]


def test_a_tool_use_id_is_used_once_in_a_conversation(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}
    messages: list[Any] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [use, use]},
        {"role": "user", "content": [result]},
    ]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model="claude-sonnet-4-6", max_tokens=100, messages=messages
        )
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "messages.1.content.1: `tool_use` ids must be unique"
    )
