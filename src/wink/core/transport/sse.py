"""Server-sent events, parsed once for every provider.

`SSEDecoder` takes the body of an SSE response in whatever pieces the network delivers
(cut inside a line, between `\\r` and `\\n`, inside a multi-byte UTF-8 character) and
returns complete events as `(event, data)` pairs, as the WHATWG "event stream"
interpretation defines them: `data:` lines joined with `\\n`, the `event:` name
(`"message"` when absent), comments and `id:` / `retry:` fields ignored. Lines are kept
as bytes until an event is complete, so UTF-8 is decoded once per event, never across a
cut. Per piece it does one scan for line ends, so the cost is per byte, not per piece.
"""

from __future__ import annotations

__all__ = ["SSEDecoder", "SSEEvent"]

SSEEvent = tuple[str, str]
"""`(event name, data)` of one dispatched event."""

_DEFAULT_EVENT = "message"
_KNOWN = (b":", b"id", b"retry", b"event")


class SSEDecoder:
    """Incremental SSE parser: `feed(piece)` for each piece, `close()` at the end."""

    __slots__ = ("_data", "_event", "_partial", "_pending_cr", "foreign")

    def __init__(self) -> None:
        self.foreign: str | None = None  # the first line that is no SSE field (an HTML page)
        self._partial: list[bytes] = []  # the current, unfinished line
        self._pending_cr = False  # the last piece ended in "\r": "\n" may follow
        self._event: bytes | None = None
        self._data: list[bytes] = []

    def feed(self, piece: bytes) -> list[SSEEvent]:
        """The events completed by `piece` (often none, sometimes many)."""
        if self._pending_cr:
            self._pending_cr = False
            if piece[:1] == b"\n":
                piece = piece[1:]  # the second half of a "\r\n" cut in two
        if not piece:
            return []
        if piece[-1:] == b"\r":
            self._pending_cr = True
        if b"\r" in piece:
            piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = piece.split(b"\n")
        if len(lines) == 1:  # no line end in this piece
            self._partial.append(piece)
            return []
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
            self._partial = []
        tail = lines.pop()
        if tail:
            self._partial.append(tail)
        events: list[SSEEvent] = []
        for line in lines:
            if not line:
                if self._data:
                    events.append(self._dispatch())
                else:
                    self._event = None
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value[:1] == b" " else value)
            elif line.startswith(b"event:"):
                value = line[6:]
                self._event = value[1:] if value[:1] == b" " else value
            elif line == b"data":  # a field with no colon has an empty value
                self._data.append(b"")
            elif self.foreign is None and not line.startswith(_KNOWN):
                self.foreign = line[:200].decode("utf-8", "replace")
            # comments (":"), id and retry carry nothing wink reads
        return events

    def close(self) -> list[SSEEvent]:
        """The end of the body: an event whose lines were complete but that lacked the
        final blank line is dispatched; a line cut off mid-way is dropped (its
        event is incomplete, which the provider's decoder then reports)."""
        self._pending_cr = False
        if self._partial:
            line = b"".join(self._partial)
            self._partial = []
            if self.foreign is None and not line.startswith((b"data", *_KNOWN)):
                self.foreign = line[:200].decode("utf-8", "replace")
        if self._data:
            return [self._dispatch()]
        return []

    def _dispatch(self) -> SSEEvent:
        data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        event = self._event
        self._data = []
        self._event = None
        # strict: a body that is not UTF-8 is malformed (UnicodeDecodeError, a ValueError)
        name = event.decode() if event else _DEFAULT_EVENT
        return name, data.decode()
