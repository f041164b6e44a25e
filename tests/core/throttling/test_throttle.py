"""Reading what providers say about their limits (`wink.core.throttling.headers`): durations,
`retry-after` and rate-limit headers."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from tests.helpers.wire import load_recording
from wink.core.foundation import errors
from wink.core.foundation.messages import RateLimitInfo
from wink.core.throttling import headers as throttle
from wink.core.throttling.headers import (
    NO_RATE_LIMIT_HEADERS,
    RateLimitHeaders,
    parse_duration,
    rate_limit_info_from_headers,
    retry_after_from_headers,
)
from wink.providers.anthropic.messages import RATE_LIMIT_HEADERS as ANTHROPIC
from wink.providers.openai.client import RATE_LIMIT_HEADERS as OPENAI

# --- the public surface


def test_throttle_is_the_documented_home_of_the_throttle_types() -> None:
    assert throttle.ThrottleKind is errors.ThrottleKind
    assert throttle.ThrottleDetails is errors.ThrottleDetails
    assert sorted(throttle.__all__) == list(throttle.__all__)
    for name in throttle.__all__:
        assert getattr(throttle, name) is not None


# --- parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2ms", 0.002),
        ("120ms", 0.12),
        ("1.235s", 1.235),
        ("8.64s", 8.64),
        ("0s", 0.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("500us", 0.0005),
        ("500µs", 0.0005),  # Go writes the micro sign
        ("500μs", 0.0005),  # the Greek mu is accepted too
        ("250ns", 2.5e-7),
        ("42s", 42.0),
        ("3.598366221s", 3.598366221),
        ("5", 5.0),
        ("0.25", 0.25),
        (" 2ms ", 0.002),
    ],
)
def test_parse_duration_reads_go_and_protobuf_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    [
        *("", "   ", "abc", "-1s", "-5", "+3s", "1x", "ms", "s", "1.2.3s", "inf", "nan"),
        *("1e3", "2 ms", "2ms3", "1s-1s", "9" * 400),
    ],
)
def test_parse_duration_gives_none_on_garbage(text: str) -> None:
    assert parse_duration(text) is None


def test_parse_duration_never_raises_on_a_non_string() -> None:
    assert parse_duration(None) is None  # type: ignore[arg-type]
    assert parse_duration(5) is None  # type: ignore[arg-type]


# --- retry_after_from_headers

NOW = datetime(2026, 2, 3, 23, 26, 30, tzinfo=UTC)


@pytest.mark.parametrize("known", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_retry_after_ms_comes_first_where_the_wire_declares_it(known: RateLimitHeaders) -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "7"}
    assert retry_after_from_headers(headers, known) == pytest.approx(1.5)


def test_retry_after_ms_is_not_read_where_no_wire_declares_it() -> None:
    """`retry-after-ms` is the Stainless SDKs' header (OpenAI, Anthropic): core reads
    HTTP's `retry-after` alone, so Gemini's and Bedrock's answers are read for it only."""
    headers = {"retry-after-ms": "1500", "retry-after": "7"}
    assert retry_after_from_headers(headers) == 7.0
    assert retry_after_from_headers({"retry-after-ms": "1500"}) is None


def test_retry_after_in_seconds_and_as_an_http_date() -> None:
    assert retry_after_from_headers({"retry-after": "2.5"}) == pytest.approx(2.5)
    date = {"retry-after": "Tue, 03 Feb 2026 23:26:42 GMT"}
    assert retry_after_from_headers(date, now=NOW) == pytest.approx(12.0)
    past = {"retry-after": "Tue, 03 Feb 2026 23:00:00 GMT"}
    assert retry_after_from_headers(past, now=NOW) == 0.0


def test_header_names_match_in_any_case() -> None:
    assert retry_after_from_headers({"Retry-After-Ms": "20"}, OPENAI) == pytest.approx(0.02)
    assert retry_after_from_headers(httpx.Headers({"Retry-After": "3"})) == 3.0


def test_malformed_or_negative_values_are_skipped() -> None:
    headers = {"retry-after-ms": "soon", "retry-after": "-4", "x-ratelimit-reset-requests": "2s"}
    assert retry_after_from_headers(headers, OPENAI) == 2.0
    assert retry_after_from_headers({"retry-after": "whenever"}) is None
    assert retry_after_from_headers({}) is None


def test_reset_headers_take_the_exhausted_allowance() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1.5s",
        "x-ratelimit-remaining-tokens": "5000",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    assert retry_after_from_headers(headers, OPENAI) == 1.5
    headers["x-ratelimit-remaining-requests"] = "3"
    assert retry_after_from_headers(headers, OPENAI) == 360.0  # none exhausted: the longest


