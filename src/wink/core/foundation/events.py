"""What a stream yields: the model's output as it arrives, and the loop's progress.

One round is one provider request and the tools it asked for. Its events come in this
order: `TextDelta` / `ThinkingDelta` / `ToolCallStarted` / `ToolCallReady` as the
provider sends them, `UsageReported` when it reports usage, an `OutputRejected` when its
structured answer did not validate, then a `ToolInvoked` as each of the round's tools
finishes, then `RoundFinished`. A round the `RetryPolicy`
restarts after some of its events were yielded starts over after a `RoundRestarted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..prompting.session import OutputRejected, ToolInvoked
from .errors import ThrottleError
from .messages import FinishReason, Usage

__all__ = [
    "EventSink",
    "RoundFinished",
    "RoundRestarted",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "UsageReported",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text; the pieces of a round join to its text."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's reasoning (Anthropic thinking, a Responses reasoning
    summary, Gemini thought parts, a compatible server's `reasoning`), never part of the
    answer. `signature` carries Anthropic's `signature_delta` (with empty `text`)."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call; its arguments follow (`ToolCallReady`).

    `index` is the call's position in the round (0, 1, ...), which also tells apart
    parallel calls whose fragments arrive interleaved.
    """

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call is complete. `arguments` is the decoded JSON object, or the raw text
    when it is not one (the tool then fails with a message the model reads)."""

    index: int
    id: str
    name: str
    arguments: Mapping[str, Any] | str


@dataclass(frozen=True, slots=True)
class UsageReported:
    """The provider reported the round's token usage."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class RoundFinished:
    """A round ended: the model's turn is complete and its tools (if any) have run.

    `usage` is the round's; `tool_calls` how many calls it made (0 for the final round).
    """

    round: int
    finish_reason: FinishReason
    usage: Usage
    tool_calls: int


@dataclass(frozen=True, slots=True)
class RoundRestarted:
    """The round failed after some of its events were yielded and is sent again.

    Everything this round yielded before is void: drop its text, thinking and tool
    calls. `error` is the failure (retry-safe, `details.attempts` counted); raise it
    to stop instead. `attempt` is the attempt that starts now (2 for the first retry).
    """

    round: int
    attempt: int
    error: ThrottleError


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | ToolCallReady
    | UsageReported
    | RoundFinished
    | RoundRestarted
    | ToolInvoked
    | OutputRejected
)
"""What `adapter.stream()` and `stream_async()` yield (docs/streaming.md)."""


class EventSink(Protocol):
    """Where the loop and a streamed round put events (`wink.core.agent.stream.EventQueue`).

    `send` queues a batch, waiting while the consumer is that far behind (backpressure:
    a round's body is not read faster than the caller takes its events); `put` queues
    without waiting (for callbacks); `count` is how many events were queued so far.
    """

    count: int

    def put(self, events: list[StreamEvent]) -> None: ...

    async def send(self, events: list[StreamEvent]) -> None: ...
