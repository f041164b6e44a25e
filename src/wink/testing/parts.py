"""The images, documents and audio a request carries, as the emulator reads them: a
neutral view for scripts (`ReceivedPart`), and the checks the real APIs make (bad base64,
a media type they refuse, bytes that are not what they claim, an image over the limit),
answered with each API's own 400 (docs/testing.md).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.foundation.content import PartKind, sniff_media_type

if TYPE_CHECKING:
    from .faults import Fault
    from .wire.base import WireFormat

__all__ = [
    "FoundPart",
    "ReceivedPart",
    "decode_base64",
    "kind_of_media",
    "looks_like",
    "parse_data_url",
    "received_parts",
    "refusal",
]

_DATA_URL = re.compile(r"^data:([^;,]+)(;[^,]*)?;base64,(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ReceivedPart:
    """One image, document or audio a request carried, in neutral form.

    `media_type` is None where the wire names none (an Anthropic URL source); `data` the
    decoded bytes (None for a URL); `in_tool_result` whether a tool result carried it.
    """

    kind: PartKind
    media_type: str | None
    data: bytes | None = None
    url: str | None = None
    in_tool_result: bool = False

    @property
    def label(self) -> str:
        """What `Turn.expecting` compares: the media type, else the URL."""
        return self.media_type or self.url or ""


@dataclass(frozen=True, slots=True)
class FoundPart:
    """A part as a wire carries it, before decoding: where it is (`path`, as the API
    names that place in its errors), its media type, its base64 text or its URL."""

    kind: PartKind
    path: str
    media_type: str | None
    encoded: str | None = None
    url: str | None = None
    in_tool_result: bool = False
    urlsafe: bool = False  # Gemini also reads base64url
    plain: bool = False  # sent as text, not base64 (an Anthropic text document)


def decode_base64(text: str, *, urlsafe: bool = False) -> bytes | None:
    """The bytes, or None when `text` is not valid base64 (as the APIs read it)."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        if not urlsafe:
            return None
    try:
        padded = text + "=" * (-len(text) % 4)
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_data_url(value: str) -> tuple[str, str] | None:
    """(media type, base64 text) of a `data:...;base64,...` URL, else None."""
    match = _DATA_URL.match(value)
    return (match.group(1).strip().lower(), match.group(3)) if match else None


def kind_of_media(media_type: str | None) -> PartKind:
    """The part kind a media type names (what is neither image nor audio: a document)."""
    family = (media_type or "").split("/", 1)[0]
    return "image" if family == "image" else "audio" if family == "audio" else "document"


def received_parts(wire: WireFormat, body: dict[str, object]) -> tuple[ReceivedPart, ...]:
    """The parts of a request as a script sees them (undecodable data left out)."""
    parts: list[ReceivedPart] = []
    for found in wire.found_parts(body):
        data = (
            None if found.encoded is None else decode_base64(found.encoded, urlsafe=found.urlsafe)
        )
        if found.encoded is not None and data is None:
            continue
        parts.append(
            ReceivedPart(found.kind, found.media_type, data, found.url, found.in_tool_result)
        )
    return tuple(parts)


def refusal(wire: WireFormat, body: dict[str, object]) -> Fault | None:
    """The 400 the real API gives the first part it refuses, else None."""
    for found in wire.found_parts(body):
        data = None
        if found.encoded is not None:
            data = decode_base64(found.encoded, urlsafe=found.urlsafe)
        fault = wire.refuse_part(found, data)
        if fault is not None:
            return fault
    return None


def looks_like(data: bytes | None, media_type: str | None) -> bool:
    """Whether `data` has the signature of `media_type` (True for formats without one)."""
    if data is None or media_type is None:
        return True
    seen = sniff_media_type(data)
    signed = media_type in ("image/png", "image/jpeg", "image/gif", "image/webp")
    return seen == media_type if signed else True
