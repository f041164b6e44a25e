"""The contract while streaming: mid-stream faults, retries, stopping early, secrets.

Every fault is injected by the emulator over real HTTP and read by the real SDK
transport; nothing but a `WinkError` may come out of the iteration.
"""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import KEY as SECRET, PROVIDERS, make_adapter
from wink import (
    BadRequestError,
    ContextWindowExceededError,
    Deadline,
    DeadlineExceededError,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptFailed,
    RequestRetried,
    RetryPolicy,
    RoundRestarted,
    Session,
    StreamEvent,
    TextDelta,
    ThrottleError,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    WinkError,
)
from wink.adapters.base import ProviderAdapter
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

TEXT = "The forecast for Paris: sunny all day, light wind, 21 degrees at noon."
AFTER = 6  # events before a fault: some text has been yielded on every wire format
RETRY = RetryPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, jitter=0.0)


@dataclass(frozen=True)
class Noted:
    text: str


@dataclass(frozen=True)
class NoteParams:
    text: str


async def note(params: NoteParams, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Noted(params.text))
    return ToolResult.ok(None, message="noted")


async def slow(params: NoteParams, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Noted("slow started"))
    await asyncio.sleep(30)
    return ToolResult.ok(None, message="never")


def make_prompt() -> Prompt:
    tools = [
        Tool(name="note", description="Note something", handler=note),
        Tool(name="slow", description="Takes its time", handler=slow),
    ]
    section = MarkdownSection(key="task", title="Task", template="Weather?", tools=tools)
    return Prompt(name="faults", sections=[section])


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator(stream_chunk_size=5) as emu:
        yield emu


def drain(adapter: ProviderAdapter, session: Session) -> tuple[list[StreamEvent], Any]:
    """Iterate a whole stream: (events, the WinkError it raised or None)."""
    events: list[StreamEvent] = []
    with adapter.stream(make_prompt(), session=session) as stream:
        try:
            for event in stream:
                events.append(event)
        except WinkError as error:
            return events, error
    return events, None


