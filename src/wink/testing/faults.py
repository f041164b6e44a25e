"""Faults the emulator injects instead of (or before) a normal answer, and its rate limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Fault", "FaultKind", "HeaderStyle", "RateLimit", "StreamErrorKind"]

FaultKind = Literal[
    "rate_limit",
    "quota_exhausted",
    "server_error",
    "overloaded",
    "bad_request",
    "unauthorized",
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
]
"""What a `Fault` does (`Fault.kind`); each has its constructor, e.g. `Fault.rate_limit()`."""
HeaderStyle = Literal["seconds", "ms", "both"]
"""Which retry header a 429 carries: `retry-after`, `retry-after-ms`, or both."""
StreamErrorKind = Literal[
    "overloaded", "server_error", "rate_limit", "quota_exhausted", "bad_request"
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
        _check_delay(retry_after)
        return cls("rate_limit", status=429, retry_after=retry_after, header_style=header_style)

    @classmethod
    def quota_exhausted(cls, retry_after: float | None = None) -> Fault:
        """Out of credit: OpenAI 429 `insufficient_quota`, Anthropic 400, Gemini per-day 429."""
        _check_delay(retry_after)
        return cls("quota_exhausted", retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """A 5xx with the provider's server-error body."""
        if not 500 <= status <= 599:
            raise ValueError(f"server_error status must be 5xx, got {status}")
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
    def latency(cls, seconds: float) -> Fault:
        """Answer normally, `seconds` late."""
        _check_delay(seconds)
        return cls("latency", seconds=seconds)

    @classmethod
    def hang(cls, seconds: float = 60.0) -> Fault:
        """Send nothing for `seconds`, then close the connection without an answer."""
        _check_delay(seconds)
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
        pairs = tuple((name.lower(), value) for name, value in (headers or {}).items())
        sizes = tuple(chunks) if chunks is not None else None
        if sizes is not None and (not sizes or any(size < 1 for size in sizes)):
            raise ValueError("chunks must be piece sizes of at least 1 byte")
        _check_delay(chunk_delay)
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
        _check_count(after)
        return cls("stream_error", after=after, error_kind=kind, message=message)

    @classmethod
    def stream_reset(cls, after: int = 3) -> Fault:
        """After `after` events, reset the connection (TCP RST, no end of the body)."""
        _check_count(after)
        return cls("stream_reset", after=after)

    @classmethod
    def stream_malformed(cls, after: int = 3) -> Fault:
        """After `after` events, one event whose JSON is cut off; the rest follows."""
        _check_count(after)
        return cls("stream_malformed", after=after)

    @classmethod
    def stream_truncated(cls, after: int = 3) -> Fault:
        """After `after` events, end the body cleanly, without the terminal event."""
        _check_count(after)
        return cls("stream_truncated", after=after)


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
        if self.requests_per_second <= 0:
            raise ValueError("requests_per_second must be positive")
        if self.burst < 1:
            raise ValueError("burst must be at least 1")


def _check_delay(value: float | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"a delay cannot be negative, got {value}")


def _check_count(value: int) -> None:
    if value < 0:
        raise ValueError(f"after counts events and cannot be negative, got {value}")
