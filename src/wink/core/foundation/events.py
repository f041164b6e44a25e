"""The events of an evaluation: what its session records, and what a stream yields.

A session gets `PromptRendered`, `ThinkingReceived`, `ToolInvoked`, `OutputRejected`,
`RequestRetried`, `AdapterSwitched`, `ApprovalRequired` (the evaluation stops for a
person), then `PromptExecuted` or `PromptFailed` (docs/sessions.md). A stream yields the
model's output as it arrives and the loop's progress (docs/streaming.md). One round is
one provider request and the tools it asked for. Its events come in this order:
`TextDelta` / `ThinkingDelta` / `ToolCallStarted` / `ToolCallDelta` / `ToolCallReady` /
`CitationDelta` as the provider sends them, each followed by an `OutputDelta` when it
grew the structured answer (a prompt with an `output_type`), `UsageReported` when it
reports usage, an `OutputRejected` when its structured answer did not validate, then a
`ToolInvoked` as each of the round's tools finishes, then `RoundFinished`. A round the `RetryPolicy`
restarts after some of its events were yielded starts over after a `RoundRestarted`. A
round whose calls wait for a person ends the stream with `ApprovalRequired`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .builtin import Citation
from .errors import EvaluationPhase, ThrottleError, ThrottleKind, WinkError
from .messages import FinishReason, Usage
from .results import ToolResult
from .transcript import PendingToolCall

if TYPE_CHECKING:
    from pydantic import ValidationError

    from .cost import Cost, PriceTag

__all__ = [
    "AdapterSwitched",
    "ApprovalRequired",
    "CitationDelta",
    "EventSink",
    "OutputDelta",
    "OutputRejected",
    "PromptExecuted",
    "PromptFailed",
    "PromptRendered",
    "RequestRetried",
    "ThinkingReceived",
    "ToolInvoked",
    "RoundFinished",
    "RoundRestarted",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "UsageReported",
]


# --- what a session records (each evaluation dispatches these)


@dataclass(frozen=True, slots=True)
class PromptRendered:
    """A prompt was rendered and is about to be sent."""

    prompt_name: str
    adapter: str
    text: str
    tool_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolInvoked:
    """A tool call ran; failures are recorded too (`result.success` False, `error` kept).

    `source` names the MCP server the tool came from (its `name`); None for a tool of
    this process."""

    prompt_name: str
    adapter: str
    name: str
    call_id: str
    params: Any
    result: ToolResult[Any]
    error: BaseException | None = None
    duration: float = 0.0
    source: str | None = None


@dataclass(frozen=True, slots=True)
class OutputRejected:
    """A structured answer of round `round` did not validate as the prompt's output type.

    `via` is how it came: "text" (the provider's JSON output) or "tool" (a call to the
    `final_result_*` output tool); `answer` is that text or the call's arguments.
    `problems` is what the model was told (`field: why; ...`), `error` pydantic's own.
    `attempt` counts the evaluation's rejected answers from 1: the model is asked again
    while it stays within `max_output_retries`, else the evaluation fails.
    """

    prompt_name: str
    adapter: str
    round: int
    attempt: int
    via: Literal["text", "tool"]
    answer: str
    problems: str
    error: ValidationError = field(repr=False)


@dataclass(frozen=True, slots=True)
class PromptExecuted:
    """An evaluation finished: with a final answer, or stopped for a person's approval
    (an `ApprovalRequired` came just before)."""

    prompt_name: str
    adapter: str
    text: str | None
    output: Any
    usage: Usage
    rounds: int
    thinking: str | None = None  # as `PromptResponse.thinking`
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        """What the evaluation cost (`PromptResponse.cost`)."""
        return _cost_of(self.price_tag)


@dataclass(frozen=True, slots=True)
class ThinkingReceived:
    """A response of round `round` came with readable thinking (where the provider shows
    it: see docs/reasoning.md), dispatched before its tool calls run."""

    prompt_name: str
    adapter: str
    round: int
    text: str


@dataclass(frozen=True, slots=True)
class RequestRetried:
    """A provider request was throttled and will be sent again after `wait`."""

    prompt_name: str
    adapter: str
    kind: ThrottleKind
    attempt: int  # the attempt that failed, counting from 1
    wait: timedelta
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class PromptFailed:
    """An evaluation ended with `error` (the exception raised to the caller) in `phase`."""

    prompt_name: str
    adapter: str
    phase: EvaluationPhase | None
    error: WinkError
    rounds: int
    usage: Usage
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        """What the requests answered before the failure cost (None: one of them could
        not be priced)."""
        return _cost_of(self.price_tag)


@dataclass(frozen=True, slots=True)
class AdapterSwitched:
    """A `FallbackAdapter` moved the evaluation from one adapter to the next because of
    `error`: the failure it just had, or the one that opened its circuit earlier."""

    prompt_name: str
    from_adapter: str
    to_adapter: str
    error: WinkError


@dataclass(frozen=True, slots=True)
class ApprovalRequired:
    """The model called tools that wait for a person (`Tool(requires_approval=...)`): the
    round's other calls ran and the evaluation ends here, with these `calls` as
    `response.pending`. Resume with `history=response.transcript, approvals={...}`
    (docs/approvals.md). Recorded by the session and the last event of a stream."""

    prompt_name: str
    adapter: str
    round: int
    calls: tuple[PendingToolCall, ...]


# --- what a stream yields besides those


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
class ToolCallDelta:
    """A piece of the arguments of the call started at `index`, as JSON text; the pieces
    of a call join to its arguments. Wires that send a call whole (Gemini) send none."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call is complete. `arguments` is the decoded JSON object, or the raw text
    when it is not one (the tool then fails with a message the model reads)."""

    index: int
    id: str
    name: str
    arguments: Mapping[str, Any] | str


@dataclass(frozen=True, slots=True)
class OutputDelta:
    """The structured answer so far (a prompt with an `output_type`), validated with
    pydantic's partial JSON parsing: an instance of the output type whose last field,
    list item or string may be cut short, and whose missing fields hold their defaults.
    It grows with each one: a new field, item or more of a string. It comes from the
    JSON text of a native structured answer or from the arguments of the output tool
    (`final_result_*`), whichever the model answers with. Only `stream.response.output`
    is the checked answer: a round restarted or rejected (`RoundRestarted`,
    `OutputRejected`) voids the partials it showed, and the next round starts over."""

    partial: Any


@dataclass(frozen=True, slots=True)
class CitationDelta:
    """A citation of the answer arrived (Anthropic's `citations_delta`, and the like on
    other wires): the source and the place cited, as `response.citations` holds them.
    `citation.span` is set when the wire knows the part of the answer it supports as it
    arrives; Anthropic sends a citation before the text it supports, so it is None there.
    `stream.response.citations` holds every citation of the answer, spans included."""

    citation: Citation


@dataclass(frozen=True, slots=True)
class UsageReported:
    """The provider reported the round's token usage; `cost` is what the round cost
    (None when it cannot be priced: docs/cost.md), worked out when first read."""

    usage: Usage
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        return _cost_of(self.price_tag)


@dataclass(frozen=True, slots=True)
class RoundFinished:
    """A round ended: the model's turn is complete and its tools (if any) have run.

    `usage` is the round's; `tool_calls` how many calls it made (0 for the final round);
    `cost` what the round cost (as `UsageReported.cost`).
    """

    round: int
    finish_reason: FinishReason
    usage: Usage
    tool_calls: int
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        return _cost_of(self.price_tag)


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


def _cost_of(tag: PriceTag | None) -> Cost | None:
    return tag.cost if tag is not None else None


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallReady
    | OutputDelta
    | CitationDelta
    | UsageReported
    | RoundFinished
    | RoundRestarted
    | ToolInvoked
    | OutputRejected
    | ApprovalRequired
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
