"""Server-sent events as the SSE wires frame them (all but Bedrock's event stream)."""

from __future__ import annotations

from typing import Any

from ..formats import dump
from .base import Headers

__all__ = ["MALFORMED", "SSE_HEADERS", "SseFraming", "sse_event"]

SSE_HEADERS: Headers = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
}
MALFORMED = b'data: {"choices": [{"delta": {"content": "cut\n\n'
"""An event cut mid-JSON: what a `stream_malformed` fault sends on an SSE wire."""


def sse_event(value: Any, name: str | None = None, end: bytes = b"\n\n") -> bytes:
    """One event: its `event:` line when it has a name, then its JSON `data:`."""
    head = f"event: {name}\n".encode() if name else b""
    return head + b"data: " + dump(value) + end


class SseFraming:
    """The stream head and the broken event every SSE wire shares."""

    def stream_headers(self) -> Headers:
        return SSE_HEADERS

    def malformed_event(self, event: bytes) -> bytes:
        return MALFORMED

    def stream_event(self, value: Any) -> bytes:
        return sse_event(value)
