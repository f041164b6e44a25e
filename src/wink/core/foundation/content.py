"""Content parts: images, documents and audio as neutral values (docs/multimodal.md).

`Image`, `Document` and `Audio` are what a caller attaches to a call or a section and what
a tool may return. Each is a plain value: a media type, and either the bytes (kept as
bytes, read once: no open file) or a URL, plus an optional file name. Each provider's
translator maps them to its own shape, or refuses them before anything is sent
(`wink.core.foundation.carriage`).

A user turn is a sequence of `UserPart`s: text, attachments and `CachePoint`s (where
the prompt is cached up to, see docs/caching.md).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, cast
from urllib.parse import urlsplit

from .checks import kind_of
from .errors import ConfigurationError, InvalidArgumentError

__all__ = [
    "Attachment",
    "Audio",
    "CachePoint",
    "Document",
    "Image",
    "PartKind",
    "TextPart",
    "UserPart",
    "attachments_of",
    "data_url",
    "sniff_media_type",
]

PartKind = Literal["image", "document", "audio"]

# Media types by file suffix: the ones some provider takes (the platform's `mimetypes`
# table differs between systems, so it is not asked).
_BY_SUFFIX: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".aiff": "audio/aiff",
    ".aif": "audio/aiff",
    ".aac": "audio/aac",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
}
_DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})


def sniff_media_type(data: bytes) -> str | None:
    """The media type the first bytes show, for the formats with a signature (PNG, JPEG,
    GIF, WebP, WAV, PDF); None for any other."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if b"%PDF-" in data[:1024]:  # the header may follow a few bytes of junk
        return "application/pdf"
    return None


# Media types whose bytes wink checks against their signature (as the providers do).
_SIGNED = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"})
_ALIASES = {"audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/mp3": "audio/mpeg"}


def _normal(media_type: str) -> str:
    lowered = media_type.strip().lower()
    return _ALIASES.get(lowered, lowered)


