"""What a provider said about throttling, read the same way for every provider.

An adapter names its provider's rate-limit headers (`RateLimitHeaders`) and hands over
the headers it received; it never parses one itself (formats in docs/throttling.md).
Retrying lives in `retry.py`, pacing in `pacing.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import cast

from ..foundation.errors import ThrottleDetails, ThrottleKind
from ..foundation.messages import RateLimitInfo

__all__ = [
    "NO_RATE_LIMIT_HEADERS",
    "RateLimitHeaders",
    "ThrottleDetails",
    "ThrottleKind",
    "allowance_spent",
    "parse_duration",
    "rate_limit_info_from_headers",
    "retry_after_from_headers",
]

# --- header parsing

_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_DURATION_PART = r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)"  # "ms" before "m"
_DURATION = re.compile(f"(?:{_DURATION_PART})+")
_DURATION_PARTS = re.compile(_DURATION_PART)
_UNIT_SECONDS = {
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
}

_RETRY_AFTER = "retry-after"  # the HTTP standard's: read for every provider


@dataclass(frozen=True, slots=True)
class RateLimitHeaders:
    """The headers in which one provider reports its allowance (names in lower case).

    Its adapter declares them; reading them is the same for every provider (here).
    `requests`: (limit, remaining, reset) of the request allowance, read on every answer
    to pace requests. `resets`: (remaining, reset) of each allowance, read on a throttled
    answer that says no `retry-after`. A reset is a duration ("1.5s", "6m0s") or an
    RFC 3339 time. `retry_after_ms`: a header that gives the wait in milliseconds, read
    before `retry-after` (OpenAI's and Anthropic's `retry-after-ms`). `request_names`,
    `retry_names` and `remaining_names` are derived: the names each reading looks for,
    so that it takes one pass over the headers.
    """

    requests: tuple[str, str, str] | None = None
    resets: tuple[tuple[str, str], ...] = ()
    retry_after_ms: str | None = None
    request_names: frozenset[str] = field(init=False, repr=False, compare=False)
    retry_names: frozenset[str] = field(init=False, repr=False, compare=False)
    remaining_names: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        resets = tuple(name for pair in self.resets for name in pair)
        milliseconds = (self.retry_after_ms,) if self.retry_after_ms else ()
        for name in (*(self.requests or ()), *resets, *milliseconds):
            if name != name.lower():
                raise ValueError(f"rate-limit header names are lower case: {name!r}")
        retry_names = frozenset((_RETRY_AFTER, *milliseconds, *resets))
        object.__setattr__(self, "request_names", frozenset(self.requests or ()))
        object.__setattr__(self, "retry_names", retry_names)
        remaining = (*(self.requests or ())[1:2], *(pair[0] for pair in self.resets))
        object.__setattr__(self, "remaining_names", frozenset(remaining))


NO_RATE_LIMIT_HEADERS = RateLimitHeaders()
"""A provider that reports no allowance: HTTP's `retry-after` only."""


def parse_duration(value: str) -> float | None:
    """Seconds in a Go ("6m0s", "1.235s", "2ms") or protobuf ("3.5s") duration, or a number.

    A bare number is seconds. Negative, infinite or malformed values give None; it never
    raises.
    """
    if not isinstance(cast(object, value), str):
        return None
    text = value.strip()
    if _NUMBER.fullmatch(text):
        seconds = float(text)
    elif _DURATION.fullmatch(text):
        seconds = sum(
            float(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PARTS.findall(text)
        )
    else:
        return None
    return seconds if math.isfinite(seconds) else None


def retry_after_from_headers(
    headers: Mapping[str, str],
    known: RateLimitHeaders = NO_RATE_LIMIT_HEADERS,
    *,
    now: datetime | None = None,
) -> float | None:
    """How long a throttled answer's headers ask to wait, in seconds (None: they do not say).

    Read in order, the first usable one wins: the provider's milliseconds header
    (`known.retry_after_ms`); `retry-after` (seconds or an HTTP date); the provider's
    reset headers (`known.resets`), taking the longest reset among the exhausted
    allowances (remaining 0), or among all when none says it is exhausted. Names are
    matched in any case; negative or malformed values are skipped.
    Only meaningful on a throttled answer: a `retry-after` on a 200 asks nothing of us.
    """
    found = _pick(headers, known.retry_names)
    if known.retry_after_ms is not None:
        milliseconds = _number(found.get(known.retry_after_ms))
        if milliseconds is not None:
            return milliseconds / 1000
    retry_after = found.get(_RETRY_AFTER)
    if retry_after is not None:
        seconds = _number(retry_after)
        if seconds is None and isinstance(retry_after, str):
            seconds = _seconds_until(_http_date(retry_after), now)
        if seconds is not None:
            return seconds
    exhausted: list[float] = []
    resets: list[float] = []
    for remaining_name, reset_name in known.resets:
        reset = _reset_seconds(found.get(reset_name), now)
        if reset is None:
            continue
        resets.append(reset)
        remaining = _integer(found.get(remaining_name))
        if remaining is not None and remaining <= 0:
            exhausted.append(reset)
    if exhausted:
        return max(exhausted)
    return max(resets) if resets else None


def allowance_spent(headers: Mapping[str, str], known: RateLimitHeaders) -> bool:
    """Whether an answer's headers report one of the provider's allowances at 0 remaining
    (`known`'s remaining headers): the provider's own word that a limit was reached, which
    a 429 with no such header does not give."""
    found = _pick(headers, known.remaining_names)
    return any(
        remaining is not None and remaining <= 0
        for remaining in (_integer(value) for value in found.values())
    )


def rate_limit_info_from_headers(
    headers: Mapping[str, str] | None,
    known: RateLimitHeaders,
    *,
    now: datetime | None = None,
) -> RateLimitInfo | None:
    """The request allowance an answer reports in the provider's headers, else None.

    Called on every response: one pass over the headers, a few microseconds.
    """
    if not headers or known.requests is None:
        return None
    found = _pick(headers, known.request_names)
    if not found:
        return None
    limit_name, remaining_name, reset_name = known.requests
    reset = found.get(reset_name)
    return RateLimitInfo(
        limit_requests=_integer(found.get(limit_name)),
        remaining_requests=_integer(found.get(remaining_name)),
        reset_requests=_reset_seconds(reset, now),
        reset_is_time=isinstance(reset, str) and parse_duration(reset) is None,
    )


def _pick(headers: Mapping[str, str], names: frozenset[str]) -> dict[str, object]:
    """The headers among `names`, keyed by lower-case name (any mapping, any case)."""
    picked: dict[str, object] = {}
    for key, value in headers.items():
        name = key.lower()
        if name in names:
            picked[name] = value
    return picked


def _number(value: object) -> float | None:
    """A non-negative decimal number (no sign, no exponent), else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def _integer(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(value.strip())
    except ValueError:
        number = _number(value)
        return int(number) if number is not None else None


def _http_date(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _timestamp(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def _seconds_until(moment: datetime | None, now: datetime | None) -> float | None:
    """Seconds from `now` to `moment`, at least 0; a naive datetime is taken as UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return max(0.0, (moment - now).total_seconds())


def _reset_seconds(value: object, now: datetime | None) -> float | None:
    """A reset header: a duration (OpenAI) or an RFC 3339 time (Anthropic)."""
    if not isinstance(value, str):
        return None
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    return _seconds_until(_timestamp(value), now)
