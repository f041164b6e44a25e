"""Gemini's error body: `google.rpc.RetryInfo` (how long to wait),
`google.rpc.QuotaFailure` (which quota was hit, and whether it is per day),
`google.rpc.ErrorInfo` (a refused key) and the message (a context window exceeded).
Read only for Gemini answers, so it lives with the Gemini adapter, not in core, which
classifies the facts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, cast

from ...core.throttling.headers import parse_duration
from ...core.transport.errors import StatusFacts

__all__ = [
    "google_error_facts",
    "google_quota_is_daily",
    "google_quota_violated",
    "google_retry_delay",
]

# "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
_CONTEXT_WINDOW_WORDS = ("input token count", "exceeds the maximum number of tokens")
# Gemini answers a key it refuses with a 400 INVALID_ARGUMENT carrying this reason.
_KEY_REFUSED = frozenset({"API_KEY_INVALID"})


def google_error_facts(
    status: int, body: Mapping[str, Any], message: str, headers: Mapping[str, str] | None = None
) -> StatusFacts:
    """What a Gemini `{"error": {code, message, status, details}}` body says, for an error
    answer and a stream's error object alike."""
    lowered = message.lower()
    reasons = {detail.get("reason") for detail in _google_details(body, "google.rpc.ErrorInfo")}
    return StatusFacts(
        status=status,
        message=message,
        body=body,
        headers=headers,
        quota_exhausted=status == 429 and google_quota_is_daily(body),
        limit_named=status == 429 and google_quota_violated(body),
        retry_after=google_retry_delay(body),
        context_window_exceeded=all(words in lowered for words in _CONTEXT_WINDOW_WORDS),
        authentication_failed=bool(reasons & _KEY_REFUSED),
    )


def google_retry_delay(error_body: object) -> float | None:
    """`RetryInfo.retryDelay` of a Gemini error body, in seconds, else None.

    Takes the whole body (`{"error": {...}}`) or the inner error object.
    """
    for detail in _google_details(error_body, "google.rpc.RetryInfo"):
        delay = detail.get("retryDelay")
        if isinstance(delay, str):
            seconds = parse_duration(delay)
        elif isinstance(delay, Mapping):  # a decoded protobuf Duration
            seconds = _protobuf_duration(cast(Mapping[str, object], delay))
        else:
            seconds = None
        if seconds is not None:
            return seconds
    return None


def google_quota_violated(error_body: object) -> bool:
    """Whether a Gemini `RESOURCE_EXHAUSTED` names the quota of the project it hit (a
    `QuotaFailure` violation): the project's own limit. Without one (Vertex AI's "Resource
    exhausted. Please try again later.") the shared capacity ran short: a stray."""
    return any(_quota_names(error_body))


def google_quota_is_daily(error_body: object) -> bool:
    """Whether a Gemini `QuotaFailure` names a per-day quota: waiting minutes will not help."""
    return any("perday" in name.lower() or "per_day" in name for name in _quota_names(error_body))


def _quota_names(error_body: object) -> Iterable[str]:
    """The `quotaId` and `quotaMetric` of each violation of the body's `QuotaFailure`."""
    for detail in _google_details(error_body, "google.rpc.QuotaFailure"):
        violations = detail.get("violations")
        if not isinstance(violations, list):
            continue
        for violation in cast(list[object], violations):
            if not isinstance(violation, Mapping):
                continue
            violation = cast(Mapping[str, object], violation)
            for field in ("quotaId", "quotaMetric"):
                name = violation.get(field)
                if isinstance(name, str):
                    yield name


def _google_details(error_body: object, type_suffix: str) -> Iterable[Mapping[str, object]]:
    if not isinstance(error_body, Mapping):
        return
    body = cast(Mapping[str, object], error_body)
    error = body.get("error", body)
    if not isinstance(error, Mapping):
        return
    details = cast(Mapping[str, object], error).get("details")
    if not isinstance(details, list):
        return
    for detail in cast(list[object], details):
        if isinstance(detail, Mapping):
            detail = cast(Mapping[str, object], detail)
            kind = detail.get("@type")
            if isinstance(kind, str) and kind.endswith(type_suffix):
                yield detail


def _protobuf_duration(value: Mapping[str, object]) -> float | None:
    seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
    try:
        total = float(cast(Any, seconds)) + float(cast(Any, nanos)) / 1e9
    except (TypeError, ValueError):
        return None
    return total if math.isfinite(total) and total >= 0 else None
