"""What the emulator sends for a pick (a turn or a fault) on a wire: the server's `Reply`,
whole or as a stream's events, with the rate limiter's headers when it sends them.

Kept apart from the emulator's state (`state.py`): rendering reads none of it, only the
wire, the request's context and whether the rate limit shows in headers.
"""

from __future__ import annotations

import json

from .faults import Fault
from .routes import Route
from .scripting import ScriptItem
from .server import RawRequest, Reply
from .streams import NOT_JSON, breaks_stream, cut, plan_stream
from .turns import Turn
from .wire import WIRES, Rendered, WireContext, WireFormat

PLACEHOLDER = Turn.text("This answer never arrives complete.")


def render(
    wire: WireFormat, pick: ScriptItem, ctx: WireContext, delay: float, *, rate_headers: bool
) -> Reply:
    """`pick` answered whole (or as the connection fault it is), `delay` seconds late."""
    if isinstance(pick, Turn):
        rendered = wire.render_turn(pick, ctx)
    elif pick.kind == "hang":
        return Reply(0, {}, b"", delay, "hang", pick.seconds)
    elif pick.kind == "drop_connection":
        rendered = wire.render_turn(PLACEHOLDER, ctx)
        headers = with_rate(wire, rendered, ctx, rate_headers=rate_headers)
        return Reply(200, headers, rendered.body, delay, "drop")
    elif pick.kind == "non_json":
        rendered = wire.render_turn(PLACEHOLDER, ctx)
        rendered = Rendered(200, rendered.headers, NOT_JSON)
    elif pick.kind == "http" and pick.chunks is not None:
        rendered = _raw_fault(pick)
        return Reply(
            rendered.status,
            with_rate(wire, rendered, ctx, rate_headers=rate_headers),
            b"",
            delay,
            pieces=cut(rendered.body, pick.chunks),
            piece_delay=pick.chunk_delay,
        )
    elif pick.kind == "http":
        rendered = _raw_fault(pick)
    else:
        rendered = wire.render_fault(pick, ctx)
    headers = with_rate(wire, rendered, ctx, rate_headers=rate_headers)
    return Reply(rendered.status, headers, rendered.body, delay)


def render_stream(
    wire: WireFormat,
    pick: ScriptItem,
    ctx: WireContext,
    delay: float,
    *,
    under: Turn | None,
    chunking: tuple[int, float],
    rate_headers: bool,
) -> Reply:
    """`pick` answered to a request that asked for a stream: a turn as the provider streams
    it; a fault that breaks streams breaks `under`'s (the turn it does not use up); any
    other fault as `render` answers it (errors come before a stream starts)."""
    if isinstance(pick, Fault) and not breaks_stream(pick):
        return render(wire, pick, ctx, delay, rate_headers=rate_headers)
    if isinstance(pick, Fault):
        plan = plan_stream(wire.provider, under or PLACEHOLDER, ctx, chunking[0], pick)
    else:
        plan = plan_stream(wire.provider, pick, ctx, chunking[0])
    return Reply(
        plan.status,
        with_rate(wire, Rendered(plan.status, plan.headers, b""), ctx, rate_headers=rate_headers),
        b"",
        delay,
        pieces=tuple(plan.events),
        piece_delay=chunking[1],
        reset_after=plan.reset_after,
    )


def with_rate(
    wire: WireFormat, rendered: Rendered, ctx: WireContext, *, rate_headers: bool
) -> dict[str, str]:
    """`rendered`'s headers, and the rate limiter's if it took a token and shows them."""
    headers = rendered.headers
    if ctx.rate is not None and rate_headers:
        headers.update(wire.rate_headers(ctx.rate, ctx.now))
    return headers


def not_found(raw: RawRequest, route: Route, ctx: WireContext) -> Rendered:
    """The 404 of the first wire (in registration order) that takes the request as its
    own: its route named it, or its headers or path say so."""
    for wire in WIRES.values():
        rendered = wire.stray_not_found(raw, wire.provider == route.provider, ctx)
        if rendered is not None:
            return rendered
    raise AssertionError("the OpenAI Chat wire answers any request")  # pragma: no cover


def _raw_fault(fault: Fault) -> Rendered:
    body = fault.body
    content_type = "application/json"
    if isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data, content_type = body.encode(), "text/plain; charset=utf-8"
    else:
        data = json.dumps(body).encode()
    headers = {"content-type": content_type, **dict(fault.headers)}
    return Rendered(fault.status or 500, headers, data)
