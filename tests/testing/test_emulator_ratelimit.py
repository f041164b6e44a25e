"""The token-bucket rate limiter: headers on every response, honest retry-after."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest

from wink.core.throttling.headers import parse_duration
from wink.testing import Fault, ProviderEmulator, RateLimit, Turn
from wink.testing.ratelimit import TokenBucket

CHAT = ("/v1/chat/completions", {"model": "m", "messages": []})
ANTHROPIC = ("/v1/messages", {"model": "m", "max_tokens": 1, "messages": []})
GOOGLE = ("/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []})


def test_bucket_arithmetic() -> None:
    bucket = TokenBucket(RateLimit(requests_per_second=10, burst=3), now=0.0)
    taken = [bucket.take(0.0) for _ in range(3)]
    assert [snap.remaining for snap in taken] == [2, 1, 0]
    assert [snap.retry_after for snap in taken] == [None, None, None]
    assert taken[-1].reset_after == pytest.approx(0.3)
    refused = bucket.take(0.04)
    assert refused.retry_after == 0.06
    assert bucket.take(0.1).retry_after is None  # exactly one token back after 100 ms
    assert bucket.take(10.0).remaining == 2  # refills to the burst, no further


def test_invalid_rate_limit() -> None:
    with pytest.raises(ValueError):
        RateLimit(requests_per_second=0)
    with pytest.raises(ValueError):
        RateLimit(requests_per_second=1, burst=0)


def test_openai_burst_then_exact_retry_after() -> None:
    limit = RateLimit(requests_per_second=2, burst=2)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu:
        with httpx.Client(base_url=emu.url) as client:
            first, second, third = (client.post(CHAT[0], json=CHAT[1]) for _ in range(3))
            assert [r.status_code for r in (first, second, third)] == [200, 200, 429]
            assert first.headers["x-ratelimit-limit-requests"] == "2"
            assert first.headers["x-ratelimit-remaining-requests"] == "1"
            assert second.headers["x-ratelimit-remaining-requests"] == "0"
            # a Go duration until the bucket is full again: "1s" at once, "985ms" a bit later
            reset = parse_duration(second.headers["x-ratelimit-reset-requests"])
            assert reset is not None
            assert 0 < reset <= 1.0
            assert third.json()["error"]["code"] == "rate_limit_exceeded"
            wait_ms = int(third.headers["retry-after-ms"])
            assert 0 < wait_ms <= 500
            assert float(third.headers["retry-after"]) == wait_ms / 1000
            assert third.headers["x-ratelimit-remaining-requests"] == "0"
            time.sleep(wait_ms / 1000)
            assert client.post(CHAT[0], json=CHAT[1]).status_code == 200
        assert emu.stats.throttled == 1
        assert emu.stats.responses == {200: 3, 429: 1}


def test_anthropic_and_google_shapes_under_the_limiter() -> None:
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        emu.set_rate_limit(RateLimit(requests_per_second=1, burst=1))
        with httpx.Client(base_url=emu.url) as client:
            ok = client.post(ANTHROPIC[0], json=ANTHROPIC[1])
            limited = client.post(ANTHROPIC[0], json=ANTHROPIC[1])
            google = client.post(GOOGLE[0], json=GOOGLE[1])
        assert ok.status_code == 200
        assert ok.headers["anthropic-ratelimit-requests-limit"] == "1"
        assert ok.headers["anthropic-ratelimit-requests-remaining"] == "0"
        reset = datetime.fromisoformat(ok.headers["anthropic-ratelimit-requests-reset"])
        assert 0 < (reset - datetime.now(UTC)).total_seconds() <= 1.1
        assert limited.status_code == 429
        assert limited.json()["error"]["type"] == "rate_limit_error"
        assert 0 < int(limited.headers["retry-after-ms"]) <= 1000
        assert google.status_code == 429
        error = google.json()["error"]
        retry = next(d for d in error["details"] if d["@type"].endswith("RetryInfo"))
        assert retry["retryDelay"].endswith("s")
        assert 0 < float(retry["retryDelay"][:-1]) <= 1
        quota = next(d for d in error["details"] if d["@type"].endswith("QuotaFailure"))
        assert "PerMinute" in quota["violations"][0]["quotaId"]
        assert not any(name.startswith("x-ratelimit") for name in google.headers)
        emu.set_rate_limit(None)
        assert emu.stats.throttled == 2


def test_throttled_requests_leave_injected_faults_and_turns_alone() -> None:
    limit = RateLimit(requests_per_second=1, burst=1)
    emulator = ProviderEmulator([Turn.text("a"), Turn.text("b")], rate_limit=limit)
    with emulator as emu, httpx.Client(base_url=emu.url) as client:

        def send() -> httpx.Response:
            return client.post(CHAT[0], json=CHAT[1])

        assert send().json()["choices"][0]["message"]["content"] == "a"
        emu.inject(Fault.server_error())
        assert send().status_code == 429
        emu.set_rate_limit(None)
        assert send().status_code == 500
        assert send().json()["choices"][0]["message"]["content"] == "b"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_limit_without_headers_shows_none_streamed_or_not(stream: bool) -> None:
    """`headers=False` is a provider that sends no rate-limit headers: a stream shows none
    either, while its 429 still says retry-after."""
    limit = RateLimit(requests_per_second=1, burst=1, headers=False)
    with (
        ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu,
        httpx.Client(base_url=emu.url) as client,
    ):
        answered = client.post(CHAT[0], json={**CHAT[1], "stream": stream})
        refused = client.post(CHAT[0], json={**CHAT[1], "stream": stream})
    assert answered.status_code == 200
    assert answered.headers["content-type"].startswith(
        "text/event-stream" if stream else "application/json"
    )
    assert not [name for name in answered.headers if name.startswith("x-ratelimit")]
    assert refused.status_code == 429
    assert "retry-after" in refused.headers
    assert not [name for name in refused.headers if name.startswith("x-ratelimit")]
