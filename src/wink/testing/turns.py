"""Scripted model turns: what the emulated model answers, independent of the wire format."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, Unpack, cast

from ..core.foundation.checks import kind_of
from ..core.foundation.errors import ConfigurationError, InvalidArgumentError
from .builtin import BuiltinRun, EmulatedCitation, builtin_runs
from .history import HistoryEntry

__all__ = [
    "EmulatedThinking",
    "EmulatedToolCall",
    "EmulatedUsage",
    "ExpectationFailed",
    "Finish",
    "ThinkingInput",
    "Turn",
    "UsageFields",
]

Finish = Literal["stop", "length", "content_filter", "refusal", "pause"]
"""Why the turn ended; each wire format maps it to its native reason (see docs/testing.md).
`pause` is Anthropic's `pause_turn` (other wires answer it as `stop`)."""


class ExpectationFailed(AssertionError):
    """A request did not carry what its turn expects (`Turn.expecting`,
    `Turn.expecting_history`): the code under test's failure, reported as an internal
    error of the emulator with the source `expectation`."""


class UsageFields(TypedDict, total=False):
    """Keyword arguments the `Turn` constructors accept for token counts."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cache_write_tokens: int


@dataclass(frozen=True, slots=True)
class EmulatedUsage:
    """Token counts of one turn.

    `input_tokens` includes `cached_tokens` and `cache_write_tokens`, `output_tokens`
    includes `reasoning_tokens` (wink's `Usage` rule); each wire format splits them the way
    that provider reports them. With neither cache count given, the emulated prompt cache
    fills them in (docs/testing.md).
    """

    input_tokens: int = 10
    output_tokens: int = 5
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0


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
class EmulatedThinking:
    """Thinking the emulated model does before it answers (docs/reasoning.md).

    Anthropic sends a `thinking` block with a signature (`redacted=True`: a
    `redacted_thinking` block, text hidden); Responses a `reasoning` item (summary when
    asked, encrypted content when included); Gemini a thought signature, and thought
    parts when `includeThoughts` is on; Chat Completions nothing on OpenAI's own path
    (OpenAI shows none), the host's field on a compatible host's (`EmulatedHost`).
    """

    text: str = "Let me think about this."
    redacted: bool = False


ThinkingInput = str | EmulatedThinking | Sequence[str | EmulatedThinking] | None
"""What the `Turn` constructors take as `thinking=`: one text or part, or several."""


def _strings(values: tuple[str, ...], method: str, what: str) -> tuple[str, ...]:
    """What a `Turn.expecting*` method takes: strings, checked."""
    for value in values:
        if not isinstance(cast(object, value), str):
            raise InvalidArgumentError(
                f"Turn.{method} takes {what}, got {kind_of(value)}",
                argument="parts" if method == "expecting" else "history",
            )
    return values


def _thinking(value: ThinkingInput) -> tuple[EmulatedThinking, ...]:
    if value is None:
        return ()
    given = cast(object, value)
    items = [given] if isinstance(given, str | EmulatedThinking) else given
    if not isinstance(items, list | tuple):
        raise InvalidArgumentError(
            f"thinking= takes a text, an EmulatedThinking or a list of them, got {kind_of(given)}",
            argument="thinking",
        )
    parts: list[EmulatedThinking] = []
    for item in cast(list[object], items):
        if not isinstance(item, str | EmulatedThinking):
            raise InvalidArgumentError(
                f"thinking= parts are texts or EmulatedThinking, got {kind_of(item)}",
                argument="thinking",
            )
        parts.append(EmulatedThinking(item) if isinstance(item, str) else item)
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Turn:
    """One answer of the emulated model: text and/or tool calls, usage and a finish reason.

    Build it with `Turn.text`, `Turn.tool_calls`, `Turn.json` or `Turn.refusal`; the
    attributes are `content` and `calls` because `text`/`tool_calls` name the constructors.
    `ran` are the provider-side tools it runs first (`EmulatedSearch`, `EmulatedCodeRun`),
    `citations` the sources its text cites (`EmulatedCitation`).
    `expect_parts` (set with `expecting`) is what the request must carry to be answered;
    `expect_history` (set with `expecting_history`), the conversation it must carry.
    """

    content: str | None = None
    calls: tuple[EmulatedToolCall, ...] = ()
    usage: EmulatedUsage = field(default_factory=EmulatedUsage)
    finish: Finish = "stop"
    thinking: tuple[EmulatedThinking, ...] = ()
    expect_parts: tuple[str, ...] | None = None
    expect_history: tuple[str, ...] | None = None
    ran: tuple[BuiltinRun, ...] = ()
    citations: tuple[EmulatedCitation, ...] = ()

    def expecting(self, *parts: str) -> Turn:
        """This turn, answered only to a request whose images, documents and audio are
        `parts`, in order: each the part's media type (its URL where the wire names no
        type); `expecting()` asserts there are none. A request that differs is an
        internal error of the emulator (418), which fails the test (docs/testing.md)."""
        return replace(self, expect_parts=_strings(parts, "expecting", "media types (str)"))

    def expecting_history(self, *history: str) -> Turn:
        """This turn, answered only to a request whose conversation reads as `history`: one
        line per step, as `str(HistoryEntry)` writes it (`"user: Hi"`, `"assistant:
        Hello"`, `"call get_weather: {\"city\":\"Paris\"}"`, `"result get_weather: sunny"`,
        `"error get_weather: ..."`), instructions apart. A request that carries another
        is an internal error of the emulator (418) naming the first step that differs,
        which fails the test (docs/testing.md)."""
        lines = _strings(history, "expecting_history", "lines of text")
        return replace(self, expect_history=lines)

    def check_parts(self, received: tuple[str, ...]) -> None:
        """Raise `ExpectationFailed` when the request's parts are not the expected ones."""
        if self.expect_parts is not None and received != self.expect_parts:
            raise ExpectationFailed(
                f"the turn expected the parts {list(self.expect_parts)}, the request "
                f"carried {list(received)}"
            )

    def check_history(self, history: Sequence[HistoryEntry]) -> None:
        """Raise `ExpectationFailed` unless the request's history reads as expected,
        naming the first step that differs."""
        expected = self.expect_history
        if expected is None:
            return
        got = [str(entry) for entry in history]
        if got == list(expected):
            return
        pairs = zip(expected, got, strict=False)
        first = next((i for i, (want, have) in enumerate(pairs) if want != have), None)
        first = min(len(expected), len(got)) if first is None else first
        want = expected[first] if first < len(expected) else "(nothing more)"
        have = got[first] if first < len(got) else "(nothing more)"
        raise ExpectationFailed(
            f"step {first} of the history is {have!r}, the turn expects {want!r} "
            f"(expected {len(expected)} steps, got {len(got)}: {got!r})"
        )

    @classmethod
    def text(
        cls,
        text: str,
        *,
        thinking: ThinkingInput = None,
        finish: Finish = "stop",
        ran: Sequence[BuiltinRun] = (),
        citations: Sequence[EmulatedCitation] = (),
        **usage: Unpack[UsageFields],
    ) -> Turn:
        """A plain text answer, after `thinking` if given, and after the provider-side
        tools it `ran`; `citations` tie parts of the text to web sources."""
        runs, cited = builtin_runs(ran, citations, text)
        return cls(
            content=text,
            usage=EmulatedUsage(**usage),
            finish=finish,
            thinking=_thinking(thinking),
            ran=runs,
            citations=cited,
        )

    @classmethod
    def tool_calls(
        cls,
        *calls: EmulatedToolCall,
        text: str | None = None,
        thinking: ThinkingInput = None,
        finish: Finish = "stop",
        **usage: Unpack[UsageFields],
    ) -> Turn:
        """A turn that calls one or more tools (kept in order), optionally with some text,
        after `thinking` if given."""
        if not calls:
            raise ConfigurationError(
                "Turn.tool_calls needs at least one EmulatedToolCall", option="calls"
            )
        return cls(
            content=text,
            calls=calls,
            usage=EmulatedUsage(**usage),
            finish=finish,
            thinking=_thinking(thinking),
        )

    @classmethod
    def paused(
        cls,
        text: str | None = None,
        *,
        thinking: ThinkingInput = None,
        **usage: Unpack[UsageFields],
    ) -> Turn:
        """Anthropic stops a long turn part-way (`pause_turn`) while a server tool (web
        search) works: the content ends with its `server_tool_use` and result blocks, and
        the client must send the turn back unchanged. Other wires answer it as `stop`."""
        return cls(
            content=text, usage=EmulatedUsage(**usage), finish="pause", thinking=_thinking(thinking)
        )

    @classmethod
    def json(cls, value: Any, *, finish: Finish = "stop", **usage: Unpack[UsageFields]) -> Turn:
        """A structured-output answer: a text turn whose text is `value` as JSON."""
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise InvalidArgumentError(
                f"Turn.json(value=...) takes a JSON value, got {kind_of(value)}: {error}",
                argument="value",
            ) from error
        return cls(content=text, usage=EmulatedUsage(**usage), finish=finish)

    @classmethod
    def refusal(
        cls, text: str = "I'm sorry, but I can't help with that.", **usage: Unpack[UsageFields]
    ) -> Turn:
        """The model declines to answer (`finish="refusal"`)."""
        return cls(content=text, usage=EmulatedUsage(**usage), finish="refusal")
