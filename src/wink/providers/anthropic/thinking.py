"""`thinking=` as Claude's request fields, and which Claude models take which form
(docs/reasoning.md): a model known not to take the form asked is a `ConfigurationError`
when its adapter is built; a name matching no rule is sent what was asked."""

from __future__ import annotations

import re
from typing import Any

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.settings import PORTABLE_HINT, ModelSettings

__all__ = ["anthropic_thinking"]


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
        raise _error(f"{model} does not think: remove thinking=")
    fields: dict[str, Any] = {}
    if asked.effort is not None and adaptive:
        config: dict[str, Any] = {"type": "adaptive"}
        fields["output_config"] = {"effort": asked.effort}
    elif asked.budget_tokens is not None and budget:
        config = {"type": "enabled", "budget_tokens": _claude_budget(asked.budget_tokens, settings)}
    elif asked.effort is not None:
        raise _error(
            f"{model} takes a thinking budget, not an effort: use Thinking(budget_tokens=...) "
            f"{PORTABLE_HINT}",
        )
    else:
        raise _error(
            f"{model} takes an effort (adaptive thinking), not a token budget: use "
            f"Thinking(effort=...) {PORTABLE_HINT}",
        )
    if asked.show:
        config["display"] = "summarized"
    temperature, top_p = settings.temperature, settings.top_p
    if temperature is not None and temperature != 1:
        raise _error("Anthropic takes no temperature other than 1 with thinking on")
    if top_p is not None and not 0.95 <= top_p <= 1:
        raise _error("Anthropic takes top_p only between 0.95 and 1 with thinking on")
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
            f"Anthropic's thinking budget is at least {_ANTHROPIC_MIN_BUDGET} tokens, got {budget}",
        )
    if settings.max_tokens is not None and settings.max_tokens <= budget:
        raise _error(
            f"max_tokens ({settings.max_tokens}) must be above the thinking budget ({budget}): "
            "thinking tokens count toward it",
        )
    return budget


def _error(message: str) -> ConfigurationError:
    return ConfigurationError(message, provider="anthropic", option="thinking")
