"""`thinking=` as OpenAI's reasoning effort (Chat `reasoning_effort`, Responses
`reasoning.effort`), and which OpenAI models reason (docs/reasoning.md)."""

from __future__ import annotations

import re

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.settings import PORTABLE_HINT, ModelSettings

__all__ = ["openai_reasoning_effort"]


# --- OpenAI (Chat Completions and Responses)

# Models that do not reason, and refuse a reasoning effort.
_OPENAI_NOT_REASONING = re.compile(r"^(ft:)?(gpt-3\.5|gpt-4|chatgpt-|gpt-5(\.\d+)?-chat)")


def openai_reasoning_effort(model: str, settings: ModelSettings, provider: str) -> str | None:
    """`reasoning_effort` (Chat) / `reasoning.effort` (Responses): OpenAI takes an effort
    only, so a budget alone is refused, as is a model known not to reason."""
    asked = settings.thinking
    if asked is None:
        return None
    if _OPENAI_NOT_REASONING.match(model):
        raise _error(
            provider,
            f"{model} is not a reasoning model: remove thinking= or use one that reasons "
            "(o3, o4-mini, gpt-5, ...)",
        )
    if asked.effort is None:
        raise _error(
            provider,
            "OpenAI reasoning models take an effort, not a token budget: use "
            f"Thinking(effort=...) {PORTABLE_HINT}",
        )
    return asked.effort


def _error(provider: str, message: str) -> ConfigurationError:
    return ConfigurationError(message, provider=provider, option="thinking")
