"""AWS event-stream messages as Bedrock sends them (`application/vnd.amazon.eventstream`):
the encoder the emulator frames ConverseStream with, and tests build frames from.

Each header is `(name, type, value)` with the wire's type codes (0/1 booleans, 2 int8,
3 int16, 4 int32, 5 int64, 6 bytes, 7 string, 8 timestamp in milliseconds, 9 UUID), so
every value type can be written, including the ones Bedrock itself does not send.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterable
from struct import Struct
from typing import Any
from zlib import crc32

__all__ = ["Header", "encode_message", "event_frame", "exception_frame"]

Header = tuple[str, int, Any]

_FIXED: dict[int, Struct] = {2: Struct(">b"), 3: Struct(">h"), 4: Struct(">i"), 5: Struct(">q")}
_UINT32 = Struct(">I")
_UINT16 = Struct(">H")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _header(name: str, kind: int, value: Any) -> bytes:
    encoded = name.encode()
    head = bytes([len(encoded)]) + encoded + bytes([kind])
    if kind in (0, 1):
        return head
    if kind in _FIXED:
        return head + _FIXED[kind].pack(value)
    if kind in (6, 7):
        raw = value if kind == 6 else str(value).encode()
        return head + _UINT16.pack(len(raw)) + raw
    if kind == 8:
        moment: datetime.datetime = value
        millis = (moment - _EPOCH) // datetime.timedelta(milliseconds=1)
        return head + _FIXED[5].pack(millis)
    if kind == 9:
        identifier: uuid.UUID = value
        return head + identifier.bytes
    raise ValueError(f"no event-stream header type {kind}")


def encode_message(headers: Iterable[Header], payload: bytes) -> bytes:
    """One message: prelude, prelude CRC, headers, payload, message CRC."""
    block = b"".join(_header(*header) for header in headers)
    total = 16 + len(block) + len(payload)
    prelude = _UINT32.pack(total) + _UINT32.pack(len(block))
    start = prelude + _UINT32.pack(crc32(prelude)) + block + payload
    return start + _UINT32.pack(crc32(start))


def event_frame(event_type: str, body: Any) -> bytes:
    """An event message as Bedrock frames each ConverseStream event."""
    return encode_message(
        [
            (":event-type", 7, event_type),
            (":content-type", 7, "application/json"),
            (":message-type", 7, "event"),
        ],
        json.dumps(body, separators=(",", ":")).encode(),
    )


def exception_frame(exception_type: str, message: str) -> bytes:
    """An exception message (`throttlingException`, `modelStreamErrorException`...)."""
    return encode_message(
        [
            (":exception-type", 7, exception_type),
            (":content-type", 7, "application/json"),
            (":message-type", 7, "exception"),
        ],
        json.dumps({"message": message}).encode(),
    )
