"""Faults the emulator injects instead of (or before) a normal answer, and its rate limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Fault", "FaultKind", "HeaderStyle", "RateLimit"]

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
]
HeaderStyle = Literal["seconds", "ms", "both"]
"""Which retry header a 429 carries: `retry-after`, `retry-after-ms`, or both."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected failure, rendered in the wire format of the route it hits.

    Only `latency` consumes a scripted turn (it answers normally, late); every other
    fault leaves the script untouched, so a retried request gets the turn.
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
    def http(cls, status: int, body: Any = None, headers: dict[str, str] | None = None) -> Fault:
        """Any status with any body: `bytes`/`str` sent as is, anything else as JSON."""
        pairs = tuple((name.lower(), value) for name, value in (headers or {}).items())
        return cls("http", status=status, body=body, headers=pairs)


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
