"""`FallbackAdapter.count_tokens`: the first adapter that can count does, past those
without an endpoint and those failing as an evaluation would move on; a request refused
as malformed is not moved on, and nothing counted raises as an evaluation does."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.adapters import make_adapter
from wink import (
    AllAdaptersThrottledError,
    BadRequestError,
    FallbackAdapter,
    ThrottleError,
    UnsupportedFeatureError,
)
from wink.testing import Fault, ProviderEmulator
from wink.testing.token_counts import derived_count


def _counts(emulator: ProviderEmulator) -> list[str]:
    return [request.path for request in emulator.requests]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_first_adapter_that_can_count_counts(
    mode: str, provider_emulator_factory: type[ProviderEmulator]
) -> None:
    emulator = provider_emulator_factory()
    chat = make_adapter("openai", emulator)  # Chat Completions: no endpoint
    claude = make_adapter("anthropic", emulator)
    gemini = make_adapter("google", emulator)
    fallback = FallbackAdapter([chat, claude, gemini])
    if mode == "sync":
        count = fallback.count_tokens("How many tokens is this?")
    else:
        count = asyncio.run(fallback.count_tokens_async("How many tokens is this?"))
    (request,) = emulator.requests
    assert request.path == "/v1/messages/count_tokens"
    assert count == derived_count(request.body)


def test_a_throttled_adapter_is_passed_over(
    provider_emulator_factory: type[ProviderEmulator],
) -> None:
    emulator = provider_emulator_factory()
    emulator.inject(Fault.rate_limit(retry_after=0.01))
    fallback = FallbackAdapter(
        [make_adapter("anthropic", emulator), make_adapter("google", emulator)]
    )
    count = fallback.count_tokens("How many?")
    anthropic_count, google_count = emulator.requests
    assert anthropic_count.path == "/v1/messages/count_tokens"
    assert google_count.path.endswith(":countTokens")
    assert count == derived_count(google_count.body)


def test_a_malformed_request_is_not_moved_on(
    provider_emulator_factory: type[ProviderEmulator],
) -> None:
    emulator = provider_emulator_factory()
    emulator.inject(Fault.bad_request())
    fallback = FallbackAdapter(
        [make_adapter("anthropic", emulator), make_adapter("google", emulator)]
    )
    with pytest.raises(BadRequestError):
        fallback.count_tokens("How many?")
    assert len(emulator.requests) == 1


def test_nothing_counted_raises_as_an_evaluation_would(
    provider_emulator_factory: type[ProviderEmulator],
) -> None:
    emulator = provider_emulator_factory()
    chats = FallbackAdapter([make_adapter("openai", emulator), make_adapter("openai", emulator)])
    with pytest.raises(UnsupportedFeatureError, match="token-count endpoint"):
        chats.count_tokens("How many?")
    emulator.inject(Fault.rate_limit(retry_after=0.5), times=2)
    throttled = FallbackAdapter(
        [
            make_adapter("openai", emulator),
            make_adapter("anthropic", emulator),
            make_adapter("google", emulator),
        ]
    )
    with pytest.raises(AllAdaptersThrottledError) as caught:
        throttled.count_tokens("How many?")
    names = [name for name, _ in caught.value.failures]
    assert names == ["anthropic:claude-sonnet-4-6", "google:gemini-2.5-flash"]
    assert all(isinstance(error, ThrottleError) for _, error in caught.value.failures)
    assert caught.value.details.retry_after is not None
    assert len(emulator.requests) == 2
