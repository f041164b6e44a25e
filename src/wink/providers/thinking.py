"""`thinking=` as each provider's own request fields, and which models take which form.

One place for the per-model rules (docs/reasoning.md), so the four translators agree: a
model known not to take the form asked is a `ConfigurationError` (`option="thinking"`)
when its adapter is built; a name matching no rule is sent what was asked, and the API
decides.
"""

from __future__ import annotations

import re
from typing import Any

from ..adapters.options import ModelSettings
from ..core.foundation.errors import ConfigurationError

__all__ = ["anthropic_thinking", "gemini_thinking_config", "openai_reasoning_effort"]

_PORTABLE = "(give both to stay portable)"

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
            f"Thinking(effort=...) {_PORTABLE}",
        )
    return asked.effort


# --- Anthropic

_ANTHROPIC_MIN_BUDGET = 1024  # the API's minimum `budget_tokens`
# Adaptive thinking (with an effort) from Claude 4.6; a token budget up to 4.6.
_ADAPTIVE_ONLY = re.compile(r"claude-(opus-4-7|mythos)")
_ADAPTIVE_OR_BUDGET = re.compile(r"claude-(opus|sonnet)-4-6")
_BUDGET_ONLY = re.compile(
    r"claude-(3-7-sonnet|(opus|sonnet)-4(-[015])?(-\d{8}|-latest|@|-v\d|$)|haiku-4-5)"
)
_CLAUDE_NO_THINKING = re.compile(r"claude-(3-(5-)?(sonnet|haiku|opus)|instant|2)")


def anthropic_thinking(model: str, settings: ModelSettings) -> dict[str, Any]:
    """`thinking` (and `output_config.effort` for adaptive thinking) for the setting; an
    effort where the model takes adaptive thinking, else a budget. Also refuses what the
    API documents it refuses with thinking on (a small budget, a temperature)."""
    asked = settings.thinking
    if asked is None:
        return {}
    adaptive, budget = _claude_thinking_kinds(model)
    if not adaptive and not budget:
        raise _error("anthropic", f"{model} does not think: remove thinking=")
    fields: dict[str, Any] = {}
    if asked.effort is not None and adaptive:
        config: dict[str, Any] = {"type": "adaptive"}
        fields["output_config"] = {"effort": asked.effort}
    elif asked.budget_tokens is not None and budget:
        config = {"type": "enabled", "budget_tokens": _claude_budget(asked.budget_tokens, settings)}
    elif asked.effort is not None:
        raise _error(
            "anthropic",
            f"{model} takes a thinking budget, not an effort: use Thinking(budget_tokens=...) "
            f"{_PORTABLE}",
        )
    else:
        raise _error(
            "anthropic",
            f"{model} takes an effort (adaptive thinking), not a token budget: use "
            f"Thinking(effort=...) {_PORTABLE}",
        )
    if asked.show:
        config["display"] = "summarized"
    temperature, top_p = settings.temperature, settings.top_p
    if temperature is not None and temperature != 1:
        raise _error("anthropic", "Anthropic takes no temperature other than 1 with thinking on")
    if top_p is not None and not 0.95 <= top_p <= 1:
        raise _error("anthropic", "Anthropic takes top_p only between 0.95 and 1 with thinking on")
    return {"thinking": config, **fields}


def _claude_thinking_kinds(model: str) -> tuple[bool, bool]:
    """(takes adaptive thinking, takes a token budget), from the model's name."""
    if _ADAPTIVE_ONLY.search(model):
        return True, False
    if _ADAPTIVE_OR_BUDGET.search(model):
        return True, True
    if _BUDGET_ONLY.search(model):
        return False, True
    if _CLAUDE_NO_THINKING.search(model):
        return False, False
    return True, True


def _claude_budget(budget: int, settings: ModelSettings) -> int:
    if budget < _ANTHROPIC_MIN_BUDGET:
        raise _error(
            "anthropic",
            f"Anthropic's thinking budget is at least {_ANTHROPIC_MIN_BUDGET} tokens, got {budget}",
        )
    if settings.max_tokens is not None and settings.max_tokens <= budget:
        raise _error(
            "anthropic",
            f"max_tokens ({settings.max_tokens}) must be above the thinking budget ({budget}): "
            "thinking tokens count toward it",
        )
    return budget


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
        raise _error("google", f"{model} does not think: remove thinking=")
    budget_only = _GEMINI_BUDGET_ONLY.search(model) is not None
    if asked.effort is not None and not budget_only:
        config: dict[str, Any] = {"thinkingLevel": _GEMINI_LEVELS[asked.effort]}
    elif asked.budget_tokens is not None:
        config = {"thinkingBudget": asked.budget_tokens}
    else:
        raise _error(
            "google",
            f"{model} takes a thinking budget, not an effort: use Thinking(budget_tokens=...) "
            f"{_PORTABLE}",
        )
    if asked.show:
        config["includeThoughts"] = True
    return config


def _error(provider: str, message: str) -> ConfigurationError:
    return ConfigurationError(message, provider=provider, option="thinking")
