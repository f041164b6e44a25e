"""A scripted turn as the providers stream it, and the faults that break a stream.

The turn is first rendered as the wire's whole answer (`WireFormat.render_turn`), so the
ids, usage, finish reason, thinking and signatures of the stream are those of the
non-streamed answer; the wire then streams it (`WireFormat.render_stream`, in each wire's
`*_stream` module): text, thinking and tool arguments in pieces of `chunk_size`
characters, one event each, framed as that wire frames them. This module is what every
wire shares: the plan, the pace, and where and how a fault breaks the stream.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ..core.foundation.checks import a_number, a_whole_number
from .faults import Fault
from .formats import split
from .records import Provider
from .turns import Turn
from .wire import WIRES, WireContext

__all__ = [
    "NOT_JSON",
    "STREAM_FAULTS",
    "StreamPlan",
    "breaks_stream",
    "cut",
    "plan_stream",
    "split",
    "stream_settings",
    "without_stream",
]

STREAM_FAULTS = frozenset({"stream_error", "stream_reset", "stream_malformed", "stream_truncated"})
NOT_JSON = b"<html><head><title>502 Bad Gateway</title></head><body>upstream error</body></html>"
"""What a proxy in front of the API answers when it fails: a `not_json` fault's body."""


class StreamPlan:
    """What the server sends: the head, the events (one HTTP chunk each), and whether to
    reset the connection after `reset_after` of them."""

    __slots__ = ("events", "headers", "reset_after", "status")

    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        events: list[bytes],
        reset_after: int | None = None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.events = events
        self.reset_after = reset_after


def stream_settings(chunk_size: int, chunk_delay: float) -> tuple[int, float]:
    """The emulator's stream pace, checked: characters per event, seconds between."""
    size = a_whole_number(
        chunk_size, "stream_chunk_size (characters per event)", "chunk_size", minimum=1
    )
    delay = a_number(chunk_delay, "stream_chunk_delay (seconds)", "chunk_delay", minimum=0)
    return size, delay


def plan_stream(
    provider: Provider, turn: Turn, ctx: WireContext, chunk_size: int, fault: Fault | None = None
) -> StreamPlan:
    """The streamed answer for `turn`, broken as `fault` (a stream fault) says."""
    wire = WIRES[provider]
    rendered = wire.render_turn(turn, ctx)
    headers = {**rendered.headers, **wire.stream_headers()}
    body = cast(dict[str, Any], json.loads(rendered.body))
    events = wire.render_stream(body, ctx, max(1, chunk_size), turn)
    if fault is None:
        return StreamPlan(200, headers, events)
    after = max(0, min(fault.after, len(events)))
    kind = fault.kind
    if kind == "stream_error":
        return StreamPlan(200, headers, [*events[:after], *wire.stream_error(fault, ctx)])
    if kind == "stream_reset":
        return StreamPlan(200, headers, events, reset_after=after)
    if kind == "stream_malformed":
        broken = wire.malformed_event(events[min(after, len(events) - 1)])
        return StreamPlan(200, headers, [*events[:after], broken, *events[after:]])
    if kind == "stream_truncated":
        return StreamPlan(200, headers, events[:after])
    if kind == "drop_connection":
        return StreamPlan(200, headers, events, reset_after=len(events) // 2)
    if kind == "non_json":
        return StreamPlan(200, {**headers, "content-type": "text/html"}, [NOT_JSON])
    if kind == "wrong_shape":
        return StreamPlan(200, headers, [wire.stream_event(fault.body or [1, 2, 3])])
    raise ValueError(f"{kind} is not a stream fault")


_STREAM_BREAKS = frozenset({*STREAM_FAULTS, "drop_connection", "non_json", "wrong_shape"})


def breaks_stream(fault: Fault) -> bool:
    """A fault that acts inside a streamed body (the others answer before it starts)."""
    return fault.kind in _STREAM_BREAKS


def without_stream(fault: Fault) -> Fault:
    """A stream fault hitting a request that does not stream: the fault it stands for."""
    if fault.kind == "stream_error":
        kind = fault.error_kind or "overloaded"
        if kind == "rate_limit":
            return Fault.rate_limit()
        if kind == "quota_exhausted":
            return Fault.quota_exhausted()
        if kind == "bad_request":
            return Fault.bad_request()
        if kind == "server_error":
            return Fault.server_error()
        return Fault.overloaded()
    if fault.kind == "stream_malformed":
        return Fault.non_json()
    return Fault.drop_connection()  # reset, truncated: the body is cut short


def cut(body: bytes, sizes: tuple[int, ...]) -> tuple[bytes, ...]:
    """`body` in pieces of the given sizes, used in turn until it is all out."""
    pieces: list[bytes] = []
    start = 0
    turn = 0
    while start < len(body):
        size = sizes[turn % len(sizes)]
        pieces.append(body[start : start + size])
        start += size
        turn += 1
    return tuple(pieces)
