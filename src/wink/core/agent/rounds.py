"""One round's request, retried, as the caller sees it: the loop's and `FallbackAdapter`'s.

A round is asked for whole (`request`) or streamed into the evaluation's sink (`stream`).
An evaluation nobody streams has `NULL_SINK`: its events go nowhere and its rounds are
asked for whole, so the loop needs no `if sink` of its own. When an attempt fails after
some of its events reached the caller, the next attempt (a retry, or the next adapter of
a fallback chain) is announced with `RoundRestarted`: what the round showed so far is
void. `RoundAttempts` is that logic, written once: the loop sends each round through it
under its retry policy, and a fallback chain sends each adapter's attempt through it
under that adapter's own.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from ..foundation.errors import ThrottleDetails, ThrottleError, WinkError
from ..foundation.events import EventSink, RequestRetried, RoundRestarted, StreamEvent
from ..foundation.messages import ModelRequest, ModelResponse
from ..prompting.session import Session
from ..telemetry.spans import current_trace
from ..throttling.retry import RetryPolicy

__all__ = [
    "NULL_SINK",
    "NullSink",
    "Requester",
    "RoundAttempts",
    "publish",
    "record_retry",
]


class NullSink:
    """The sink of an evaluation nobody streams: it takes every event and keeps none, and
    its rounds are requested whole (`RoundAttempts.send`), never streamed."""

    __slots__ = ()

    @property
    def count(self) -> int:
        return 0

    def put(self, events: list[StreamEvent]) -> None:
        pass

    async def send(self, events: list[StreamEvent]) -> None:
        pass


NULL_SINK = NullSink()


class Requester(Protocol):
    """What a round is sent through: the loop's model client, or one adapter's runner."""

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse: ...


class RoundAttempts:
    """The attempts of round `round_number` on `sink`, and what the caller is told of them.

    `send` makes one request under a retry policy; `restart` voids, with a
    `RoundRestarted`, the events a failed attempt showed (nothing when it showed none).
    """

    __slots__ = ("_round", "_session", "_shown", "sink")

    def __init__(self, session: Session, sink: EventSink | NullSink, round_number: int) -> None:
        self._session = session
        self.sink = sink
        self._round = round_number
        self._shown = sink.count  # events the caller had when the current attempt began

    async def send(
        self, client: Requester, request: ModelRequest, policy: RetryPolicy, adapter: str
    ) -> ModelResponse:
        """`request` through `client` under `policy`, streamed unless the sink is the
        null one; each retry is recorded as `adapter`'s (`record_retry`)."""
        sink = self.sink
        self._shown = sink.count

        def on_retry(error: ThrottleError, wait: float) -> None:
            self.restart(error)
            record_retry(self._session, request.prompt_name, adapter, error, wait)

        if isinstance(sink, NullSink):
            return await policy.call(
                lambda: client.request(request), deadline=request.deadline, on_retry=on_retry
            )
        return await policy.call(
            lambda: client.stream(request, sink), deadline=request.deadline, on_retry=on_retry
        )

    def restart(self, error: WinkError) -> None:
        """Events of a failed attempt reached the caller: tell it they are void. The
        event carries a `ThrottleError`; another failure (one a fallback chain moves on
        past) is told as the provider being overloaded."""
        sink = self.sink
        if sink.count == self._shown:
            return
        throttle = (
            error
            if isinstance(error, ThrottleError)
            else ThrottleError(
                str(error),
                prompt_name=getattr(error, "prompt_name", "") or "",
                details=ThrottleDetails(kind="overloaded"),
            )
        )
        sink.put([RoundRestarted(self._round, throttle.details.attempts + 1, throttle)])
        self._shown = sink.count


def publish(session: Session, event: object) -> None:
    """An event of this evaluation: on its trace (if traced), then in the session."""
    trace = current_trace()
    if trace is not None:
        trace.record(event)
    session.dispatch(event)


def record_retry(
    session: Session, prompt_name: str, adapter: str, error: ThrottleError, wait: float
) -> None:
    """Record that `adapter` will retry after `wait` seconds (session and trace)."""
    event = RequestRetried(
        prompt_name=prompt_name,
        adapter=adapter,
        kind=error.details.kind,
        attempt=error.details.attempts,
        wait=timedelta(seconds=wait),
        status_code=error.details.status_code,
    )
    publish(session, event)
