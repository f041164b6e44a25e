"""Secret redaction and the status -> error mapping shared by every adapter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from wink.core.errors import PromptEvaluationError, ThrottleError
from wink.core.provider_errors import error_from_status, redact_secrets

KEY = "sk-proj-abcdefghijklmnop0123456789"


def test_secrets_are_masked_everywhere_in_a_payload() -> None:
    payload = {
        "error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"},
        "echo": [f"Bearer {KEY}", {"authorization": "anything", "x-api-key": "anything"}],
    }
    cleaned = redact_secrets(payload, [KEY])
    assert KEY not in repr(cleaned)
    assert cleaned["echo"][1] == {"authorization": "[redacted]", "x-api-key": "[redacted]"}
    assert cleaned["error"]["code"] == "invalid_api_key"


def test_a_key_shaped_string_is_masked_even_when_unknown() -> None:
    assert KEY not in redact_secrets(f"key {KEY} rejected")


def test_a_short_secret_is_masked_only_where_it_stands_alone() -> None:
    cleaned = redact_secrets({"responseId": "k9xkq-k", "message": "key k is not valid"}, ["k"])
    assert cleaned == {"responseId": "k9xkq-k", "message": "key [redacted] is not valid"}


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (500, "overloaded"), (503, "overloaded")]
)
def test_throttle_statuses_keep_no_secret(status: int, kind: str) -> None:
    error = error_from_status(
        status,
        f"failed for {KEY}",
        prompt_name="p",
        body={"error": {"message": f"key {KEY}"}},
        headers={"retry-after": "2"},
        secrets=(KEY,),
    )
    assert isinstance(error, ThrottleError)
    assert error.details.kind == kind
    assert KEY not in str(error) + repr(error) + repr(error.provider_payload)


def test_a_client_error_is_a_request_error_without_the_key() -> None:
    error = error_from_status(401, f"bad key {KEY}", prompt_name="p", body=None, secrets=(KEY,))
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert KEY not in str(error) + repr(error.provider_payload)


# --- retry_after from a status answer


def test_a_status_answers_retry_after_is_a_timedelta_kept_however_long() -> None:
    error = error_from_status(429, "slow", prompt_name="p", headers={"retry-after-ms": "1500"})
    assert isinstance(error, ThrottleError)
    assert error.details.retry_after == timedelta(seconds=1.5)
    huge = error_from_status(429, "slow", prompt_name="p", retry_after=1e20)
    assert isinstance(huge, ThrottleError)
    assert huge.details.retry_after == timedelta.max  # no OverflowError from a wild ask
    for nonsense in (-1.0, float("nan")):
        odd = error_from_status(503, "down", prompt_name="p", retry_after=nonsense)
        assert isinstance(odd, ThrottleError)
        assert odd.details.retry_after is None
