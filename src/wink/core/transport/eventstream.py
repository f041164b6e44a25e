"""AWS event-stream framing (`application/vnd.amazon.eventstream`), checked as it is read.

A message is a 12-byte prelude (total length and headers length, big-endian uint32, then
the CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before
it. A header is a name (uint8 length, UTF-8), a type byte and a value: 0 and 1 the
booleans true and false, 2 an int8, 3 an int16, 4 an int32, 5 an int64, 6 bytes and 7 a
string (each after a uint16 length), 8 a timestamp (int64 milliseconds since the epoch),
9 a UUID (16 bytes).

`EventStreamFraming` is the framing seam's second implementation (the first is SSE,
`wink.core.transport.sse`): it takes the body in whatever pieces the network delivers and
returns one `(name, payload)` frame per complete message. A message whose prelude or
message CRC does not match, or whose lengths cannot be right, raises `CorruptFrame` (a
`ValueError`: the reader makes it a response-phase error) at once, never waiting for
bytes a corrupt length promised.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Mapping
from struct import Struct, error as StructError
from zlib import crc32

from .errors import MalformedResponse

__all__ = [
    "CorruptFrame",
    "EventMessage",
    "EventStreamFraming",
    "HeaderValue",
    "decode_headers",
    "frame_of",
]

HeaderValue = bool | int | bytes | str | datetime.datetime | uuid.UUID

_PRELUDE = Struct(">III")  # total length, headers length, prelude CRC
_PRELUDE_LENGTH = 12
_CRC_LENGTH = 4
_MINIMUM_LENGTH = _PRELUDE_LENGTH + _CRC_LENGTH  # no headers, no payload
_MAX_HEADERS_LENGTH = 128 * 1024  # botocore's and the SDKs' limits
_MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
_UINT32 = Struct(">I")
_UINT16 = Struct(">H")
_FIXED: dict[int, Struct] = {2: Struct(">b"), 3: Struct(">h"), 4: Struct(">i"), 5: Struct(">q")}
_TIMESTAMP = 8
_UUID = 9
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_KNOWN_BLOCKS = 64  # distinct header blocks a framing keeps what it read of


class CorruptFrame(MalformedResponse):
    """A message that fails its checks: a CRC mismatch, impossible lengths, a header of an
    unknown type. Nothing after it can be trusted, so the stream fails here."""


class EventMessage:
    """One decoded message: its headers and its payload bytes."""

    __slots__ = ("headers", "payload")

    def __init__(self, headers: Mapping[str, HeaderValue], payload: bytes) -> None:
        self.headers = headers
        self.payload = payload

    def __repr__(self) -> str:
        return f"EventMessage(headers={dict(self.headers)!r}, payload={self.payload[:80]!r})"


def decode_headers(data: bytes | memoryview) -> dict[str, HeaderValue]:
    """The headers block of a message; `CorruptFrame` for a block that is not well formed
    (a value cut short, an unknown type, a name that is not UTF-8, a name twice)."""
    view = memoryview(data)
    headers: dict[str, HeaderValue] = {}
    at, end = 0, len(view)
    try:
        while at < end:
            size = view[at]
            name = bytes(view[at + 1 : at + 1 + size]).decode()
            at += 1 + size
            if at >= end or not name:
                raise CorruptFrame("an event-stream header is cut short")
            kind = view[at]
            at += 1
            value: HeaderValue
            if kind == 0 or kind == 1:
                value = kind == 0
            elif kind in _FIXED:
                fixed = _FIXED[kind]
                value = fixed.unpack_from(view, at)[0]
                at += fixed.size
            elif kind == 6 or kind == 7:
                (length,) = _UINT16.unpack_from(view, at)
                raw = bytes(view[at + 2 : at + 2 + length])
                if len(raw) != length:
                    raise CorruptFrame("an event-stream header value is cut short")
                value = raw if kind == 6 else raw.decode()
                at += 2 + length
            elif kind == _TIMESTAMP:
                (millis,) = _FIXED[5].unpack_from(view, at)
                value = _EPOCH + datetime.timedelta(milliseconds=millis)
                at += 8
            elif kind == _UUID:
                raw = bytes(view[at : at + 16])
                if len(raw) != 16:
                    raise CorruptFrame("an event-stream header value is cut short")
                value = uuid.UUID(bytes=raw)
                at += 16
            else:
                raise CorruptFrame(f"an event-stream header {name!r} has unknown type {kind}")
            if name in headers:
                raise CorruptFrame(f"the event-stream header {name!r} appears twice")
            headers[name] = value
    except (IndexError, UnicodeDecodeError, StructError) as error:  # a value cut short
        raise CorruptFrame(f"an event-stream header is malformed: {error}") from error
    if at != end:
        raise CorruptFrame("an event-stream header runs past its block")
    return headers


class EventStreamFraming:
    """Incremental event-stream parser: `feed(piece)` for each piece, `close()` at the
    end; each returns the frames completed (`frame_of` each message).

    `messages(piece)` gives the decoded messages themselves, for a reader that wants
    every header. A body that ends inside a message drops it: the wire's decoder then
    reports the stream cut short, as it does for SSE.

    Each message is checked where it lies (the piece itself when nothing is left over
    from the last one: no copy into a buffer), both CRCs over views of it. A stream
    repeats a few header blocks (Bedrock's three headers per event type), so `feed`
    reads each distinct block once and keeps what it named: the same bytes always name
    the same frame.
    """

    __slots__ = ("_buffer", "_named", "foreign")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._named: dict[bytes, tuple[str, bytes | None]] = {}
        self.foreign: str | None = None  # a frame's CRC decides, never a guess at its text

    def feed(self, piece: bytes) -> list[tuple[str, bytes]]:
        named = self._named
        frames: list[tuple[str, bytes]] = []
        for block, payload in self._split(piece):
            known = named.get(block)
            if known is None:
                known = _naming(decode_headers(block))
                if len(named) >= _KNOWN_BLOCKS:
                    named.clear()  # not Bedrock's few blocks: keep the memory bounded
                named[block] = known
            name, fixed = known
            frames.append((name, fixed if fixed is not None else payload or b"{}"))
        return frames

    def close(self) -> list[tuple[str, bytes]]:
        self._buffer.clear()
        return []

    def messages(self, piece: bytes) -> list[EventMessage]:
        return [
            EventMessage(decode_headers(block), payload) for block, payload in self._split(piece)
        ]

    def _split(self, piece: bytes) -> list[tuple[bytes, bytes]]:
        """The (headers block, payload) of each message `piece` completes, both CRCs
        checked; the rest of an incomplete message is kept for the next piece."""
        buffer = self._buffer
        if buffer:
            buffer += piece
            data: bytes | bytearray = buffer
        else:
            data = piece
        found: list[tuple[bytes, bytes]] = []
        start, available = 0, len(data)
        view = memoryview(data)
        try:
            while available - start >= _PRELUDE_LENGTH:
                total, headers_length, prelude_crc = _PRELUDE.unpack_from(data, start)
                if crc32(view[start : start + 8]) != prelude_crc:
                    raise CorruptFrame("an event-stream message's prelude CRC does not match")
                payload_length = total - headers_length - _MINIMUM_LENGTH
                if headers_length > _MAX_HEADERS_LENGTH or payload_length < 0:
                    raise CorruptFrame(
                        f"an event-stream message's lengths are impossible "
                        f"(total {total}, headers {headers_length})"
                    )
                if payload_length > _MAX_PAYLOAD_LENGTH:
                    raise CorruptFrame(f"an event-stream payload of {payload_length} bytes")
                if available - start < total:
                    break  # the rest of this message is still on its way
                end = start + total - _CRC_LENGTH
                if crc32(view[start:end]) != _UINT32.unpack_from(data, end)[0]:
                    raise CorruptFrame("an event-stream message's CRC does not match")
                headers_end = start + _PRELUDE_LENGTH + headers_length
                block = bytes(view[start + _PRELUDE_LENGTH : headers_end])
                found.append((block, bytes(view[headers_end:end])))
                start += total
            rest = bytes(view[start:]) if data is piece and start < available else b""
        finally:
            view.release()  # a bytearray with a view on it cannot be resized
        if data is buffer:
            del buffer[:start]
        elif rest:
            buffer += rest
        return found


def frame_of(message: EventMessage) -> tuple[str, bytes]:
    """A message as the framing seam's `(name, payload)`: an event is named by its
    `:event-type`, an exception by its `:exception-type` (its payload the service's JSON
    error), an error message by its `:error-code` (its `:error-message` made the payload's
    `message`)."""
    name, fixed = _naming(message.headers)
    return name, fixed if fixed is not None else message.payload or b"{}"


def _naming(headers: Mapping[str, HeaderValue]) -> tuple[str, bytes | None]:
    """What a message's headers alone decide: its frame's name, and for an error message
    its payload (None: the message's own)."""
    kind = headers.get(":message-type", "event")
    payload: bytes | None = None
    if kind == "event":
        name = headers.get(":event-type")
    elif kind == "exception":
        name = headers.get(":exception-type")
    elif kind == "error":
        name = headers.get(":error-code")
        text = headers.get(":error-message")
        payload = json.dumps({"message": text if isinstance(text, str) else ""}).encode()
    else:
        raise MalformedResponse(f"an event-stream message of unknown type {kind!r}")
    if not isinstance(name, str) or not name:
        raise MalformedResponse(f"an event-stream {kind} message without its type header")
    return name, payload
