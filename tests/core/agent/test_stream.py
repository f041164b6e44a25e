"""The stream objects and the loop's own events, with a scripted model (no wire).

An adapter that has no streaming wire (the scripted one) still streams: each round's
answer arrives whole and is told as events.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    Deadline,
    DeadlineExceededError,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptRendered,
    RetryPolicy,
    RoundFinished,
    RoundRestarted,
    Session,
    StreamEvent,
    TextDelta,
    ThrottleDetails,
    ThrottleError,
    Tool,
    ToolCallReady,
    ToolCallStarted,
    ToolContext,
    ToolInvoked,
    ToolResult,
    UsageReported,
    WinkError,
)
from wink.core.foundation.messages import Usage
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


@dataclass(frozen=True)
class Marked:
    by: str


@dataclass(frozen=True)
class Params:
    key: str


async def mark(params: Params, *, context: ToolContext) -> ToolResult[str]:
    context.session.dispatch(Marked(params.key))
    return ToolResult.ok(params.key)


async def stall(params: Params, *, context: ToolContext) -> ToolResult[str]:
    context.session.dispatch(Marked("stall"))
    await asyncio.sleep(30)
    return ToolResult.ok("never")


PROMPT = Prompt(
    name="scripted",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Go.",
            tools=[
                Tool(name="mark", description="Mark", handler=mark),
                Tool(name="stall", description="Stall", handler=stall),
            ],
        )
    ],
)


def script() -> list[Any]:
    return [
        tool_turn(call("mark", {"key": "a"}, id="c1"), call("mark", '{"key": ', id="c2")),
        final("done", usage=Usage(input_tokens=3, output_tokens=4)),
    ]


def test_an_adapter_without_a_stream_wire_streams_whole_answers() -> None:
    adapter = ScriptedAdapter(script())
    with adapter.stream(PROMPT, session=Session()) as stream:
        events = list(stream)
    kinds = [type(event) for event in events]
    assert kinds[:4] == [ToolCallStarted, ToolCallReady, ToolCallStarted, ToolCallReady]
    assert [e.arguments for e in events if isinstance(e, ToolCallReady)] == [
        {"key": "a"},
        '{"key": ',
    ]
    assert kinds.count(ToolInvoked) == 2
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["done"]
    assert [e.round for e in events if isinstance(e, RoundFinished)] == [1, 2]
    assert isinstance(events[-2], UsageReported)
    assert stream.response.text == "done"
    evaluated = ScriptedAdapter(script()).evaluate(PROMPT, session=Session())
    assert (stream.response.usage, stream.response.rounds) == (evaluated.usage, evaluated.rounds)


def test_a_retry_before_any_event_is_not_shown() -> None:
    throttle = ThrottleError(
        "busy", prompt_name="scripted", details=ThrottleDetails(kind="overloaded")
    )
    adapter = ScriptedAdapter(
        [throttle, final("ok")],
        retry_policy=RetryPolicy(initial_delay=0.0, max_delay=0.0, jitter=0.0),
    )
    with adapter.stream(PROMPT, session=Session()) as stream:
        events = list(stream)
    assert not any(isinstance(event, RoundRestarted) for event in events)
    assert stream.response.text == "ok"


def test_a_failure_is_raised_by_the_iteration_and_by_response() -> None:
    adapter = ScriptedAdapter([final("")])  # neither text nor calls: a response failure
    stream = adapter.stream(PROMPT, session=Session())
    with pytest.raises(PromptEvaluationError, match="neither text nor tool calls") as raised:
        list(stream)
    with pytest.raises(PromptEvaluationError) as again:
        _ = stream.response
    assert again.value is raised.value


def test_a_bug_in_a_reducer_leaves_the_iteration_as_a_wink_error() -> None:
    session = Session()

    def broken(current: Any, event: PromptRendered) -> Any:
        raise ZeroDivisionError("reducer bug")

    session.register_reducer(PromptRendered, broken, slice_type=dict)
    stream = ScriptedAdapter(script()).stream(PROMPT, session=session)
    with pytest.raises(WinkError, match="ZeroDivisionError"):
        list(stream)


async def test_async_stream_of_a_scripted_model() -> None:
    adapter = ScriptedAdapter(script())
    events: list[StreamEvent] = []
    async with adapter.stream_async(PROMPT, session=Session()) as stream:
        async for event in stream:
            events.append(event)
    assert stream.response.text == "done"
    assert sum(isinstance(event, ToolInvoked) for event in events) == 2


def test_evaluate_rolls_back_a_round_cut_by_the_deadline_too() -> None:
    """The round's finished tool must not leave its changes when a sibling is cut: its
    `ToolInvoked` is never recorded either, so the session stays consistent."""
    adapter = ScriptedAdapter([tool_turn(call("mark", {"key": "a"}), call("stall", {"key": "b"}))])
    session = Session()
    with pytest.raises(DeadlineExceededError):
        adapter.evaluate(PROMPT, session=session, deadline=Deadline(0.3))
    assert session[Marked] == ()
    assert session[ToolInvoked] == ()


async def test_a_waiting_caller_gets_each_batch_before_the_evaluation_reads_on() -> None:
    # a body's later pieces are often in already: the caller waiting for the first token
    # gets it before the evaluation decodes them, not eight batches later
    from wink.core.agent.stream import EventQueue

    queue = EventQueue(ahead=8)
    order: list[str] = []

    async def caller() -> None:
        batch = await queue.get()
        assert batch is not None
        order.append(f"got {batch[0]}")

    async def evaluation() -> None:
        for number in range(3):
            await queue.send([TextDelta(str(number))])
            order.append(f"sent {number}")

    waiting = asyncio.create_task(caller())
    await asyncio.sleep(0)  # the caller is parked on the queue
    await evaluation()
    await waiting
    assert order[0] == f"got {TextDelta('0')}"
    assert order[1:] == ["sent 0", "sent 1", "sent 2"]  # nobody waits: no yield per batch


async def test_after_the_first_events_the_evaluation_reads_on_before_handing_over() -> None:
    # a turn of the loop per piece cost more than decoding it: once the caller has its
    # first events, the pieces already in are decoded, then taken together
    from wink.core.agent.stream import EventQueue

    queue = EventQueue(ahead=8)
    batches: list[list[StreamEvent]] = []

    async def caller() -> None:
        while (batch := await queue.get()) is not None:
            batches.append(batch)

    async def evaluation() -> None:
        for number in range(5):
            await queue.send([TextDelta(str(number))])
        queue.close()

    waiting = asyncio.create_task(caller())
    await asyncio.sleep(0)  # the caller is parked on the queue
    await evaluation()
    taken_before_the_evaluation_ended = len(batches)
    await waiting
    assert taken_before_the_evaluation_ended == 1  # the first batch, at once
    assert [batch[0] for batch in batches] == [TextDelta(str(n)) for n in range(5)]


def test_a_stepping_caller_waits_on_a_future_that_a_batch_resolves() -> None:
    # a sync stream runs its loop until this future is done: no task per step
    from wink.core.agent.stream import EventQueue

    loop = asyncio.new_event_loop()
    try:
        queue = EventQueue(ahead=0)
        waiter = queue.waiter(loop)
        assert waiter is not None
        assert not waiter.done()
        assert queue.take() is None  # nothing queued yet

        async def evaluation() -> None:
            await queue.send([TextDelta("a")])  # waits until the caller takes it

        task = loop.create_task(evaluation())
        loop.run_until_complete(waiter)
        assert queue.waiter(loop) is None  # a batch is there: no need to run the loop
        assert queue.take() == [TextDelta("a")]
        assert not task.done()  # a rendezvous: the evaluation waits for the next ask
        next_waiter = queue.waiter(loop)  # asking again lets it go on
        assert next_waiter is not None
        queue.close()
        loop.run_until_complete(next_waiter)
        loop.run_until_complete(task)
        assert queue.waiter(loop) is None
        assert queue.take() is None
    finally:
        loop.close()