def test_anthropic_resets_are_times_counted_from_now() -> None:
    headers = {
        "anthropic-ratelimit-requests-remaining": "10",
        "anthropic-ratelimit-requests-reset": "2026-02-03T23:26:35Z",
        "anthropic-ratelimit-output-tokens-remaining": "0",
        "anthropic-ratelimit-output-tokens-reset": "2026-02-03T23:26:31.500Z",
    }
    assert retry_after_from_headers(headers, ANTHROPIC, now=NOW) == pytest.approx(1.5)
    headers["anthropic-ratelimit-output-tokens-reset"] = "2026-02-03T23:00:00Z"
    assert retry_after_from_headers(headers, ANTHROPIC, now=NOW) == 0.0  # exhausted, already reset


def test_each_provider_reads_only_its_own_reset_headers() -> None:
    openai_style = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"}
    anthropic_style = {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2026-02-03T23:26:32Z",
    }
    assert retry_after_from_headers(openai_style, OPENAI) == 2.0
    assert retry_after_from_headers(openai_style, ANTHROPIC) is None
    assert retry_after_from_headers(anthropic_style, ANTHROPIC, now=NOW) == 2.0
    assert retry_after_from_headers(anthropic_style, OPENAI, now=NOW) is None
    assert retry_after_from_headers({**openai_style, "retry-after": "7"}) == 7.0  # any provider


def test_a_header_table_is_written_in_lower_case() -> None:
    with pytest.raises(ValueError, match="lower case"):
        RateLimitHeaders(requests=("X-Limit", "x-remaining", "x-reset"))
    with pytest.raises(ValueError, match="lower case"):
        RateLimitHeaders(resets=(("x-remaining", "X-Reset"),))


# --- rate_limit_info_from_headers


def test_openai_recording_reports_its_request_allowance() -> None:
    answer = load_recording("openai/chat_tool_call_with_ratelimit_headers.json")["response"]
    headers = answer["headers"]
    info = rate_limit_info_from_headers(headers, OPENAI)
    assert info == RateLimitInfo(
        limit_requests=30000, remaining_requests=29999, reset_requests=0.002
    )


def test_anthropic_recordings_report_their_request_allowance() -> None:
    answer = load_recording("anthropic/tool_use_with_ratelimit_headers.json")["response"]
    headers = answer["headers"]
    info = rate_limit_info_from_headers(headers, ANTHROPIC, now=NOW)
    assert info == RateLimitInfo(
        limit_requests=4000, remaining_requests=3999, reset_requests=5.0, reset_is_time=True
    )
    full = load_recording("anthropic/text_with_ratelimit_headers.json")["response"]["headers"]
    later = rate_limit_info_from_headers(full, ANTHROPIC, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert later is not None
    assert later.reset_requests == 0.0  # a reset in the past


def test_no_rate_limit_headers_means_none() -> None:
    gemini = load_recording("google/429_resource_exhausted.json")["response"]["headers"]
    for known in (OPENAI, ANTHROPIC, NO_RATE_LIMIT_HEADERS):
        assert rate_limit_info_from_headers(gemini, known) is None  # a "vary" value is a list
        assert rate_limit_info_from_headers({}, known) is None
        assert rate_limit_info_from_headers(None, known) is None


def test_rate_limit_info_keeps_what_it_can_read() -> None:
    info = rate_limit_info_from_headers(
        httpx.Headers({"X-RateLimit-Remaining-Requests": "0", "X-RateLimit-Limit-Requests": "?"}),
        OPENAI,
    )
    assert info == RateLimitInfo(limit_requests=None, remaining_requests=0, reset_requests=None)


def test_a_provider_reads_only_its_own_allowance_headers() -> None:
    openai_style = {"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "1"}
    assert rate_limit_info_from_headers(openai_style, ANTHROPIC) is None
    assert rate_limit_info_from_headers(openai_style, NO_RATE_LIMIT_HEADERS) is None
    info = rate_limit_info_from_headers(openai_style, OPENAI)
    assert info == RateLimitInfo(limit_requests=10, remaining_requests=1, reset_requests=None)


def test_the_reset_header_says_whether_it_is_a_clock_time() -> None:
    now = datetime(2025, 11, 4, 22, 50, 54, tzinfo=UTC)
    anthropic = rate_limit_info_from_headers(
        {
            "anthropic-ratelimit-requests-limit": "1",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2025-11-04T22:50:54.010Z",
        },
        ANTHROPIC,
        now=now,
    )
    openai = rate_limit_info_from_headers(
        {
            "x-ratelimit-limit-requests": "1",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "10ms",
        },
        OPENAI,
        now=now,
    )
    assert anthropic is not None
    assert anthropic.reset_is_time
    assert anthropic.reset_requests == pytest.approx(0.010)
    assert openai is not None
    assert not openai.reset_is_time
