"""Scripted model turns: what the emulated model answers, independent of the wire format."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack

__all__ = ["EmulatedToolCall", "EmulatedUsage", "Finish", "Turn", "UsageFields"]

Finish = Literal["stop", "length", "content_filter", "refusal"]
"""Why the turn ended; each wire format maps it to its native reason (see docs/testing.md)."""


class UsageFields(TypedDict, total=False):
    """Keyword arguments the `Turn` constructors accept for token counts."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int


@dataclass(frozen=True, slots=True)
class EmulatedUsage:
    """Token counts of one turn.

    `input_tokens` includes `cached_tokens` and `output_tokens` includes `reasoning_tokens`
    (OpenAI's convention); each wire format splits them the way that provider reports them.
    """

    input_tokens: int = 10
    output_tokens: int = 5
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class EmulatedToolCall:
    """One tool call the model makes; a `str` `arguments` is sent raw (it may be broken JSON)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict[str, Any])
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments as OpenAI sends them: one compact JSON string, or the raw text."""
        if isinstance(self.arguments, str):
            return self.arguments
        text = json.dumps(self.arguments, separators=(",", ":"), ensure_ascii=False)
        try:
            text.encode()
        except UnicodeEncodeError:  # a lone surrogate: only its escaped form is valid JSON text
            return json.dumps(self.arguments, separators=(",", ":"))
        return text


@dataclass(frozen=True, slots=True)
class Turn:
    """One answer of the emulated model: text and/or tool calls, usage and a finish reason.

    Build it with `Turn.text`, `Turn.tool_calls`, `Turn.json` or `Turn.refusal`; the
    attributes are `content` and `calls` because `text`/`tool_calls` name the constructors.
    """

    content: str | None = None
    calls: tuple[EmulatedToolCall, ...] = ()
    usage: EmulatedUsage = field(default_factory=EmulatedUsage)
    finish: Finish = "stop"

    @classmethod
    def text(cls, text: str, *, finish: Finish = "stop", **usage: Unpack[UsageFields]) -> Turn:
        """A plain text answer."""
        return cls(content=text, usage=EmulatedUsage(**usage), finish=finish)

    @classmethod
    def tool_calls(
        cls,
        *calls: EmulatedToolCall,
        text: str | None = None,
        finish: Finish = "stop",
        **usage: Unpack[UsageFields],
    ) -> Turn:
        """A turn that calls one or more tools (kept in order), optionally with some text."""
        if not calls:
            raise ValueError("Turn.tool_calls needs at least one EmulatedToolCall")
        return cls(content=text, calls=calls, usage=EmulatedUsage(**usage), finish=finish)

    @classmethod
    def json(cls, value: Any, *, finish: Finish = "stop", **usage: Unpack[UsageFields]) -> Turn:
        """A structured-output answer: a text turn whose text is `value` as JSON."""
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return cls(content=text, usage=EmulatedUsage(**usage), finish=finish)

    @classmethod
    def refusal(
        cls, text: str = "I'm sorry, but I can't help with that.", **usage: Unpack[UsageFields]
    ) -> Turn:
        """The model declines to answer (`finish="refusal"`)."""
        return cls(content=text, usage=EmulatedUsage(**usage), finish="refusal")
