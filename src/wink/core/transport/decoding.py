"""What every wire format's stream decoder shares, and the reading of one streamed round.

A wire format says how its body is framed (`Framing`: SSE for most, AWS event-stream
binary frames for Bedrock); a decoder turns the frames of one round into stream events
as they arrive and, at the end, into the `ModelResponse` the provider's non-streaming
parser would have made of the same answer: it rebuilds the non-streaming body and hands
it to that parser, so a streamed round and an evaluated one cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, cast

from ..foundation.errors import PromptEvaluationError, ThrottleDetails, ThrottleError
from ..foundation.events import (
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from ..foundation.messages import ModelResponse, ToolCall
from .errors import MalformedResponse, StatusFacts, error_from_facts
from .sse import SSEDecoder

__all__ = [
    "Frame",
    "Framing",
    "Parse",
    "SSEFramed",
    "StreamDecoder",
    "StreamFormat",
    "ToolCalls",
    "decode_json",
    "events_of",
    "keep_identity",
    "stream_failure",
    "truncated",
]


Frame = tuple[str, str | bytes]
"""One framed event: its name and its JSON payload (text or UTF-8 bytes)."""


class Framing(Protocol):
    """How a streamed body is cut into events: `feed` each piece as it arrives, `close`
    at the end; each returns the frames completed. A frame that fails its own checks
    raises a `ValueError` (the round fails in its response phase). `foreign` is the first
    text that is not of the framing at all (an HTML error page on a 200), if any: a body
    cut short that was never the framing is malformed, not truncated."""

    foreign: str | None

    def feed(self, piece: bytes, /) -> Sequence[Frame]: ...

    def close(self) -> Sequence[Frame]: ...


class StreamDecoder(Protocol):
    """One round of one wire format: framed events in, stream events and a response out.

    Core reads the frames and decodes each event's JSON object (a `ValueError` when it is
    not one); `end_marker` names the data, not JSON, that some formats end with (OpenAI
    Chat Completions' `[DONE]`), handed to `feed` as None.
    """

    end_marker: str | None

    @property
    def usage_reported(self) -> bool:
        """Whether the stream carried usage (a `UsageReported` is then sent)."""
        ...

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent], /) -> None:
        """Read one event (its name, its JSON object; None: the end marker),
        appending what it says to `out`. Raises a `WinkError` for an error event, a
        `ValueError` for what is not the documented shape."""
        ...

    def finish(self) -> ModelResponse:
        """The round's response, once the body has ended. Raises `truncated(...)` when
        the terminal event never came."""
        ...


Parse = Callable[[Any], ModelResponse]
"""A provider's parser of a whole (non-streamed) answer body."""


class StreamFormat(Protocol):
    """How a wire format streams: the request's streaming form, how its body is framed,
    and a decoder per round."""

    def framing(self) -> Framing:
        """A new framing for one round's body (`SSEDecoder()` for server-sent events)."""
        ...

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        """The (path, body) that asks for a stream, from the non-streaming ones."""
        ...

    def decoder(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> StreamDecoder:
        """A decoder for one round; `parse` is the provider's parser of a whole answer,
        which the decoder hands the body it rebuilt."""
        ...


class SSEFramed:
    """A `StreamFormat` whose body is server-sent events (every wire but Bedrock's)."""

    __slots__ = ()

    def framing(self) -> Framing:
        return SSEDecoder()


# --- failures in the stream


def stream_failure(
    prompt_name: str, facts: StatusFacts, secrets: tuple[str, ...]
) -> PromptEvaluationError:
    """An error event, classified as `evaluate` classifies the same answer: `facts` are
    what the wire's error reader made of it (a mid-stream `overloaded_error` is the 529
    it stands for, a context window exceeded is one whichever way it came)."""
    return error_from_facts(facts, prompt_name=prompt_name, secrets=secrets)


def truncated(prompt_name: str, what: str) -> ThrottleError:
    """The body ended before the terminal event: a connection cut short, classified as
    `evaluate` classifies a dropped connection (retry-safe, kind `connection`)."""
    return ThrottleError(
        f"the stream ended before {what}: the answer is incomplete",
        prompt_name=prompt_name,
        details=ThrottleDetails(kind="connection", retry_safe=True),
    )


def decode_json(data: str | bytes) -> dict[str, Any]:
    """One event's JSON object; anything else is malformed (a `ValueError`)."""
    value = json.loads(data)
    if not isinstance(value, dict):
        raise MalformedResponse("a stream event is not a JSON object")
    return cast(dict[str, Any], value)


def keep_identity(chunk: Mapping[str, Any], keys: tuple[str, ...], kept: dict[str, Any]) -> None:
    """Copy the response's identity (its id, model...) from a chunk into `kept`, so the
    body a decoder rebuilds at the end says which response and model it was, as the
    whole body would have."""
    for key in keys:
        value = chunk.get(key)
        if value is not None:
            kept[key] = value


# --- tool calls assembled from fragments


class _Call:
    __slots__ = ("fragments", "id", "index", "key", "name", "ready")

    def __init__(self, key: object, index: int, call_id: str, name: str) -> None:
        self.key = key
        self.index = index
        self.id = call_id
        self.name = name
        self.fragments: list[str] = []
        self.ready = False


class ToolCalls:
    """Tool calls whose arguments arrive in fragments, keyed by the provider's index or
    id, so interleaved parallel calls assemble independently. Calls are numbered in the
    order they start."""

    __slots__ = ("_calls", "_order")

    def __init__(self) -> None:
        self._calls: dict[object, _Call] = {}
        self._order: list[_Call] = []

    def __contains__(self, key: object) -> bool:
        return key in self._calls

    def start(self, key: object, call_id: str, name: str, out: list[StreamEvent]) -> None:
        call = _Call(key, len(self._order), call_id, name)
        self._calls[key] = call
        self._order.append(call)
        out.append(ToolCallStarted(call.index, call_id, name))

    def get(self, key: object) -> _Call | None:
        return self._calls.get(key)

    def add(self, key: object, fragment: str, out: list[StreamEvent]) -> None:
        call = self._calls.get(key)
        if call is None:
            raise MalformedResponse("argument fragments for a tool call that never started")
        call.fragments.append(fragment)
        out.append(ToolCallDelta(call.index, fragment))

    def text(self, key: object) -> str:
        call = self._calls[key]
        return "".join(call.fragments)

    def ready(
        self,
        key: object,
        out: list[StreamEvent],
        arguments: str | Mapping[str, Any] | None = None,
    ) -> None:
        """Mark the call complete (once) and announce it with its decoded arguments
        (`arguments`, when given, replaces the fragments: the provider sent them whole)."""
        call = self._calls[key]
        if call.ready:
            return
        call.ready = True
        if arguments is None:
            arguments = "".join(call.fragments)
        shown = parsed_arguments(arguments) if isinstance(arguments, str) else arguments
        out.append(ToolCallReady(call.index, call.id, call.name, shown))

    def all_ready(self, out: list[StreamEvent]) -> None:
        for call in self._order:
            self.ready(call.key, out)

    def in_order(self) -> list[_Call]:
        return list(self._order)

    def __len__(self) -> int:
        return len(self._order)


def parsed_arguments(text: str) -> Mapping[str, Any] | str:
    """Arguments as `ToolCallReady` shows them: the object, `{}` for none, else the text."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return cast(dict[str, Any], value) if isinstance(value, dict) else text


# --- a round that was not streamed, told as a stream


def events_of(response: ModelResponse) -> list[StreamEvent]:
    """The events of a response that came whole (an adapter that cannot stream): its
    text in one `TextDelta`, its calls, its usage."""
    out: list[StreamEvent] = []
    if response.text:
        out.append(TextDelta(response.text))
    for index, call in enumerate(response.tool_calls):
        out.append(ToolCallStarted(index, call.id, call.name))
        out.append(ToolCallReady(index, call.id, call.name, _arguments(call)))
    if response.usage.total_tokens:
        out.append(UsageReported(response.usage, response.price_tag))
    return out


def _arguments(call: ToolCall) -> Mapping[str, Any] | str:
    arguments = call.arguments
    return parsed_arguments(arguments) if isinstance(arguments, str) else arguments
