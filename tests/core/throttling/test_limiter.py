"""The limiter interface and the in-process limiter: one pacer per provider key, shared by
the adapters that share a limiter; and the emulator without rate-limit headers."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from wink import (
    ConfigurationError,
    InProcessLimiter,
    Limiter,
    MarkdownSection,
    Prompt,
    RetryPolicy,
    Session,
    create_adapter as make,
)
from wink.core.throttling.pacing import RequestPacer
from wink.testing import Fault, ProviderEmulator, RateLimit, Turn

HELLO = Prompt(name="hello", sections=[MarkdownSection(key="t", title="T", template="Hi")])
FAST = RetryPolicy(initial_delay=0.01, max_delay=0.05)


def test_one_pacer_per_key() -> None:
    limiter = InProcessLimiter()
    assert isinstance(limiter, Limiter)
    first = limiter.pacer("openai:gpt-4.1")
    assert isinstance(first, RequestPacer)
    assert limiter.pacer("openai:gpt-4.1") is first
    assert limiter.pacer("openai:gpt-4.1-mini") is not first
    assert "openai:gpt-4.1" in repr(limiter)
    for key in ("", None, 3):
        with pytest.raises(ConfigurationError, match="a limiter key is a non-empty string"):
            limiter.pacer(key)  # type: ignore[arg-type]


def test_adapters_get_their_own_limiter_unless_given_one() -> None:
    alone = [make("openai:gpt-4.1", api_key="k") for _ in range(2)]
    assert isinstance(alone[0].limiter, InProcessLimiter)
    assert alone[0]._pacer is not alone[1]._pacer
    shared = InProcessLimiter()
    same_model = [make("openai:gpt-4.1", api_key="k", limiter=shared) for _ in range(2)]
    other_model = make("openai:gpt-4.1-mini", api_key="k", limiter=shared)
    assert same_model[0]._pacer is same_model[1]._pacer  # the key is "provider:model"
    assert other_model._pacer is not same_model[0]._pacer
    assert same_model[0].limiter is shared


async def test_adapters_sharing_a_limiter_share_the_throttle_window() -> None:
    shared = InProcessLimiter()
    with ProviderEmulator(default_turn=Turn.text("ok")) as emu:
        first, second = (
            make(
                "openai:gpt-4.1",
                base_url=emu.base_url("openai"),
                api_key="k",
                retry_policy=FAST,
                limiter=shared,
            )
            for _ in range(2)
        )
        emu.inject(Fault.rate_limit(retry_after=0.3))
        await first.evaluate_async(HELLO, session=Session())
        await second.evaluate_async(HELLO, session=Session())
        arrivals = [request.received_at for request in emu.requests]
    assert emu.stats.responses == {200: 2, 429: 1}
    assert arrivals[2] >= arrivals[0] + 0.3  # the second adapter waited out the window too


def test_the_emulator_can_send_no_rate_limit_headers() -> None:
    limit = RateLimit(requests_per_second=2, burst=1, headers=False)
    chat = {"model": "m", "messages": []}
    with (
        ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu,
        httpx.Client(base_url=emu.url) as client,
    ):
        ok = client.post("/v1/chat/completions", json=chat)
        throttled = client.post("/v1/chat/completions", json=chat)
    assert (ok.status_code, throttled.status_code) == (200, 429)
    for answer in (ok, throttled):
        assert not [name for name in answer.headers if "ratelimit" in name]
        assert "retry-after-ms" not in answer.headers
    assert 0 < float(throttled.headers["retry-after"]) <= 0.5


async def test_pacing_converges_without_rate_headers() -> None:
    # 60 evaluations, 20 at a time, 100 req/s burst 1, 429s saying only retry-after
    limit = RateLimit(requests_per_second=100, burst=1, headers=False)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu:
        adapter = make(
            "openai:gpt-4.1",
            base_url=emu.base_url("openai"),
            api_key="k",
            retry_policy=RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=0.5),
        )
        gate = asyncio.Semaphore(20)

        async def one() -> str | None:
            async with gate:
                return (await adapter.evaluate_async(HELLO, session=Session())).text

        texts = await asyncio.gather(*(one() for _ in range(60)))
        throttled = emu.stats.throttled
    assert texts == ["ok"] * 60
    # the cold start lets 4 out, not 20; after that the pacer holds to about one refill
    assert throttled <= 30
    assert 0.005 <= adapter._pacer.interval <= 0.03  # type: ignore[attr-defined]
