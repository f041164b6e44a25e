"""Whether a 429 says a limit of the account was hit (`ThrottleDetails.limit_reached`),
read by each provider's adapter from its own words, through the real SDKs: a rate-limit
header at 0 remaining, or an error body that names the limit. A 429 with neither may be
a stray (a provider short of capacity, a gateway), which the pacer does not let hold
every request (tests/core/throttling/test_stray_429s.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.wire import replay, request_once
from wink import ThrottleError
from wink.core.foundation.errors import ThrottleDetails
from wink.core.foundation.errors_json import error_from_json, error_to_json
from wink.testing import Fault

# OpenAI's own words for a 429 of the account's limit, and for one of its capacity.
OPENAI_LIMIT = {
    "message": "Rate limit reached for gpt-4.1 in organization org-abc on requests per min "
    "(RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.",
    "type": "requests",
    "param": None,
    "code": "rate_limit_exceeded",
}
OPENAI_OVERLOADED = {
    "message": "That model is currently overloaded with other requests. You can retry your "
    "request, or contact us through our help center at help.openai.com if the error persists.",
    "type": "server_error",
    "param": None,
    "code": None,
}
ANTHROPIC_LIMIT = {
    "type": "error",
    "error": {
        "type": "rate_limit_error",
        "message": "Number of request tokens has exceeded your per-minute rate limit.",
    },
}


def throttle(provider: str, fault: Fault) -> ThrottleDetails:
    outcome, _, _ = request_once(provider, fault)
    assert isinstance(outcome, ThrottleError), outcome
    assert outcome.details.kind == "rate_limit"
    return outcome.details


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "google"])
def test_the_emulators_rate_limit_says_a_limit_was_reached(provider: str) -> None:
    # headers at 0 remaining (OpenAI, Anthropic) and a body naming the limit (all three)
    assert throttle(provider, Fault.rate_limit(retry_after=0.5)).limit_reached


@pytest.mark.parametrize(
    ("body", "headers", "reached"),
    [
        ({"error": OPENAI_LIMIT}, {}, True),  # the body alone names the limit
        ({"error": OPENAI_OVERLOADED}, {"retry-after": "1"}, False),  # its capacity: a stray
        (  # the code without the limit's size says nothing; the header at 0 does
            {"error": {**OPENAI_LIMIT, "message": "Rate limit reached."}},
            {"x-ratelimit-remaining-requests": "0"},
            True,
        ),
        ({"error": {**OPENAI_LIMIT, "message": "Rate limit reached."}}, {}, False),
        (  # the older wording
            {"error": {**OPENAI_LIMIT, "message": "Rate limit reached. Limit: 3 / min."}},
            {},
            True,
        ),
        (b"Too Many Requests", {"x-ratelimit-remaining-tokens": "0"}, True),
        (b"Too Many Requests", {"x-ratelimit-remaining-requests": "12"}, False),
    ],
)
def test_openai_names_its_limit_in_the_body_or_the_headers(
    body: Any, headers: dict[str, str], reached: bool
) -> None:
    assert throttle("openai", Fault.http(429, body, headers)).limit_reached is reached


def test_a_gateways_429_in_front_of_an_openai_compatible_server_is_a_stray() -> None:
    outcome, _, _ = replay("openai", "openai/compat_openrouter_429.json")
    assert isinstance(outcome, ThrottleError)
    assert outcome.details.kind == "rate_limit"
    assert not outcome.details.limit_reached  # "temporarily rate-limited upstream"


def test_anthropic_answers_429_only_for_a_limit_of_the_organization() -> None:
    assert throttle("anthropic", Fault.http(429, ANTHROPIC_LIMIT)).limit_reached
    spent = {"anthropic-ratelimit-input-tokens-remaining": "0"}
    assert throttle("anthropic", Fault.http(429, b"slow down", spent)).limit_reached
    assert not throttle("anthropic", Fault.http(429, b"slow down")).limit_reached  # a gateway


def test_gemini_names_the_quota_it_hit_and_vertex_shared_capacity_names_none() -> None:
    assert throttle("google", Fault.rate_limit(retry_after=1.0)).limit_reached  # QuotaFailure
    outcome, _, _ = replay("google", "google/429_resource_exhausted.json")
    assert isinstance(outcome, ThrottleError)
    assert outcome.details.kind == "rate_limit"
    assert not outcome.details.limit_reached  # "Resource exhausted. Please try again later."


def test_other_throttles_never_say_a_limit_was_reached() -> None:
    quota = request_once("openai", Fault.quota_exhausted())[0]
    assert isinstance(quota, ThrottleError)
    assert quota.details.kind == "quota_exhausted"
    assert not quota.details.limit_reached  # no wait brings it back: never retried anyway
    overloaded = request_once("anthropic", Fault.overloaded())[0]
    assert isinstance(overloaded, ThrottleError)
    assert not overloaded.details.limit_reached


def test_limit_reached_survives_the_json_round_trip() -> None:
    error = ThrottleError(
        "HTTP 429",
        prompt_name="p",
        details=ThrottleDetails("rate_limit", 0.5, status_code=429, limit_reached=True),
    )
    back = error_from_json(error_to_json(error), "error")
    assert isinstance(back, ThrottleError)
    assert back.details == error.details
    stray = ThrottleDetails("rate_limit", 0.5)
    assert not stray.limit_reached  # the default: nothing said
