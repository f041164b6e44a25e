"""`RoundAttempts`, the one round-sending helper of the loop and `FallbackAdapter`."""

from __future__ import annotations

import asyncio

from wink import (
    AuthenticationError,
    RequestRetried,
    RetryPolicy,
    RoundRestarted,
    Session,
    StreamEvent,
    TextDelta,
    ThrottleDetails,
    ThrottleError,
)
from wink.core.agent.rounds import NULL_SINK, RoundAttempts
from wink.core.agent.stream import EventQueue
from wink.core.foundation.events import EventSink
from wink.core.foundation.messages import ModelRequest, ModelResponse, UserMessage

REQUEST = ModelRequest("p", (UserMessage("hi"),))
ANSWER = ModelResponse(text="done")
RETRY = RetryPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, jitter=0.0)


def overloaded() -> ThrottleError:
    return ThrottleError("busy", prompt_name="p", details=ThrottleDetails(kind="overloaded"))


class Flaky:
    """Fails its first attempt (after showing a delta when streamed), then answers."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.calls.append("request")
        if len(self.calls) == 1:
            raise overloaded()
        return ANSWER

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse:
        self.calls.append("stream")
        sink.put([TextDelta("partial")])
        if len(self.calls) == 1:
            raise overloaded()
        return ANSWER


def events(queue: EventQueue) -> list[StreamEvent]:
    return [event for batch in iter(queue.take, None) for event in batch]


def test_the_null_sink_asks_for_whole_rounds_and_shows_nothing() -> None:
    client, session = Flaky(), Session()
    attempts = RoundAttempts(session, NULL_SINK, 1)
    assert asyncio.run(attempts.send(client, REQUEST, RETRY, "a:m")) is ANSWER
    assert client.calls == ["request", "request"]
    assert NULL_SINK.count == 0
    assert [event.adapter for event in session[RequestRetried]] == ["a:m"]


def test_a_retry_after_shown_events_is_announced_once_per_attempt() -> None:
    client, session, queue = Flaky(), Session(), EventQueue(ahead=8)
    attempts = RoundAttempts(session, queue, 4)
    assert asyncio.run(attempts.send(client, REQUEST, RETRY, "a:m")) is ANSWER
    assert client.calls == ["stream", "stream"]
    shown = events(queue)
    assert [type(event).__name__ for event in shown] == [
        "TextDelta",
        "RoundRestarted",
        "TextDelta",
    ]
    restarted = shown[1]
    assert isinstance(restarted, RoundRestarted)
    assert (restarted.round, restarted.attempt) == (4, 2)


def test_a_failure_that_moves_on_is_told_as_overloaded_only_when_something_was_shown() -> None:
    queue = EventQueue(ahead=8)
    attempts = RoundAttempts(Session(), queue, 2)
    refused = AuthenticationError("bad key", prompt_name="p", phase="request")
    attempts.restart(refused)  # nothing shown since the attempt began: nothing to void
    assert queue.count == 0
    queue.put([TextDelta("partial")])
    attempts.restart(refused)
    attempts.restart(refused)  # already voided
    restarted = events(queue)[1:]
    assert len(restarted) == 1
    event = restarted[0]
    assert isinstance(event, RoundRestarted)
    assert event.error.details.kind == "overloaded"
    assert (event.round, event.attempt) == (2, 2)
    assert str(refused) in str(event.error)
