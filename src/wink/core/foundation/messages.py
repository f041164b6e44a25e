"""The neutral transcript every adapter translates to and from.

Adapters see only these values: a `ModelRequest` going out, a `ModelResponse` coming
back. Nothing here knows a provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .builtin import BuiltinTool, BuiltinToolCall, Citation
from .content import Attachment, CachePoint, TextPart, UserPart

if TYPE_CHECKING:
    from .cost import Cost, PriceTag
    from .limits import Deadline

__all__ = [
    "AssistantMessage",
    "FinishReason",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "NativeOutput",
    "OUTPUT_TOOL_PREFIX",
    "OutputSpec",
    "RateLimitInfo",
    "SystemMessage",
    "ThinkingPart",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "is_output_tool",
    "output_tool_spec",
]

FinishReason = Literal[
    "stop", "tool_calls", "length", "content_filter", "refusal", "error", "paused", "other"
]
"""Why a response ended. `paused`: the provider stopped a long turn part-way (Anthropic
`pause_turn`, while its server tools work); the loop sends the turn back unchanged and
asks again. `error`: the provider answered with a failure; calls in it are never run."""


def _cost_sum(first: float | None, second: float | None) -> float | None:
    if first is None:
        return second
    return first if second is None else first + second


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts; adding two gives the sum (accumulated across requests).

    One rule on every provider: `input_tokens` counts the whole prompt, however it was
    billed, so it includes `cached_tokens` (read from the prompt cache) and
    `cache_write_tokens` (written to it: Anthropic's `cache_creation_input_tokens`,
    OpenAI's `cache_write_tokens`; Gemini reports none). Likewise `output_tokens`
    includes `reasoning_tokens` (the tokens spent thinking are billed as output).
    `cache_write_1h_tokens` is the part of `cache_write_tokens` written for an hour
    (Anthropic's `ttl: "1h"`, billed higher than the 5-minute writes).

    `billed_cost` is what the host itself billed for the request, in USD, when its answer
    says (OpenRouter's `usage.cost`); None when it does not. It is the sum of what was
    reported: a request that reported none adds nothing. What the counts cost in money is
    `PromptResponse.cost` (and each round's `cost`): a `Cost`, priced by genai-prices
    (docs/cost.md).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    billed_cost: float | None = None
    """What the host billed for the request, where it says (OpenRouter's `usage.cost`, in
    its credits); None: it did not say."""
    web_search_requests: int = 0
    """The web searches the provider ran and bills apart from tokens (Anthropic's
    `server_tool_use.web_search_requests`; OpenAI's `tool_usage.web_search.num_requests`,
    else its `web_search_call` items that searched; Gemini's grounded answers' queries)."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            requests=self.requests + other.requests,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            billed_cost=_cost_sum(self.billed_cost, other.billed_cost),
            web_search_requests=self.web_search_requests + other.web_search_requests,
        )


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user turn: a text, or parts in order (text, attachments, cache points)."""

    content: str | tuple[UserPart, ...]

    @property
    def parts(self) -> tuple[UserPart, ...]:
        """The turn as parts (a text turn is one `TextPart`)."""
        content = self.content
        return (TextPart(content),) if isinstance(content, str) else content

    @property
    def has_attachments(self) -> bool:
        """Whether the turn carries an image, a document or an audio (else text alone,
        perhaps with cache points)."""
        content = self.content
        return not isinstance(content, str) and any(
            not isinstance(part, TextPart | CachePoint) for part in content
        )

    @property
    def text(self) -> str:
        """The turn's text, its text parts joined by a blank line."""
        content = self.content
        if isinstance(content, str):
            return content
        return "\n\n".join(part.text for part in content if isinstance(part, TextPart))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for.

    `arguments` is what the provider sent: a JSON string (OpenAI, possibly invalid JSON)
    or an already-decoded object (Anthropic, Gemini). `provider_data` carries opaque
    values an adapter must echo back (e.g. Gemini's `thoughtSignature`).
    """

    id: str
    name: str
    arguments: str | Mapping[str, Any]
    provider_data: Mapping[str, Any] | None = None

    def arguments_json(self) -> str:
        """The arguments as a JSON string, unchanged when they arrived as one."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Reasoning a model did before answering, tagged with the provider that produced it.

    `text` is the readable thinking (often a summary) when the provider shows it;
    `signature` the provider's proof that the block is its own (Anthropic); `redacted` the
    encrypted content it returns instead of text (Anthropic `redacted_thinking`, OpenAI
    `encrypted_content`); `raw` the provider's item as received. Thinking only ever goes
    back to the provider named by `provider` (an adapter's `provider`: "anthropic",
    "openai-responses", ...): every other translator drops it.
    """

    provider: str
    text: str | None = None
    signature: str | None = field(default=None, repr=False)
    redacted: str | None = field(default=None, repr=False)
    raw: Mapping[str, Any] | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class NativeOutput:
    """A model turn exactly as one provider returned it (Anthropic content blocks,
    Responses output items, Gemini parts, in order), so that provider gets it back as
    it requires: thinking blocks first and intact, reasoning items followed by the very
    items they led to. Other providers ignore it and rebuild the turn from text and calls.
    """

    provider: str
    items: tuple[Mapping[str, Any], ...] = field(repr=False)


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A model turn: its text and the tool calls it made, in the order it made them.

    `thinking` is the reasoning that came with the turn, in order; `native` the turn as
    its provider gave it. A translator uses either only when tagged with its own provider.
    `builtin_calls` are the provider's own tools it ran in the turn (web search, code
    execution: `wink.BuiltinToolCall`), `citations` the sources the text relies on.
    `origin` names what made the turn (the serving adapter's name, "anthropic:claude-..."):
    to any other, the turn is foreign and travels without its provider-bound data
    (`wink.core.foundation.portable`); None (unknown) is foreign to every adapter.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    provider_data: Mapping[str, Any] | None = None
    thinking: tuple[ThinkingPart, ...] = ()
    native: NativeOutput | None = None
    origin: str | None = None
    builtin_calls: tuple[BuiltinToolCall, ...] = ()
    citations: tuple[Citation, ...] = ()

    def thinking_for(self, provider: str) -> tuple[ThinkingPart, ...]:
        """The thinking parts `provider` produced (and may receive back)."""
        return tuple(part for part in self.thinking if part.provider == provider)

    def native_for(self, provider: str) -> NativeOutput | None:
        """The turn as `provider` gave it, if it was that provider's."""
        native = self.native
        return native if native is not None and native.provider == provider else None


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """A tool's outcome as the model will see it; `success=False` renders natively as an
    error. `attachments` are the parts the tool returned, after the text."""

    call_id: str
    name: str
    content: str
    success: bool = True
    attachments: tuple[Attachment, ...] = ()


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to the model: name, description and JSON schema of its parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The structured output the prompt asks for: a name and a JSON schema."""

    name: str
    schema: Mapping[str, Any]


OUTPUT_TOOL_PREFIX = "final_result_"


def output_tool_spec(output: OutputSpec) -> ToolSpec:
    """The structured output offered as a tool, for providers that take it best that way.

    A call to it is the final answer: its arguments are the output (see `is_output_tool`).
    """
    return ToolSpec(
        name=f"{OUTPUT_TOOL_PREFIX}{output.name}"[:64],
        description=f"Give the final answer as a {output.name}. Call this once, when done.",
        parameters=output.schema,
    )


def is_output_tool(name: str, output: OutputSpec | None) -> bool:
    return output is not None and name == output_tool_spec(output).name


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request of the loop, provider-neutral."""

    prompt_name: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    output: OutputSpec | None = None
    deadline: Deadline | None = None  # read at send time: retries and pacing take time too
    first_round: bool = True  # False from an evaluation's second round on (`tool_choice`)
    builtin_tools: tuple[BuiltinTool, ...] = ()  # run by the provider (`wink.WebSearch`)


@dataclass(frozen=True, slots=True)
class RateLimitInfo:
    """Rate-limit state the provider reported on a response (None where not sent).

    `reset_requests` is seconds until the request allowance is full again. `reset_is_time`
    says it was sent as a clock time (Anthropic) rather than a duration (OpenAI): counted
    from when the answer was read, it is short by the answer's trip back.
    """

    limit_requests: int | None = None
    remaining_requests: int | None = None
    reset_requests: float | None = None
    reset_is_time: bool = False


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One provider response, parsed: text, tool calls, usage and why it stopped.

    `refusal` is the provider's own words when the model declined (OpenAI's
    `message.refusal` or `refusal` content part, Anthropic's `stop_details.explanation`),
    apart from `text`, which holds only what the model answered before it stopped.

    `model` is the model that answered, as the answer names it (a dated snapshot of the
    one asked for, an Azure deployment's model), `service_tier` the tier the answer says
    it ran on (OpenAI's and Gemini's `flex`, `priority`); None where the answer does not
    say. Both set its price: `cost` (docs/cost.md), worked out when first read.
    """

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    provider_data: Mapping[str, Any] | None = None
    rate_limit: RateLimitInfo | None = None
    raw: Mapping[str, Any] | None = field(default=None, repr=False)
    thinking: tuple[ThinkingPart, ...] = ()
    native: NativeOutput | None = None
    refusal: str | None = None
    origin: str | None = None  # set by the runner that got it (`AssistantMessage.origin`)
    builtin_calls: tuple[BuiltinToolCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    model: str | None = None
    service_tier: str | None = None
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        """What this answer cost; None when it cannot be priced (docs/cost.md)."""
        tag = self.price_tag
        return tag.cost if tag is not None else None

    @property
    def thinking_text(self) -> str | None:
        """The readable thinking of this response, parts joined by a blank line; None
        when the provider showed none."""
        texts = [part.text for part in self.thinking if part.text]
        return "\n\n".join(texts) if texts else None

    def to_message(self) -> AssistantMessage:
        return AssistantMessage(
            text=self.text,
            tool_calls=self.tool_calls,
            provider_data=self.provider_data,
            thinking=self.thinking,
            native=self.native,
            origin=self.origin,
            builtin_calls=self.builtin_calls,
            citations=self.citations,
        )
