"""The OpenAI SDK (Chat Completions and Responses, sync and async) against the emulator."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import openai
import pytest

from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

MESSAGES: list[openai.types.chat.ChatCompletionMessageParam] = [
    {"role": "user", "content": "Weather in Paris?"}
]


def chat(client: openai.OpenAI) -> openai.types.chat.ChatCompletion:
    return client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)


# --- Chat Completions


def test_text_turn_envelope_and_headers(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.text("It is sunny.", input_tokens=42, output_tokens=7))
    raw = openai_client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=MESSAGES
    )
    completion = raw.parse()
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["x-request-id"].startswith("req_")
    assert completion.id.startswith("chatcmpl-")
    assert completion.object == "chat.completion"
    assert completion.model == "gpt-4o-mini"
    assert abs(completion.created - time.time()) < 5
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.content == "It is sunny."
    assert choice.message.tool_calls is None
    assert choice.message.refusal is None
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (42, 7)
    assert completion.usage.total_tokens == 49


def test_parallel_tool_calls_keep_order_ids_and_raw_arguments(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(
        Turn.tool_calls(
            EmulatedToolCall("get_weather", {"city": "Paris"}, id="call_fixed"),
            EmulatedToolCall("get_weather", '{"city": "Par'),
        )
    )
    choice = chat(openai_client).choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls or []
    assert calls[0].id == "call_fixed"
    assert calls[1].id.startswith("call_")
    assert len(calls[1].id) == 29
    assert [call.type for call in calls] == ["function", "function"]
    functions = [call.function for call in calls if call.type == "function"]
    assert json.loads(functions[0].arguments) == {"city": "Paris"}
    assert functions[1].arguments == '{"city": "Par'  # sent raw, not valid JSON


def test_json_turn_and_detailed_usage(emu: ProviderEmulator, openai_client: openai.OpenAI) -> None:
    emu.enqueue(
        Turn.json(
            {"city": "Paris", "temp": 21},
            input_tokens=100,
            cached_tokens=60,
            output_tokens=30,
            reasoning_tokens=12,
        )
    )
    completion = chat(openai_client)
    assert json.loads(completion.choices[0].message.content or "") == {"city": "Paris", "temp": 21}
    usage = completion.usage
    assert usage is not None
    assert usage.prompt_tokens_details is not None
    assert usage.completion_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 60
    assert usage.completion_tokens_details.reasoning_tokens == 12
    assert usage.total_tokens == 130


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        (Turn.text("Par", finish="length"), "length"),
        (Turn.text("", finish="content_filter"), "content_filter"),
        (Turn.refusal("No."), "stop"),
    ],
)
def test_finish_reasons(
    emu: ProviderEmulator, openai_client: openai.OpenAI, turn: Turn, reason: str
) -> None:
    emu.enqueue(turn)
    message = chat(openai_client).choices[0]
    assert message.finish_reason == reason
    if turn.finish == "refusal":
        assert message.message.refusal == "No."
        assert message.message.content is None


async def test_async_client(
    emu: ProviderEmulator, async_openai: Callable[..., openai.AsyncOpenAI]
) -> None:
    emu.enqueue(Turn.tool_calls(EmulatedToolCall("lookup", {"q": 1})), Turn.text("done"))
    async with async_openai() as client:
        first = await client.chat.completions.create(model="gpt-4.1", messages=MESSAGES)
        second = await client.chat.completions.create(model="gpt-4.1", messages=MESSAGES)
    assert first.choices[0].finish_reason == "tool_calls"
    assert second.choices[0].message.content == "done"


# --- Responses


def test_responses_function_calls(emu: ProviderEmulator, openai_client: openai.OpenAI) -> None:
    emu.enqueue(
        Turn.tool_calls(
            EmulatedToolCall("get_location", {"loc_name": "Londos"}, id="call_A"),
            EmulatedToolCall("get_location", "{not json"),
        )
    )
    response = openai_client.responses.create(model="gpt-4o", input="Where?")
    assert response.id.startswith("resp_")
    assert response.status == "completed"
    calls = [item for item in response.output if item.type == "function_call"]
    assert calls[0].call_id == "call_A"
    assert calls[1].call_id.startswith("call_")
    assert all((call.id or "").startswith("fc_") for call in calls)
    assert calls[1].arguments == "{not json"
    assert response.usage is not None
    assert response.usage.input_tokens == 10


async def test_responses_async_text_refusal_and_incomplete(
    emu: ProviderEmulator, async_openai: Callable[..., openai.AsyncOpenAI]
) -> None:
    emu.enqueue(Turn.text("Paris."), Turn.refusal("Cannot."), Turn.text("Pa", finish="length"))
    async with async_openai() as client:
        text = await client.responses.create(model="gpt-4o", input="Capital?")
        refused = await client.responses.create(model="gpt-4o", input="Capital?")
        cut = await client.responses.create(model="gpt-4o", input="Capital?")
    assert text.output_text == "Paris."
    message = refused.output[0]
    assert message.type == "message"
    assert message.content[0].type == "refusal"
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None
    assert cut.incomplete_details.reason == "max_output_tokens"


# --- faults


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("seconds", {"retry-after": "1.5"}),
        ("ms", {"retry-after-ms": "1500"}),
        ("both", {"retry-after": "1.5", "retry-after-ms": "1500"}),
        (None, {}),
    ],
)
def test_rate_limit(
    emu: ProviderEmulator,
    openai_client: openai.OpenAI,
    style: str | None,
    expected: dict[str, str],
) -> None:
    emu.inject(Fault.rate_limit(1.5, header_style=style))  # type: ignore[arg-type]
    with pytest.raises(openai.RateLimitError) as caught:
        chat(openai_client)
    error = caught.value
    assert error.code == "rate_limit_exceeded"
    assert error.type == "requests"
    headers = error.response.headers
    for name in ("retry-after", "retry-after-ms"):
        assert headers.get(name) == expected.get(name)
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "1.5s"
    assert "x-ratelimit-limit-tokens" in headers
    assert "x-ratelimit-reset-tokens" in headers


def test_quota_exhausted_is_a_429_with_its_own_code(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.inject(Fault.quota_exhausted())
    with pytest.raises(openai.RateLimitError) as caught:
        chat(openai_client)
    assert caught.value.code == "insufficient_quota"
    assert caught.value.type == "insufficient_quota"
    assert "retry-after" not in caught.value.response.headers


@pytest.mark.parametrize(
    ("fault", "error_type", "status"),
    [
        (Fault.server_error(), openai.InternalServerError, 500),
        (Fault.server_error(502), openai.InternalServerError, 502),
        (Fault.overloaded(), openai.InternalServerError, 503),
        (Fault.unauthorized(), openai.AuthenticationError, 401),
        (
            Fault.bad_request("bad temp", param="temperature", code="decimal_below_min_value"),
            openai.BadRequestError,
            400,
        ),
    ],
)
def test_status_faults(
    emu: ProviderEmulator,
    openai_client: openai.OpenAI,
    fault: Fault,
    error_type: type[openai.APIStatusError],
    status: int,
) -> None:
    emu.inject(fault, times=2)
    with pytest.raises(error_type) as caught:
        chat(openai_client)
    assert caught.value.status_code == status
    assert caught.value.request_id is not None
    with pytest.raises(error_type):
        openai_client.responses.create(model="gpt-4o", input="x")
    if fault.kind == "bad_request":
        assert caught.value.param == "temperature"
        assert caught.value.code == "decimal_below_min_value"
        assert caught.value.message.endswith("bad temp")


def test_transport_faults(emu: ProviderEmulator) -> None:
    # a short timeout for the hang only: on a loaded machine an answer may take longer
    with openai.OpenAI(api_key="k", base_url=emu.base_url("openai"), max_retries=0) as client:
        emu.inject(Fault.drop_connection())
        with pytest.raises(openai.APIConnectionError) as dropped:
            chat(client)
        assert not isinstance(dropped.value, openai.APITimeoutError)
        emu.inject(Fault.hang(5))
        with pytest.raises(openai.APITimeoutError):
            chat(client.with_options(timeout=0.3))
        emu.inject(Fault.non_json())
        with pytest.raises(ValueError, match="Expecting value"):
            chat(client)
        emu.inject(Fault.wrong_shape())
        assert chat(client).choices is None
    assert emu.stats.dropped == 1
    assert emu.stats.hung == 1


def test_latency_fault_answers_late(emu: ProviderEmulator, openai_client: openai.OpenAI) -> None:
    emu.enqueue(Turn.text("late"))
    emu.inject(Fault.latency(0.2))
    start = time.perf_counter()
    assert chat(openai_client).choices[0].message.content == "late"
    assert time.perf_counter() - start >= 0.2