@dataclass(frozen=True, slots=True, repr=False)
class _Media:
    """What the three part kinds share: a media type, then the bytes or a URL."""

    kind: ClassVar[PartKind]
    media_type: str
    data: bytes | None = field(default=None, kw_only=True)
    url: str | None = field(default=None, kw_only=True)
    name: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        where = type(self).__name__
        if not isinstance(cast(object, self.media_type), str):
            raise InvalidArgumentError(
                f"{where} takes a media type string, got {kind_of(self.media_type)}",
                argument="media_type",
            )
        object.__setattr__(self, "media_type", _normal(self.media_type))
        self._check_media_type()
        if self.name is not None and not isinstance(cast(object, self.name), str):
            raise InvalidArgumentError(
                f"{where}(name=...) takes a string or None, got {kind_of(self.name)}",
                argument="name",
            )
        if (self.data is None) == (self.url is None):
            raise ConfigurationError(f"{where} takes either data= or url=, exactly one")
        if self.data is not None:
            self._check_data()
        else:
            _check_url(where, self.url)

    def _check_media_type(self) -> None:
        family = self.kind + "/"
        if not self.media_type.startswith(family) or len(self.media_type) <= len(family):
            raise ConfigurationError(
                f"{type(self).__name__} takes an {family}* media type, got {self.media_type!r}",
                option="media_type",
            )

    def _check_data(self) -> None:
        where = type(self).__name__
        data = cast(object, self.data)
        if isinstance(data, bytearray | memoryview):
            data = bytes(cast(bytearray, data))
            object.__setattr__(self, "data", data)
        if not isinstance(data, bytes):
            raise InvalidArgumentError(
                f"{where}(data=...) takes bytes, got {kind_of(data)}", argument="data"
            )
        if not data:
            raise ConfigurationError(f"{where}(data=...) is empty", option="data")
        seen = sniff_media_type(data)
        if self.media_type in _SIGNED and seen != self.media_type:
            what = f"they look like {seen}" if seen else "their format is not recognised"
            raise ConfigurationError(
                f"{where}: the bytes are not {self.media_type} ({what}); "
                "give the media type the bytes have",
                option="media_type",
            )

    # --- making one

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str, *, name: str | None = None) -> Self:
        """A part holding `data`, which must be of `media_type` (checked where the format
        has a signature: PNG, JPEG, GIF, WebP, PDF)."""
        return cls(media_type, data=data, name=name)

    @classmethod
    def from_path(cls, path: str | Path, *, media_type: str | None = None) -> Self:
        """The file's bytes, read now; the media type is guessed from the suffix unless
        given (a guess of the wrong kind, or none, is refused: pass `media_type=`)."""
        where = f"{cls.__name__}.from_path"
        if not isinstance(cast(object, path), str | Path):
            raise InvalidArgumentError(
                f"{where} takes a path (a str or a Path), got {kind_of(path)}", argument="path"
            )
        file = Path(path)
        if media_type is None:
            media_type = _guess(where, file.suffix, cls.kind, "media_type")
        try:
            data = file.read_bytes()
        except OSError as error:
            raise ConfigurationError(
                f"{where} cannot read {str(file)!r}: {error.strerror or error}", option="path"
            ) from error
        return cls(media_type, data=data, name=file.name)

    @classmethod
    def from_url(cls, url: str, *, media_type: str | None = None, name: str | None = None) -> Self:
        """A part the provider fetches itself; the media type is guessed from the URL's
        path unless given (the providers that take URLs want it, or check it)."""
        where = f"{cls.__name__}.from_url"
        _check_url(where, url)
        if media_type is None:
            media_type = _guess(where, Path(urlsplit(url).path).suffix, cls.kind, "media_type")
        return cls(media_type, url=url, name=name)

    # --- reading one

    @property
    def size(self) -> int | None:
        """How many bytes it holds (None for a URL)."""
        return None if self.data is None else len(self.data)

    def base64(self) -> str:
        """The bytes in standard base64 (a URL part has none: `ValueError`)."""
        if self.data is None:
            raise ValueError(f"{self.describe()} has no bytes, only a URL")
        return base64.b64encode(self.data).decode("ascii")

    def describe(self) -> str:
        """How an error names it: "the image/png image (2048 bytes)"."""
        where = f"{self.size} bytes" if self.data is not None else f"at {self.url}"
        named = f" {self.name!r}" if self.name else ""
        return f"the {self.media_type} {self.kind}{named} ({where})"

    def __repr__(self) -> str:
        held = f"{self.size} bytes" if self.data is not None else f"url={self.url!r}"
        named = f", name={self.name!r}" if self.name else ""
        return f"{type(self).__name__}({self.media_type!r}, {held}{named})"


def _guess(where: str, suffix: str, kind: PartKind, argument: str) -> str:
    guessed = _BY_SUFFIX.get(suffix.lower())
    fits = guessed is not None and (
        guessed in _DOCUMENT_TYPES if kind == "document" else guessed.startswith(kind + "/")
    )
    if guessed is None or not fits:
        seen = f"{suffix!r} suffix" if suffix else "name without a suffix"
        problem = f"is {guessed}, not {'a' if kind != 'image' else 'an'} {kind}" if guessed else ""
        raise ConfigurationError(
            f"{where}: the media type of a {seen} {problem or 'is unknown'}; pass media_type=",
            option=argument,
        )
    return guessed


def _check_url(where: str, url: object) -> None:
    if not isinstance(url, str):
        raise InvalidArgumentError(
            f"{where} takes a URL string, got {kind_of(url)}", argument="url"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"{where} takes an http:// or https:// URL, got {url[:80]!r}", option="url"
        )


@dataclass(frozen=True, slots=True, repr=False)
class Image(_Media):
    """An image (`image/png`, `image/jpeg`, `image/gif`, `image/webp`, ...): from bytes,
    a file (`Image.from_path`) or a URL (`Image.from_url`). Which types and sizes each
    provider takes is in docs/multimodal.md."""

    kind: ClassVar[PartKind] = "image"


