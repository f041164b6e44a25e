"""`thinking=` as Gemini's `thinkingConfig`, and which Gemini models take which form
(docs/reasoning.md)."""

from __future__ import annotations

import re
from typing import Any

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.settings import PORTABLE_HINT, ModelSettings

__all__ = ["gemini_thinking_config"]


# --- Gemini

# Gemini 2.5 takes a token budget only, Gemini 3 a level (or a budget); 2.0 and 1.x, and
# the Gemma models before 4, do not think.
_GEMINI_BUDGET_ONLY = re.compile(r"^(models/)?gemini-2\.5")
_GEMINI_NO_THINKING = re.compile(r"^(models/)?(gemini-(1\.|2\.0)(?!.*thinking)|gemma-[123])")
_GEMINI_LEVELS = {"low": "LOW", "medium": "MEDIUM", "high": "HIGH"}


def gemini_thinking_config(model: str, settings: ModelSettings) -> dict[str, Any]:
    """`generationConfig.thinkingConfig`: `thinkingLevel` from an effort where the model
    takes one, else `thinkingBudget`; `includeThoughts` to show the thinking."""
    asked = settings.thinking
    if asked is None:
        return {}
    if _GEMINI_NO_THINKING.search(model):
        raise _error(f"{model} does not think: remove thinking=")
    budget_only = _GEMINI_BUDGET_ONLY.search(model) is not None
    if asked.effort is not None and not budget_only:
        config: dict[str, Any] = {"thinkingLevel": _GEMINI_LEVELS[asked.effort]}
    elif asked.budget_tokens is not None:
        config = {"thinkingBudget": asked.budget_tokens}
    else:
        raise _error(
            f"{model} takes a thinking budget, not an effort: use Thinking(budget_tokens=...) "
            f"{PORTABLE_HINT}",
        )
    if asked.show:
        config["includeThoughts"] = True
    return config


def _error(message: str) -> ConfigurationError:
    return ConfigurationError(message, provider="google", option="thinking")