def text_of(events: list[StreamEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Poll `condition` (the server sees a closed socket a moment after the client)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


# --- every fault has its typed outcome

# (id, fault, class, phase, throttle kind, retry_safe)
FAULTS: list[tuple[str, Fault, type[WinkError], str, str | None, bool | None]] = [
    ("error-event", Fault.stream_error(AFTER), ThrottleError, "request", "overloaded", True),
    (
        "rate-limit-event",
        Fault.stream_error(AFTER, kind="rate_limit"),
        ThrottleError,
        "request",
        "rate_limit",
        True,
    ),
    (
        "bad-request-event",
        Fault.stream_error(AFTER, kind="bad_request"),
        BadRequestError,
        "request",
        None,
        None,
    ),
    (
        "context-window-event",
        Fault.stream_error(AFTER, kind="context_window_exceeded"),
        ContextWindowExceededError,
        "request",
        None,
        None,
    ),
    ("reset", Fault.stream_reset(AFTER), ThrottleError, "request", "connection", True),
    ("truncated", Fault.stream_truncated(AFTER), ThrottleError, "request", "connection", True),
    ("malformed", Fault.stream_malformed(AFTER), PromptEvaluationError, "response", None, None),
    ("drop", Fault.drop_connection(), ThrottleError, "request", "connection", True),
    ("non-json", Fault.non_json(), PromptEvaluationError, "response", None, None),
    ("wrong-shape", Fault.wrong_shape(), PromptEvaluationError, "response", None, None),
    ("429-first", Fault.rate_limit(retry_after=1.0), ThrottleError, "request", "rate_limit", True),
    ("overloaded-first", Fault.overloaded(), ThrottleError, "request", "overloaded", True),
    ("hang", Fault.hang(seconds=5.0), ThrottleError, "request", "timeout", True),
]


@pytest.mark.parametrize(
    ("fault", "kind", "phase", "throttle", "retry_safe"),
    [pytest.param(*case[1:], id=case[0]) for case in FAULTS],
)
def test_every_fault_ends_the_stream_with_its_typed_error(
    provider: str,
    emulator: ProviderEmulator,
    fault: Fault,
    kind: type[WinkError],
    phase: str,
    throttle: str | None,
    retry_safe: bool | None,
) -> None:
    emulator.enqueue(fault, Turn.text(TEXT))
    session = Session()
    # only a hang waits for the timeout; any other fault is answered at once, but on a
    # loaded machine that may take longer than a short timeout (then a timeout error)
    timeout = 0.25 if fault.kind == "hang" else 30.0
    events, error = drain(make_adapter(provider, emulator, timeout=timeout), session)
    assert type(error) is kind, error
    assert error.phase == phase
    if throttle is not None:
        assert error.details.kind == throttle
        assert error.details.retry_safe is retry_safe
        assert error.details.attempts == 1
    assert len(emulator.requests) == 1  # RetryPolicy(max_attempts=1): never sent again
    assert TEXT.startswith(text_of(events))
    (failed,) = session[PromptFailed]
    assert failed.error is error


def test_an_exhausted_quota_mid_stream_is_not_retried(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(Fault.stream_error(AFTER, kind="quota_exhausted"), Turn.text(TEXT))
    adapter = make_adapter(provider, emulator, retry_policy=RETRY)
    _, error = drain(adapter, Session())
    # Anthropic's billing_error stands for a 402: an exhausted quota like the others' 429
    assert isinstance(error, ThrottleError)
    assert error.details.kind == "quota_exhausted"
    assert not error.details.retry_safe
    assert len(emulator.requests) == 1


# --- retries


def test_a_round_that_failed_before_any_event_is_retried_unseen(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(Fault.stream_error(0), Fault.rate_limit(retry_after=0.0), Turn.text(TEXT))
    session = Session()
    events, error = drain(make_adapter(provider, emulator, retry_policy=RETRY), session)
    assert error is None
    assert not any(isinstance(event, RoundRestarted) for event in events)
    assert text_of(events) == TEXT
    assert len(session[RequestRetried]) == 2
    assert len(emulator.requests) == 3


@pytest.mark.parametrize(
    "fault",
    [Fault.stream_error(AFTER), Fault.stream_reset(AFTER), Fault.stream_truncated(AFTER)],
    ids=["error-event", "reset", "truncated"],
)
def test_a_round_that_failed_after_its_first_events_restarts_visibly(
    provider: str, emulator: ProviderEmulator, fault: Fault
) -> None:
    emulator.enqueue(fault, Turn.text(TEXT))
    session = Session()
    events, error = drain(make_adapter(provider, emulator, retry_policy=RETRY), session)
    assert error is None
    (restart,) = [event for event in events if isinstance(event, RoundRestarted)]
    assert (restart.round, restart.attempt) == (1, 2)
    assert restart.error.details.retry_safe
    before, after = events[: events.index(restart)], events[events.index(restart) + 1 :]
    assert text_of(before)  # the caller had seen part of the round...
    assert TEXT.startswith(text_of(before))
    assert text_of(after) == TEXT  # ...and gets the whole round again, after the marker
    (retried,) = session[RequestRetried]
    assert retried.attempt == 1


def test_a_stream_and_evaluate_give_the_session_the_same_events_on_a_retry(
    emulator: ProviderEmulator,
) -> None:
    adapter = make_adapter("anthropic", emulator, retry_policy=RETRY)
    emulator.enqueue(Fault.stream_error(AFTER), Turn.text(TEXT))
    streamed = Session()
    drain(adapter, streamed)
    emulator.enqueue(Fault.overloaded(), Turn.text(TEXT))
    evaluated = Session()
    adapter.evaluate(make_prompt(), session=evaluated)
    assert [type(event) for event in streamed.events] == [type(event) for event in evaluated.events]


def test_giving_up_raises_the_last_failure_with_its_attempts(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(Fault.stream_reset(AFTER), Fault.stream_reset(AFTER), Turn.text(TEXT))
    policy = RetryPolicy(max_attempts=2, initial_delay=0.0, max_delay=0.0, jitter=0.0)
    events, error = drain(make_adapter(provider, emulator, retry_policy=policy), Session())
    assert isinstance(error, ThrottleError)
    assert error.details.attempts == 2
    assert error.details.retry_safe
    assert sum(isinstance(event, RoundRestarted) for event in events) == 1


# --- secrets


def test_secrets_never_appear_in_stream_errors(provider: str, emulator: ProviderEmulator) -> None:
    emulator.enqueue(
        Fault.stream_error(AFTER, kind="bad_request", message=f"invalid key {SECRET} rejected")
    )
    _, error = drain(make_adapter(provider, emulator), Session())
    assert isinstance(error, PromptEvaluationError)
    shown = "".join(traceback.format_exception(error)) + repr(error) + repr(error.provider_payload)
    assert "rejected" in shown
    assert SECRET not in shown


# --- stopping early


def slow_emulator(emu: ProviderEmulator) -> None:
    emu.set_streaming(chunk_size=3, chunk_delay=0.05)  # ~1.2 s for TEXT: far from over
    emu.enqueue(Turn.text(TEXT))


def test_break_closes_the_connection_at_once(provider: str, emulator: ProviderEmulator) -> None:
    slow_emulator(emulator)
    adapter = make_adapter(provider, emulator)
    session = Session()
    with adapter.stream(make_prompt(), session=session) as stream:
        for event in stream:
            if isinstance(event, TextDelta):
                break
    assert wait_until(lambda: emulator.open_connections == 0)
    assert not [t for t in threading.enumerate() if t.name.startswith("wink-stream")]
    assert session[PromptFailed] == ()  # stopping is not failing


def test_an_exception_in_the_loop_body_closes_the_connection(emulator: ProviderEmulator) -> None:
    slow_emulator(emulator)
    adapter = make_adapter("openai", emulator)

    def read() -> None:
        with adapter.stream(make_prompt(), session=Session()) as stream:
            for event in stream:
                if isinstance(event, TextDelta):
                    raise KeyError("the caller's own bug")

    with pytest.raises(KeyError):
        read()
    assert wait_until(lambda: emulator.open_connections == 0)


async def test_async_break_closes_the_connection_and_leaves_no_task(
    provider: str, emulator: ProviderEmulator
) -> None:
    slow_emulator(emulator)
    adapter = make_adapter(provider, emulator)
    async with adapter.stream_async(make_prompt(), session=Session()) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                break
    assert asyncio.all_tasks() == {asyncio.current_task()}
    await adapter.aclose()
    assert await asyncio.to_thread(wait_until, lambda: emulator.open_connections == 0)


async def test_a_cancelled_consumer_stops_the_stream(emulator: ProviderEmulator) -> None:
    slow_emulator(emulator)
    adapter = make_adapter("anthropic", emulator)
    first = asyncio.Event()

    async def consume() -> None:
        async with adapter.stream_async(make_prompt(), session=Session()) as stream:
            async for _ in stream:
                first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert asyncio.all_tasks() == {asyncio.current_task()}
    await adapter.aclose()
    assert await asyncio.to_thread(wait_until, lambda: emulator.open_connections == 0)


def test_the_deadline_cuts_a_slow_stream(provider: str, emulator: ProviderEmulator) -> None:
    slow_emulator(emulator)
    adapter = make_adapter(provider, emulator)
    deadline = Deadline(0.4)
    events: list[StreamEvent] = []
    with (
        pytest.raises(DeadlineExceededError),
        adapter.stream(make_prompt(), session=Session(), deadline=deadline) as stream,
    ):
        events.extend(stream)
    assert TEXT.startswith(text_of(events))
    assert wait_until(lambda: emulator.open_connections == 0)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_tool_round_cut_short_is_rolled_back(mode: str, emulator: ProviderEmulator) -> None:
    emulator.enqueue(
        Turn.tool_calls(
            EmulatedToolCall("note", {"text": "kept only if the round completes"}),
            EmulatedToolCall("slow", {"text": "x"}),
        )
    )
    adapter = make_adapter("openai", emulator)
    session = Session()
    if mode == "sync":
        with adapter.stream(make_prompt(), session=session) as stream:
            for event in stream:
                if isinstance(event, ToolInvoked):  # `note` is done, `slow` still runs
                    break
    else:

        async def run() -> None:
            async with adapter.stream_async(make_prompt(), session=session) as stream:
                async for event in stream:
                    if isinstance(event, ToolInvoked):
                        break
            await adapter.aclose()

        asyncio.run(run())
    assert session[Noted] == ()
    assert session[ToolInvoked] == ()


def test_a_failed_stream_closes_its_connection_while_the_error_is_kept(
    provider: str, emulator: ProviderEmulator
) -> None:
    """The error's traceback holds the frames that read the body: only an explicit close
    ends the connection while the caller keeps the error (logged, re-raised later)."""
    emulator.set_streaming(chunk_size=3, chunk_delay=0.05)
    emulator.enqueue(Fault.stream_malformed(AFTER), Turn.text(TEXT))
    _, error = drain(make_adapter(provider, emulator), Session())
    assert isinstance(error, PromptEvaluationError)
    assert wait_until(lambda: emulator.open_connections == 0)
    assert error.__traceback__ is not None


async def test_an_async_stream_with_a_deadline(provider: str, emulator: ProviderEmulator) -> None:
    """With a deadline the evaluation reads the body itself (its timeout can cut a read):
    a generous one lets the stream end as usual, a short one cuts it."""
    emulator.enqueue(Turn.text(TEXT))
    adapter = make_adapter(provider, emulator)
    async with adapter.stream_async(
        make_prompt(), session=Session(), deadline=Deadline(30.0)
    ) as stream:
        events = [event async for event in stream]
    assert text_of(events) == TEXT == stream.response.text
    slow_emulator(emulator)
    with pytest.raises(DeadlineExceededError):
        async with adapter.stream_async(
            make_prompt(), session=Session(), deadline=Deadline(0.3)
        ) as stream:
            events = [event async for event in stream]
    await adapter.aclose()
    assert await asyncio.to_thread(wait_until, lambda: emulator.open_connections == 0)


def test_a_stream_dropped_without_with_is_closed_when_collected(
    emulator: ProviderEmulator,
) -> None:
    slow_emulator(emulator)
    adapter = make_adapter("anthropic", emulator)
    for event in adapter.stream(make_prompt(), session=Session()):
        if isinstance(event, TextDelta):
            break  # no `with`: the stream object is dropped here
    assert wait_until(lambda: emulator.open_connections == 0)