@dataclass(frozen=True, slots=True, repr=False)
class Document(_Media):
    """A document: a PDF (`application/pdf`) or plain text (`text/plain`, UTF-8), from
    bytes, a file, a URL, or a string (`Document.from_text`).

    `citations=True` asks the provider to cite this document in its answer
    (`response.citations`, docs/builtin-tools.md#citations); a wire format that cannot
    refuses it before sending rather than answer without them."""

    kind: ClassVar[PartKind] = "document"
    citations: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(cast(object, self.citations), bool):
            raise InvalidArgumentError(
                f"Document(citations=...) takes True or False, got {kind_of(self.citations)}",
                argument="citations",
            )
        _Media.__post_init__(self)

    def _check_media_type(self) -> None:
        if self.media_type not in _DOCUMENT_TYPES:
            raise ConfigurationError(
                "Document takes application/pdf or text/plain, got "
                f"{self.media_type!r} (an image is an Image, a sound an Audio)",
                option="media_type",
            )

    def _check_data(self) -> None:
        _Media._check_data(self)
        if self.media_type == "text/plain":
            try:
                (self.data or b"").decode("utf-8")
            except UnicodeDecodeError as error:
                raise ConfigurationError(
                    f"Document: text/plain bytes must be UTF-8 ({error.reason} at byte "
                    f"{error.start})",
                    option="data",
                ) from error

    def __repr__(self) -> str:
        shown = _Media.__repr__(self)
        return f"{shown[:-1]}, citations=True)" if self.citations else shown

    @classmethod
    def from_text(cls, text: str, *, name: str | None = None, citations: bool = False) -> Document:
        """A plain-text document holding `text`."""
        if not isinstance(cast(object, text), str):
            raise InvalidArgumentError(
                f"Document.from_text takes a str, got {kind_of(text)}", argument="text"
            )
        return cls("text/plain", data=text.encode("utf-8"), name=name, citations=citations)

    @property
    def text(self) -> str | None:
        """The text of a `text/plain` document held as bytes (else None)."""
        if self.media_type != "text/plain" or self.data is None:
            return None
        return self.data.decode("utf-8")


@dataclass(frozen=True, slots=True, repr=False)
class Audio(_Media):
    """A sound (`audio/wav`, `audio/mpeg`, ...): from bytes, a file or a URL."""

    kind: ClassVar[PartKind] = "audio"


Attachment = Image | Document | Audio
"""A content part: what `attachments=` takes, and what a tool may return."""


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text in a user turn made of several parts."""

    text: str


@dataclass(frozen=True, slots=True)
class CachePoint:
    """The prompt is cached up to here (a section with `cache=True` ends with one)."""


UserPart = TextPart | Image | Document | Audio | CachePoint
"""One piece of a user turn, in order."""


def data_url(part: Attachment) -> str:
    """The part as a `data:` URL (its bytes), or its URL."""
    if part.url is not None:
        return part.url
    return f"data:{part.media_type};base64,{part.base64()}"


def attachments_of(value: Any, argument: str, where: str) -> tuple[Attachment, ...]:
    """`value` (a list of parts) checked: each an `Image`, a `Document` or an `Audio`."""
    if value is None:
        return ()
    if isinstance(value, Image | Document | Audio):
        return (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidArgumentError(
            f"{where} takes a list of Image, Document or Audio parts, got {kind_of(value)}",
            argument=argument,
        )
    parts = tuple(cast(Iterable[object], value))
    for part in parts:
        if not isinstance(part, Image | Document | Audio):
            raise InvalidArgumentError(
                f"{where} takes Image, Document or Audio parts, got {kind_of(part)}",
                argument=argument,
            )
    return cast(tuple[Attachment, ...], parts)
