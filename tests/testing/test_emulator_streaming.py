"""The emulator's streams, read by each SDK's own streaming parser and accumulators."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import types

from wink import ConfigurationError, InvalidArgumentError
from wink.testing import EmulatedThinking, EmulatedToolCall, Fault, ProviderEmulator, Turn

MESSAGES: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
TEXT = "Sunny in Paris, «21 °C» 🌤, light wind."
CALLS = (
    EmulatedToolCall("get_weather", {"city": "Paris", "days": 2}, id="call_a"),
    EmulatedToolCall("get_time", {"zone": "Europe/Paris"}, id="call_b"),
)


def test_chat_stream_adds_up_in_the_sdk(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.set_streaming(chunk_size=4)
    emu.enqueue(Turn.tool_calls(*CALLS, text=TEXT, input_tokens=40, output_tokens=12))
    with openai_client.chat.completions.stream(
        model="gpt-4.1", messages=MESSAGES, stream_options={"include_usage": True}
    ) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == TEXT
    assert [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()
    ] == [(call.id, call.name, call.arguments) for call in CALLS]
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (40, 12)


def test_chat_stream_pieces_and_usage_only_when_asked(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.set_streaming(chunk_size=5)
    emu.enqueue(Turn.text("abcdefghijkl"))
    chunks = list(
        openai_client.chat.completions.create(model="gpt-4.1", messages=MESSAGES, stream=True)
    )
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert pieces == ["abcde", "fghij", "kl"]
    assert all(chunk.usage is None for chunk in chunks)  # no stream_options.include_usage


def test_responses_stream_adds_up_in_the_sdk(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.tool_calls(*CALLS, text=TEXT, input_tokens=33, output_tokens=7))
    with openai_client.responses.stream(model="gpt-4.1", input=MESSAGES) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == TEXT == final.output_text
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        (call.id, call.name, call.arguments) for call in CALLS
    ]
    assert final.usage is not None
    assert final.usage.input_tokens == 33


def test_responses_incomplete_ends_with_its_event(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.text("cut", finish="length"))
    events = list(openai_client.responses.create(model="gpt-4.1", input=MESSAGES, stream=True))
    assert events[-1].type == "response.incomplete"
    assert [event.sequence_number for event in events] == list(range(len(events)))


def test_anthropic_stream_adds_up_in_the_sdk(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.tool_calls(*CALLS, text=TEXT, input_tokens=50, output_tokens=20))
    with anthropic_client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES
    ) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == TEXT
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    uses = [block for block in message.content if block.type == "tool_use"]
    assert [(use.name, use.input) for use in uses] == [
        (call.name, call.arguments) for call in CALLS
    ]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (50, 20)


def test_anthropic_error_event_is_the_sdks_overloaded_error(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.inject(Fault.stream_error(after=4))
    emu.enqueue(Turn.text(TEXT))

    def read() -> None:
        with anthropic_client.messages.stream(
            model="claude-sonnet-4-6", max_tokens=100, messages=MESSAGES
        ) as stream:
            stream.get_final_message()

    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        read()
    assert emu.pending == 1  # the turn is kept for the retry


def test_gemini_stream_adds_up_in_the_sdk(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(Turn.tool_calls(*CALLS, text=TEXT, input_tokens=12, output_tokens=6))
    chunks = list(
        google_client.models.generate_content_stream(model="gemini-2.5-flash", contents="Paris?")
    )
    assert "".join(chunk.text or "" for chunk in chunks) == TEXT
    calls = [call for chunk in chunks for call in chunk.function_calls or ()]
    assert [(call.name, call.args) for call in calls] == [(c.name, c.arguments) for c in CALLS]
    last = chunks[-1]
    assert last.candidates is not None
    assert last.candidates[0].finish_reason == "STOP"
    assert last.usage_metadata is not None
    assert last.usage_metadata.prompt_token_count == 12
    assert emu.requests[0].query == "alt=sse"


def test_gemini_stream_needs_alt_sse(emu: ProviderEmulator) -> None:
    response = httpx2.post(
        emu.url + "/v1beta/models/g:streamGenerateContent", json={"contents": []}
    )
    assert response.status_code == 400
    assert "alt=sse" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "fault", [Fault.stream_reset(after=3), Fault.stream_truncated(after=3)], ids=["reset", "cut"]
)
def test_a_broken_stream_breaks_the_sdks_reader(
    emu: ProviderEmulator, openai_client: openai.OpenAI, fault: Fault
) -> None:
    """A reset surfaces as the SDK's transport error; a body cut before `[DONE]` ends the
    SDK's iteration early (it does not notice: wink's decoder does)."""
    emu.inject(fault)
    emu.enqueue(Turn.text(TEXT))
    stream = openai_client.chat.completions.create(model="gpt-4.1", messages=MESSAGES, stream=True)
    if fault.kind == "stream_reset":
        with pytest.raises((httpx2.TransportError, openai.APIConnectionError)):
            list(stream)
    else:
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert TEXT.startswith(text)
        assert text != TEXT


def test_a_stream_fault_on_a_plain_request_is_the_fault_it_stands_for(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.inject(Fault.stream_error(kind="rate_limit"))
    with pytest.raises(openai.RateLimitError):
        openai_client.chat.completions.create(model="gpt-4.1", messages=MESSAGES)


def test_a_recorded_body_in_pieces(emu: ProviderEmulator) -> None:
    body = b"data: " + json.dumps({"x": "é" * 50}).encode() + b"\n\n"
    emu.inject(
        Fault.http(
            200, body, {"content-type": "text/event-stream"}, chunks=[1, 3, 7], chunk_delay=0
        )
    )
    with httpx2.stream("POST", emu.url + "/v1/chat/completions", json={}) as response:
        pieces = list(response.iter_bytes())
    assert b"".join(pieces) == body
    assert [len(piece) for piece in pieces[:4]] == [1, 3, 7, 1]


def test_a_delay_between_events_keeps_the_connection_busy(emu: ProviderEmulator) -> None:
    emu.set_streaming(chunk_size=2, chunk_delay=0.02)
    emu.enqueue(Turn.text("abcdef"))
    with httpx2.stream(
        "POST",
        emu.url + "/v1/chat/completions",
        json={"model": "m", "messages": [], "stream": True},
    ) as response:
        pieces = response.iter_bytes()
        first = next(pieces)
        assert emu.open_connections == 1  # the rest is still to come
        rest = b"".join(pieces)
    assert first.startswith(b"data: ")
    assert rest.endswith(b"data: [DONE]\n\n")


def test_streaming_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match=r"stream_chunk_size .* takes an int >= 1"):
        ProviderEmulator(stream_chunk_size=0)
    with pytest.raises(ConfigurationError, match=r"stream_chunk_delay .* takes a number >= 0"):
        ProviderEmulator(stream_chunk_delay=-1)
    with pytest.raises(
        ConfigurationError, match=r"Fault.stream_reset\(after=...\) takes an int >= 0"
    ):
        Fault.stream_reset(after=-1)
    with pytest.raises(ConfigurationError, match=r"Fault.http\(chunks=...\) takes an int >= 1"):
        Fault.http(200, b"x", chunks=[0])
    with pytest.raises(InvalidArgumentError, match=r"Fault.http\(chunks=...\) takes a list"):
        Fault.http(200, b"x", chunks=3)  # type: ignore[arg-type]


async def test_streams_over_the_asgi_transport() -> None:
    """In-process (no socket): the pieces go out as ASGI body messages, and a reset is the
    client library's protocol error, as on a real port."""
    emu = ProviderEmulator(stream_chunk_size=3)
    emu.enqueue(Turn.text("over asgi"), Fault.stream_reset(after=2), Turn.text("again"))
    transport = httpx2.ASGITransport(app=emu.asgi_app)
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        openai.AsyncOpenAI(
            api_key="k", base_url="http://emulator/v1", http_client=http, max_retries=0
        ) as client,
    ):
        stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

        async def read_broken() -> None:
            # ASGITransport runs the app whole before answering: the reset surfaces here
            broken = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
            async for _ in broken:
                pass

        with pytest.raises((httpx2.TransportError, openai.APIConnectionError)):
            await read_broken()
    assert text == "over asgi"


