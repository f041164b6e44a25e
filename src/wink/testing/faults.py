"""Faults the emulator injects instead of (or before) a normal answer, and its rate limit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..core.foundation.checks import a_mapping, a_number, a_whole_number
from ..core.foundation.errors import ConfigurationError, InvalidArgumentError

__all__ = ["Fault", "FaultKind", "HeaderStyle", "RateLimit", "StreamErrorKind"]

FaultKind = Literal[
    "rate_limit",
    "quota_exhausted",
    "server_error",
    "overloaded",
    "bad_request",
    "unauthorized",
    "permission_denied",
    "not_found",
    "context_window_exceeded",
    "latency",
    "hang",
    "drop_connection",
    "non_json",
    "wrong_shape",
    "http",
    "stream_error",
    "stream_reset",
    "stream_malformed",
    "stream_truncated",
    "batch_expired",
]
"""What a `Fault` does (`Fault.kind`); each has its constructor, e.g. `Fault.rate_limit()`."""
HeaderStyle = Literal["seconds", "ms", "both"]
"""Which retry header a 429 carries: `retry-after`, `retry-after-ms`, or both."""
StreamErrorKind = Literal[
    "overloaded",
    "server_error",
    "rate_limit",
    "quota_exhausted",
    "bad_request",
    "context_window_exceeded",
]
"""Which error event `Fault.stream_error` sends, in the provider's own terms."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected failure, rendered in the wire format of the route it hits.

    Only `latency` consumes a scripted turn (it answers normally, late); every other
    fault leaves the script untouched, so a retried request gets the turn. The `stream_*`
    faults break a streamed answer after `after` events: they stream the next scripted
    turn (without using it up) and then fail; on a request that does not stream they
    act as the fault they stand for (an error answer, a dropped connection, a non-JSON
    body).
    """

    kind: FaultKind
    status: int | None = None
    retry_after: float | None = None
    header_style: HeaderStyle | None = None
    message: str | None = None
    seconds: float = 0.0
    param: str | None = None
    code: str | None = None
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    after: int = 0
    error_kind: StreamErrorKind | None = None
    chunks: tuple[int, ...] | None = None
    chunk_delay: float = 0.0

    @classmethod
    def rate_limit(
        cls, retry_after: float | None = 1.0, header_style: HeaderStyle | None = "seconds"
    ) -> Fault:
        """429 in the provider's rate-limit shape; Gemini carries `retry_after` in RetryInfo."""
        _check_delay(retry_after, "rate_limit", "retry_after")
        return cls("rate_limit", status=429, retry_after=retry_after, header_style=header_style)

    @classmethod
    def quota_exhausted(cls, retry_after: float | None = None) -> Fault:
        """Out of credit: OpenAI 429 `insufficient_quota`, Anthropic 400, Gemini per-day 429."""
        _check_delay(retry_after, "quota_exhausted", "retry_after")
        return cls("quota_exhausted", retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """A 5xx with the provider's server-error body."""
        if not 500 <= a_whole_number(status, "Fault.server_error(status=...)", "status") <= 599:
            raise ConfigurationError(
                f"Fault.server_error(status=...) takes a 5xx status, got {status}", option="status"
            )
        return cls("server_error", status=status)

    @classmethod
    def overloaded(cls) -> Fault:
        """Anthropic 529 `overloaded_error`; OpenAI and Gemini 503."""
        return cls("overloaded")

    @classmethod
    def bad_request(
        cls,
        message: str = "Invalid request (injected by the wink emulator).",
        *,
        param: str | None = None,
        code: str | None = None,
    ) -> Fault:
        """400 with the provider's invalid-request body (`param`/`code` are OpenAI fields)."""
        return cls("bad_request", status=400, message=message, param=param, code=code)

    @classmethod
    def unauthorized(cls) -> Fault:
        """401 with the provider's authentication-error body."""
        return cls("unauthorized", status=401)

    @classmethod
    def permission_denied(cls) -> Fault:
        """403 in the provider's words: a key that may not use this model (OpenAI), an
        Anthropic `permission_error`, a Gemini `PERMISSION_DENIED`."""
        return cls("permission_denied", status=403)

    @classmethod
    def not_found(cls) -> Fault:
        """404 for a model the provider does not know, naming the model asked for."""
        return cls("not_found", status=404)

    @classmethod
    def context_window_exceeded(cls) -> Fault:
        """400 saying the input does not fit the model's context window, in the provider's
        words: OpenAI `context_length_exceeded`, Anthropic "prompt is too long", Gemini
        "The input token count ... exceeds the maximum"."""
        return cls("context_window_exceeded", status=400)

    @classmethod
    def latency(cls, seconds: float) -> Fault:
        """Answer normally, `seconds` late."""
        _check_delay(seconds, "latency", "seconds")
        return cls("latency", seconds=seconds)

    @classmethod
    def hang(cls, seconds: float = 60.0) -> Fault:
        """Send nothing for `seconds`, then close the connection without an answer."""
        _check_delay(seconds, "hang", "seconds")
        return cls("hang", seconds=seconds)

    @classmethod
    def drop_connection(cls) -> Fault:
        """Send the status line, headers and half of the body, then close the socket."""
        return cls("drop_connection", status=200)

    @classmethod
    def non_json(cls) -> Fault:
        """200 labelled `application/json` whose body is not JSON."""
        return cls("non_json", status=200)

    @classmethod
    def wrong_shape(cls, body: Any = None) -> Fault:
        """200 with valid JSON of the wrong structure (`body` overrides the default)."""
        return cls("wrong_shape", status=200, body=body)

    @classmethod
    def http(
        cls,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        chunks: tuple[int, ...] | list[int] | None = None,
        chunk_delay: float = 0.0,
    ) -> Fault:
        """Any status with any body: `bytes`/`str` sent as is, anything else as JSON.

        With `chunks` (piece sizes in bytes, used in turn until the body is out) the body
        is sent with chunked transfer encoding, one piece per chunk, `chunk_delay`
        seconds apart: a recorded stream, replayed cut anywhere.
        """
        where = "Fault.http"
        a_whole_number(status, f"{where}(status=...)", "status")
        given: Mapping[Any, Any] = (
            {} if headers is None else a_mapping(headers, f"{where}(headers=...)", "headers")
        )
        pairs = tuple((str(name).lower(), str(value)) for name, value in given.items())
        sizes = _chunk_sizes(chunks)
        _check_delay(chunk_delay, "http", "chunk_delay")
        return cls(
            "http", status=status, body=body, headers=pairs, chunks=sizes, chunk_delay=chunk_delay
        )

    @classmethod
    def stream_error(
        cls, after: int = 3, kind: StreamErrorKind = "overloaded", message: str | None = None
    ) -> Fault:
        """After `after` events, the provider's error event (Anthropic `overloaded_error`,
        an OpenAI error chunk, a Responses `error` + `response.failed`, a Gemini error
        object), then the end of the stream."""
        _check_count(after, "stream_error")
        return cls("stream_error", after=after, error_kind=kind, message=message)

    @classmethod
    def stream_reset(cls, after: int = 3) -> Fault:
        """After `after` events, reset the connection (TCP RST, no end of the body)."""
        _check_count(after, "stream_reset")
        return cls("stream_reset", after=after)

    @classmethod
    def stream_malformed(cls, after: int = 3) -> Fault:
        """After `after` events, one event whose JSON is cut off; the rest follows."""
        _check_count(after, "stream_malformed")
        return cls("stream_malformed", after=after)

    @classmethod
    def stream_truncated(cls, after: int = 3) -> Fault:
        """After `after` events, end the body cleanly, without the terminal event."""
        _check_count(after, "stream_truncated")
        return cls("stream_truncated", after=after)

    @classmethod
    def batch_expired(cls) -> Fault:
        """In a script answering a batch's items: the batch's 24 hours run out when this
        item's turn comes; it and the items after it never run, and the batch ends
        expired. A request that is not a batch item gets a 400 saying so."""
        return cls("batch_expired")


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A token bucket: `burst` requests at once, refilled at `requests_per_second`.

    With `headers=False` answers carry no rate-limit headers and a 429 only `retry-after`
    (seconds), as Gemini and most OpenAI-compatible servers do.
    """

    requests_per_second: float
    burst: int = 1
    headers: bool = True

    def __post_init__(self) -> None:
        name = "requests_per_second"
        a_number(self.requests_per_second, f"RateLimit({name}=...)", name, positive=True)
        a_whole_number(self.burst, "RateLimit(burst=...)", "burst", minimum=1)


def _check_delay(value: float | None, fault: str, name: str) -> None:
    """A delay is None or a finite number of seconds >= 0."""
    if value is not None:
        a_number(value, f"Fault.{fault}({name}=...)", name, minimum=0)


def _check_count(value: int, fault: str) -> None:
    """`after` counts events: an int >= 0."""
    a_whole_number(value, f"Fault.{fault}(after=...)", "after", minimum=0)


def _chunk_sizes(chunks: object) -> tuple[int, ...] | None:
    """`chunks` as a tuple of piece sizes of at least one byte each."""
    if chunks is None:
        return None
    where = "Fault.http(chunks=...)"
    if not isinstance(chunks, list | tuple):
        raise InvalidArgumentError(
            f"{where} takes a list of piece sizes in bytes, got {chunks!r}", argument="chunks"
        )
    if not chunks:
        raise ConfigurationError(f"{where} takes at least one piece size", option="chunks")
    return tuple(
        a_whole_number(size, where, "chunks", minimum=1) for size in cast(list[object], chunks)
    )
