"""Gemini's error details (`wink.providers.google.errors`): RetryInfo and QuotaFailure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.helpers.wire import load_recording
from wink.providers.google.errors import google_quota_is_daily, google_retry_delay


def test_gemini_retry_info_and_daily_quota_from_the_recording() -> None:
    body = load_recording("google/429_quota_failure_retryinfo_body.json")["response"]["body"]
    assert google_retry_delay(body) == 42.0
    assert google_retry_delay(body["error"]) == 42.0  # the inner error object works too
    assert google_quota_is_daily(body)


def test_gemini_short_429_has_neither() -> None:
    body = load_recording("google/429_resource_exhausted.json")["response"]["body"]
    assert google_retry_delay(body) is None
    assert not google_quota_is_daily(body)


def _gemini_body(*details: Mapping[str, Any]) -> dict[str, Any]:
    return {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": list(details)}}


def test_gemini_retry_delay_forms() -> None:
    retry = "type.googleapis.com/google.rpc.RetryInfo"
    fine = _gemini_body({"@type": retry, "retryDelay": "3.598366221s"})
    assert google_retry_delay(fine) == pytest.approx(3.598366221)
    decoded = _gemini_body({"@type": retry, "retryDelay": {"seconds": 3, "nanos": 500_000_000}})
    assert google_retry_delay(decoded) == pytest.approx(3.5)
    assert google_retry_delay(_gemini_body({"@type": retry, "retryDelay": "later"})) is None
    assert google_retry_delay(_gemini_body({"@type": "x.Help", "retryDelay": "4s"})) is None
    assert google_retry_delay("429 RESOURCE_EXHAUSTED") is None
    assert google_retry_delay({"error": {"details": "none"}}) is None


def test_gemini_quota_is_daily_only_for_a_per_day_violation() -> None:
    failure = "type.googleapis.com/google.rpc.QuotaFailure"
    per_minute = {"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}
    assert not google_quota_is_daily(_gemini_body({"@type": failure, "violations": [per_minute]}))
    by_metric = {"quotaMetric": "generativelanguage.googleapis.com/requests_per_day"}
    assert google_quota_is_daily(_gemini_body({"@type": failure, "violations": [by_metric]}))
    assert not google_quota_is_daily(_gemini_body({"@type": failure, "violations": "x"}))
    assert not google_quota_is_daily(None)