THOUGHTFUL = Turn.tool_calls(
    EmulatedToolCall("get_weather", {"city": "Paris"}, id="toolu_weather"),
    text=TEXT,
    thinking=[EmulatedThinking("hidden", redacted=True), "Checking the sky."],
)


def test_anthropic_stream_adds_up_to_the_answer_with_thinking(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    """Redacted and signed thinking blocks, text and a call: the SDK's accumulated stream
    is block for block the answer the same turn gives unstreamed."""
    emu.set_streaming(chunk_size=3)
    emu.enqueue(THOUGHTFUL, THOUGHTFUL)
    ask: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,
        "messages": MESSAGES,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    answer = anthropic_client.messages.create(**ask)
    with anthropic_client.messages.stream(**ask) as stream:
        streamed = stream.get_final_message()
    assert [block.type for block in answer.content] == [
        "redacted_thinking",
        "thinking",
        "text",
        "tool_use",
    ]
    assert [b.to_dict() for b in streamed.content] == [b.to_dict() for b in answer.content]


def test_responses_stream_adds_up_to_the_answer_with_reasoning(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.set_streaming(chunk_size=3)
    emu.enqueue(THOUGHTFUL, THOUGHTFUL)
    ask: dict[str, Any] = {
        "model": "gpt-5",
        "input": MESSAGES,
        "reasoning": {"effort": "high", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }
    answer = openai_client.responses.create(**ask)
    with openai_client.responses.stream(**ask) as stream:
        summary = "".join(
            e.delta for e in stream if e.type == "response.reasoning_summary_text.delta"
        )
        streamed = stream.get_final_response()

    def items(response: Any) -> list[dict[str, Any]]:
        return [{**item.to_dict(exclude_none=True), "id": None} for item in response.output]

    assert summary == "Checking the sky."
    assert [item["type"] for item in items(answer)] == ["reasoning", "message", "function_call"]
    assert items(streamed) == items(answer)


def test_gemini_stream_carries_thought_parts_and_signatures(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    """Thought parts keep `thought: true`; a call keeps its signature; an answer's
    signature comes last, on an empty text part, as Gemini streams it."""
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024)
    )
    emu.set_streaming(chunk_size=5)
    emu.enqueue(THOUGHTFUL, Turn.text("Sunny.", thinking="Done."))
    stream = google_client.models.generate_content_stream
    first = [
        part
        for chunk in stream(model="gemini-2.5-flash", contents="Paris?", config=config)
        for part in chunk.candidates[0].content.parts  # type: ignore[index,union-attr]
    ]
    thought = "".join(part.text or "" for part in first if part.thought)
    assert thought == "Checking the sky."
    calls = [part for part in first if part.function_call is not None]
    assert len(calls) == 1
    assert calls[0].thought_signature
    assert not [part for part in first if part.thought_signature and part is not calls[0]]
    second = [
        part
        for chunk in stream(model="gemini-2.5-flash", contents="Paris?", config=config)
        for part in chunk.candidates[0].content.parts  # type: ignore[index,union-attr]
    ]
    assert [(bool(p.thought), p.text) for p in second[:2]] == [(True, "Done."), (False, "Sunny")]
    assert second[-1].text == ""
    assert second[-1].thought_signature
