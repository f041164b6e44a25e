"""Streaming on every wire format, through the real SDKs and the emulator over HTTP.

The reference is `evaluate`: for the same scripted traffic, a stream must end in the same
`PromptResponse`, send the same requests (but for the stream flags) and give the session
the same events; on top, its events must tell the answer as it came.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.adapters import PROVIDERS, make_adapter
from tests.helpers.prompts import Answer, CityParams, weather
from wink import (
    InvalidArgumentError,
    MarkdownSection,
    Prompt,
    PromptStream,
    RoundFinished,
    Session,
    StreamEvent,
    StreamNotFinishedError,
    TextDelta,
    Tool,
    ToolCallReady,
    ToolCallStarted,
    ToolInvoked,
    UsageReported,
)
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

STREAM_FLAGS = ("stream", "stream_options")


def make_prompt(output_type: type[Any] | None = None) -> Prompt:
    tool = Tool(name="weather", description="Weather by city", handler=weather)
    section = MarkdownSection(key="task", title="Task", template="Weather?", tools=[tool])
    return Prompt(name="streamed", sections=[section], output_type=output_type)


def tool_round() -> Turn:
    return Turn.tool_calls(
        EmulatedToolCall("weather", {"city": "Paris"}, id="call_paris"),
        EmulatedToolCall("weather", {"city": "Lyon"}, id="call_lyon"),
        text="Let me look.",
        input_tokens=30,
        output_tokens=12,
    )


FINAL = "Sunny in Paris; Lyon has no station. «Ça va» — 東京 🌤"


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator(stream_chunk_size=5) as emu:
        yield emu


def collect(stream: PromptStream[Any]) -> list[StreamEvent]:
    with stream:
        return list(stream)


def without_stream_flags(body: Any) -> Any:
    return {key: value for key, value in body.items() if key not in STREAM_FLAGS}


def last_round_text(events: list[StreamEvent]) -> str:
    finished = [index for index, event in enumerate(events) if isinstance(event, RoundFinished)]
    start = finished[-2] + 1 if len(finished) > 1 else 0
    return "".join(event.text for event in events[start:] if isinstance(event, TextDelta))


# --- the same answer as evaluate


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_streamed_tool_loop_ends_as_evaluate_ends(
    provider: str, mode: str, emulator: ProviderEmulator
) -> None:
    adapter = make_adapter(provider, emulator)
    emulator.enqueue(tool_round(), Turn.text(FINAL, input_tokens=50, output_tokens=9))
    evaluated_session = Session()
    evaluated = adapter.evaluate(make_prompt(), session=evaluated_session)
    evaluated_requests = emulator.requests

    emulator.clear()
    emulator.enqueue(tool_round(), Turn.text(FINAL, input_tokens=50, output_tokens=9))
    session = Session()
    if mode == "sync":
        stream = adapter.stream(make_prompt(), session=session)
        events = collect(stream)
        response = stream.response
    else:

        async def run() -> tuple[list[StreamEvent], Any]:
            async with adapter.stream_async(make_prompt(), session=session) as stream:
                seen = [event async for event in stream]
            await adapter.aclose()
            return seen, stream.response

        events, response = asyncio.run(run())

    assert response.text == evaluated.text == FINAL
    assert response.usage == evaluated.usage
    assert (response.rounds, response.finish_reason) == (evaluated.rounds, evaluated.finish_reason)
    assert [(i.name, i.result) for i in response.tool_invocations] == [
        (i.name, i.result) for i in evaluated.tool_invocations
    ]
    if provider != "google":  # Gemini sends no ids: wink makes unique ones, new each time
        streamed_ids = [i.call_id for i in response.tool_invocations]
        assert streamed_ids == [i.call_id for i in evaluated.tool_invocations]
    assert [type(event) for event in session.events] == [
        type(event) for event in evaluated_session.events
    ]
    streamed_requests = emulator.requests
    assert [without_stream_flags(r.body) for r in streamed_requests] == [
        without_stream_flags(r.body) for r in evaluated_requests
    ]
    assert last_round_text(events) == FINAL


def test_events_tell_each_round_as_it_came(provider: str, emulator: ProviderEmulator) -> None:
    emulator.enqueue(tool_round(), Turn.text(FINAL, input_tokens=50, output_tokens=9))
    events = collect(make_adapter(provider, emulator).stream(make_prompt(), session=Session()))
    kinds = [type(event).__name__ for event in events]
    first_round = kinds[: kinds.index("RoundFinished") + 1]
    assert "".join(e.text for e in events[: len(first_round)] if isinstance(e, TextDelta)) == (
        "Let me look."
    )
    started = [event for event in events if isinstance(event, ToolCallStarted)]
    ready = [event for event in events if isinstance(event, ToolCallReady)]
    assert [(event.index, event.name) for event in started] == [(0, "weather"), (1, "weather")]
    assert [event.arguments for event in ready] == [{"city": "Paris"}, {"city": "Lyon"}]
    assert [event.id for event in ready] == [event.id for event in started]
    invoked = [event for event in events if isinstance(event, ToolInvoked)]
    assert sorted(event.call_id for event in invoked) == sorted(event.id for event in started)
    # within a round: the model's output, its usage, the tools, then the end of the round
    assert first_round.index("ToolCallReady") < first_round.index("UsageReported")
    assert first_round.index("UsageReported") < first_round.index("ToolInvoked")
    finished = [event for event in events if isinstance(event, RoundFinished)]
    assert [(e.round, e.finish_reason, e.tool_calls) for e in finished] == [
        (1, "tool_calls", 2),
        (2, "stop", 0),
    ]
    assert finished[0].usage.input_tokens == 30
    usage = [event.usage for event in events if isinstance(event, UsageReported)]
    assert [u.output_tokens for u in usage] == [12, 9]
    assert kinds[-1] == "RoundFinished"


def test_the_text_arrives_in_the_emulators_pieces(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.set_streaming(chunk_size=4)
    emulator.enqueue(Turn.text("abcdefghij"))
    events = collect(make_adapter(provider, emulator).stream(make_prompt(), session=Session()))
    assert [event.text for event in events if isinstance(event, TextDelta)] == [
        "abcd",
        "efgh",
        "ij",
    ]


def test_structured_output_is_parsed_at_the_end(provider: str, emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.json({"city": "Paris", "degrees": 21}))
    stream = make_adapter(provider, emulator).stream(make_prompt(Answer), session=Session())
    collect(stream)
    assert stream.response.output == Answer("Paris", 21)


def test_structured_output_through_its_tool(emulator: ProviderEmulator) -> None:
    """Anthropic (and Gemini with tools) take the output as a tool: its call streams as
    a tool call, and the loop decides it is the answer, once, as in evaluate."""
    emulator.enqueue(
        Turn.tool_calls(EmulatedToolCall("final_result_Answer", {"city": "Paris", "degrees": 21}))
    )
    stream = make_adapter("anthropic", emulator).stream(make_prompt(Answer), session=Session())
    events = collect(stream)
    assert stream.response.output == Answer("Paris", 21)
    assert [e.name for e in events if isinstance(e, ToolCallReady)] == ["final_result_Answer"]


def test_the_request_asks_for_a_stream(provider: str, emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.text("hi"))
    collect(make_adapter(provider, emulator).stream(make_prompt(), session=Session()))
    (request,) = emulator.requests
    if provider == "google":
        assert request.path.endswith(":streamGenerateContent")
        assert request.query == "alt=sse"
    else:
        assert request.body["stream"] is True
    if provider == "openai":
        assert request.body["stream_options"] == {"include_usage": True}


# --- the stream object


def test_response_is_known_only_at_the_end(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.text("one two three"))
    with make_adapter("openai", emulator).stream(make_prompt(), session=Session()) as stream:
        next(stream)
        with pytest.raises(StreamNotFinishedError, match="not ended yet"):
            _ = stream.response
        rest = list(stream)
    assert rest
    assert stream.response.text == "one two three"


def test_a_stream_iterated_without_with_closes_itself(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.text("no with block"))
    stream = make_adapter("anthropic", emulator).stream(make_prompt(), session=Session())
    texts = [event.text for event in stream if isinstance(event, TextDelta)]
    assert "".join(texts) == "no with block"
    assert stream.response.text == "no with block"
    assert list(stream) == []  # finished: iterating again yields nothing


def test_a_stream_is_single_use(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.text("x" * 40))
    stream = make_adapter("openai", emulator).stream(make_prompt(), session=Session())
    with stream:
        next(stream)
    with pytest.raises(StreamNotFinishedError, match="closed before its end"):
        _ = stream.response
    with pytest.raises(StreamNotFinishedError, match="single use"), stream:
        pass


def test_wrong_arguments_fail_at_the_call(emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", emulator)
    with pytest.raises(InvalidArgumentError):
        adapter.stream(b"not a prompt", session=Session())  # type: ignore[call-overload]
    with pytest.raises(InvalidArgumentError):
        adapter.stream_async(make_prompt(), session=Session(), max_rounds=0)
    assert emulator.requests == []


async def test_sync_stream_inside_a_running_loop(emulator: ProviderEmulator) -> None:
    """Called where a loop runs (Jupyter), the sync stream steps its own loop on a
    worker thread instead of failing or deadlocking."""
    emulator.enqueue(Turn.text("from inside a loop"))
    stream = make_adapter("google", emulator).stream(make_prompt(), session=Session())
    events = collect(stream)
    assert stream.response.text == "from inside a loop"
    assert any(isinstance(event, TextDelta) for event in events)


# --- parallel calls whose fragments interleave


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"


def _call_delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


INTERLEAVED = {
    "openai": "".join(
        [
            _chat_chunk({"role": "assistant", "content": None}),
            _chat_chunk(_call_delta(0, id="call_a", function={"name": "weather", "arguments": ""})),
            _chat_chunk(_call_delta(1, id="call_b", function={"name": "weather", "arguments": ""})),
            _chat_chunk(_call_delta(1, function={"arguments": '{"ci'})),
            _chat_chunk(_call_delta(0, function={"arguments": '{"city": '})),
            _chat_chunk(_call_delta(1, function={"arguments": 'ty": "Lyon"}'})),
            _chat_chunk(_call_delta(0, function={"arguments": '"Paris"}'})),
            _chat_chunk({}, "tool_calls"),
            "data: [DONE]\n\n",
        ]
    ),
    "openai-responses": "".join(
        "event: " + kind + "\ndata: " + json.dumps({"type": kind, **fields}) + "\n\n"
        for kind, fields in [
            ("response.created", {"response": {"id": "resp_1", "output": []}}),
            (
                "response.output_item.added",
                {
                    "output_index": 0,
                    "item": {
                        "type": "function_call",
                        "id": "fc_a",
                        "call_id": "call_a",
                        "name": "weather",
                        "arguments": "",
                    },
                },
            ),
            (
                "response.output_item.added",
                {
                    "output_index": 1,
                    "item": {
                        "type": "function_call",
                        "id": "fc_b",
                        "call_id": "call_b",
                        "name": "weather",
                        "arguments": "",
                    },
                },
            ),
            (
                "response.function_call_arguments.delta",
                {"output_index": 1, "item_id": "fc_b", "delta": '{"city": '},
            ),
            (
                "response.function_call_arguments.delta",
                {"output_index": 0, "item_id": "fc_a", "delta": '{"city": '},
            ),
            (
                "response.function_call_arguments.delta",
                {"output_index": 0, "item_id": "fc_a", "delta": '"Paris"}'},
            ),
            (
                "response.function_call_arguments.delta",
                {"output_index": 1, "item_id": "fc_b", "delta": '"Lyon"}'},
            ),
            (
                "response.completed",
                {
                    "response": {
                        "id": "resp_1",
                        "status": "completed",
                        "output": [
                            {
                                "type": "function_call",
                                "id": "fc_a",
                                "call_id": "call_a",
                                "name": "weather",
                                "arguments": '{"city": "Paris"}',
                            },
                            {
                                "type": "function_call",
                                "id": "fc_b",
                                "call_id": "call_b",
                                "name": "weather",
                                "arguments": '{"city": "Lyon"}',
                            },
                        ],
                        "usage": {"input_tokens": 5, "output_tokens": 7},
                    }
                },
            ),
        ]
    ),
}


@pytest.mark.parametrize("provider", sorted(INTERLEAVED))
def test_interleaved_fragments_of_parallel_calls_assemble_per_call(
    provider: str, emulator: ProviderEmulator
) -> None:
    body = INTERLEAVED[provider].encode()
    emulator.inject(Fault.http(200, body, {"content-type": "text/event-stream"}, chunks=[17, 5]))
    emulator.enqueue(Turn.text("done"))
    session = Session()
    events = collect(make_adapter(provider, emulator).stream(make_prompt(), session=session))
    ready = [event for event in events if isinstance(event, ToolCallReady)]
    assert [(event.id, event.arguments) for event in ready] == [
        ("call_a", {"city": "Paris"}),
        ("call_b", {"city": "Lyon"}),
    ]
    assert [(e.call_id, e.params) for e in session[ToolInvoked]] == [
        ("call_a", CityParams("Paris")),
        ("call_b", CityParams("Lyon")),
    ]


async def test_a_callers_sync_client_streams_under_stream_async(
    emulator: ProviderEmulator,
) -> None:
    """A sync client the caller gave is read on a worker thread, a piece at a time: the
    caller's loop is never blocked by it."""
    import openai

    emulator.enqueue(Turn.text("read on a worker thread"))
    client = openai.OpenAI(api_key="k", base_url=emulator.base_url("openai"), max_retries=0)
    adapter = make_adapter("openai", emulator, client=client)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    async with adapter.stream_async(make_prompt(), session=Session()) as stream:
        texts = [event.text async for event in stream if isinstance(event, TextDelta)]
    ticker.cancel()
    assert "".join(texts) == stream.response.text == "read on a worker thread"
    assert ticks > len(texts)  # the loop ran between the pieces
    client.close()
