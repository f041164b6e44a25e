"""Adapters pointed at the emulator, with the key and retry policies tests use."""

from __future__ import annotations

from collections import deque
from typing import Any

from wink import RetryPolicy, Session, create_adapter
from wink.adapters.base import ProviderAdapter
from wink.testing import EmulatedRequest, ProviderEmulator, Turn

KEY = "sk-test-THIS-KEY-MUST-NEVER-LEAK-0123456789"
"""An API key shaped like a real one, so redaction has to find it."""

PROVIDERS = ("openai", "openai-responses", "anthropic", "google", "bedrock")
MODELS = {
    "openai": "gpt-4.1",
    "openai-responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}

NO_RETRY = RetryPolicy(max_attempts=1)
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.001, max_delay=0.002)
"""Three attempts, a millisecond or two apart."""


def make_adapter(provider: str, emu: ProviderEmulator, **options: Any) -> ProviderAdapter:
    """`create_adapter` for `provider` on `emu`, with `KEY` and no retries unless given."""
    options.setdefault("retry_policy", NO_RETRY)
    options.setdefault("api_key", KEY)
    if provider == "bedrock":
        options.setdefault("region", "us-east-1")
    return create_adapter(
        f"{provider}:{MODELS[provider]}",
        base_url=emu.base_url(provider),  # type: ignore[arg-type]
        **options,
    )


def answer(adapter: Any, prompt: Any, *, stream: bool) -> Any:
    """The adapter's response to `prompt` in a new session, streamed (all events read) or not."""
    if not stream:
        return adapter.evaluate(prompt, session=Session())
    with adapter.stream(prompt, session=Session()) as events:
        list(events)
        return events.response


def callers_client(provider: str, emu: ProviderEmulator, *, asynchronous: bool = False) -> Any:
    """A client the caller built: the openai or anthropic SDK's own, with its defaults
    (two retries), pointed at `emu`."""
    import anthropic
    import openai

    kinds = {
        "openai": (openai.OpenAI, openai.AsyncOpenAI),
        "anthropic": (anthropic.Anthropic, anthropic.AsyncAnthropic),
    }
    kind = kinds[provider][asynchronous]
    return kind(api_key=KEY, base_url=emu.base_url(provider))


class Recorder:
    """An emulator script that serves queued turns and keeps the emulator's view of each
    request (`seen`: its tool results and tool names in neutral form)."""

    def __init__(self, *turns: Turn) -> None:
        self.turns = deque(turns)
        self.seen: list[EmulatedRequest] = []

    def __call__(self, request: EmulatedRequest) -> Turn | None:
        self.seen.append(request)
        return self.turns.popleft() if self.turns else None
