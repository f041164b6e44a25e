"""A scripted turn as the providers stream it (SSE), and the faults that break a stream.

The turn is first rendered as the wire's whole answer (`WireFormat.render_turn`), so the
ids, usage, finish reason, thinking and signatures of the stream are those of the
non-streamed answer; the text, thinking and tool arguments are then cut into pieces of
`chunk_size` characters, one event each, framed as each provider frames them (Gemini
ends its events in `\\r\\n\\r\\n`). What a provider sends whole in a stream (an
Anthropic redacted thinking block or server tool result, a Gemini function call) is
sent whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from ..core.foundation.checks import a_number, a_whole_number
from .eventstream import event_frame
from .faults import Fault
from .formats import dump
from .records import Provider
from .turns import Turn
from .wire import WIRES, WireContext
from .wire.anthropic_citations import stream_text_start
from .wire.bedrock import bedrock_stream, stream_error

__all__ = [
    "NOT_JSON",
    "STREAM_FAULTS",
    "StreamPlan",
    "breaks_stream",
    "cut",
    "plan_stream",
    "split",
    "stream_settings",
    "without_stream",
]

STREAM_FAULTS = frozenset({"stream_error", "stream_reset", "stream_malformed", "stream_truncated"})
_MALFORMED = b'data: {"choices": [{"delta": {"content": "cut\n\n'
NOT_JSON = b"<html><head><title>502 Bad Gateway</title></head><body>upstream error</body></html>"
"""What a proxy in front of the API answers when it fails: a `not_json` fault's body."""


class StreamPlan:
    """What the server sends: the head, the events (one HTTP chunk each), and whether to
    reset the connection after `reset_after` of them."""

    __slots__ = ("events", "headers", "reset_after", "status")

    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        events: list[bytes],
        reset_after: int | None = None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.events = events
        self.reset_after = reset_after


def stream_settings(chunk_size: int, chunk_delay: float) -> tuple[int, float]:
    """The emulator's stream pace, checked: characters per event, seconds between."""
    size = a_whole_number(
        chunk_size, "stream_chunk_size (characters per event)", "chunk_size", minimum=1
    )
    delay = a_number(chunk_delay, "stream_chunk_delay (seconds)", "chunk_delay", minimum=0)
    return size, delay


def split(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (none for an empty text)."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def plan_stream(
    provider: Provider, turn: Turn, ctx: WireContext, chunk_size: int, fault: Fault | None = None
) -> StreamPlan:
    """The streamed answer for `turn`, broken as `fault` (a stream fault) says."""
    rendered = WIRES[provider].render_turn(turn, ctx)
    headers = dict(rendered.headers)
    if provider == "bedrock":
        headers["content-type"] = "application/vnd.amazon.eventstream"
    else:
        headers["content-type"] = "text/event-stream; charset=utf-8"
        headers["cache-control"] = "no-cache"
    body = cast(dict[str, Any], json.loads(rendered.body))
    events = _RENDERERS[provider](body, ctx, max(1, chunk_size), turn)
    if fault is None:
        return StreamPlan(200, headers, events)
    after = max(0, min(fault.after, len(events)))
    kind = fault.kind
    if kind == "stream_error":
        return StreamPlan(200, headers, [*events[:after], *error_events(provider, fault, ctx)])
    if kind == "stream_reset":
        return StreamPlan(200, headers, events, reset_after=after)
    if kind == "stream_malformed":
        broken = (
            corrupt_frame(events[min(after, len(events) - 1)])
            if provider == "bedrock"
            else _MALFORMED
        )
        return StreamPlan(200, headers, [*events[:after], broken, *events[after:]])
    if kind == "stream_truncated":
        return StreamPlan(200, headers, events[:after])
    if kind == "drop_connection":
        return StreamPlan(200, headers, events, reset_after=len(events) // 2)
    if kind == "non_json":
        return StreamPlan(200, {**headers, "content-type": "text/html"}, [NOT_JSON])
    if kind == "wrong_shape":
        return StreamPlan(200, headers, [_event(provider, fault.body or [1, 2, 3])])
    raise ValueError(f"{kind} is not a stream fault")


_STREAM_BREAKS = frozenset({*STREAM_FAULTS, "drop_connection", "non_json", "wrong_shape"})


def breaks_stream(fault: Fault) -> bool:
    """A fault that acts inside a streamed body (the others answer before it starts)."""
    return fault.kind in _STREAM_BREAKS


def without_stream(fault: Fault) -> Fault:
    """A stream fault hitting a request that does not stream: the fault it stands for."""
    if fault.kind == "stream_error":
        kind = fault.error_kind or "overloaded"
        if kind == "rate_limit":
            return Fault.rate_limit()
        if kind == "quota_exhausted":
            return Fault.quota_exhausted()
        if kind == "bad_request":
            return Fault.bad_request()
        if kind == "server_error":
            return Fault.server_error()
        return Fault.overloaded()
    if fault.kind == "stream_malformed":
        return Fault.non_json()
    return Fault.drop_connection()  # reset, truncated: the body is cut short


def cut(body: bytes, sizes: tuple[int, ...]) -> tuple[bytes, ...]:
    """`body` in pieces of the given sizes, used in turn until it is all out."""
    pieces: list[bytes] = []
    start = 0
    turn = 0
    while start < len(body):
        size = sizes[turn % len(sizes)]
        pieces.append(body[start : start + size])
        start += size
        turn += 1
    return tuple(pieces)


def _event(provider: Provider, value: Any, name: str | None = None) -> bytes:
    if provider == "bedrock":
        return event_frame(name or "messageStart", value)
    head = f"event: {name}\n".encode() if name else b""
    end = b"\r\n\r\n" if provider == "google" else b"\n\n"
    return head + b"data: " + dump(value) + end


# --- OpenAI Chat Completions


def _chat(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": body["created"],
        "model": body["model"],
        "service_tier": body.get("service_tier"),
        "system_fingerprint": body.get("system_fingerprint"),
    }
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        return _event("openai", {**base, "choices": choices})

    # The many text pieces share everything but the text: framed once, filled per piece.
    head, tail = dump(
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"content": "\0"}, "logprobs": None, "finish_reason": None}
            ],
        }
    ).split(b'"\\u0000"')
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if message.get("refusal"):
        events.extend(chunk({"refusal": piece}) for piece in split(message["refusal"], size))
    elif message.get("content"):
        events.extend(
            b"data: " + head + dump(piece) + tail + b"\n\n"
            for piece in split(message["content"], size)
        )
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        start = {"index": index, "id": call["id"], "type": "function"}
        events.append(
            chunk(
                {"tool_calls": [{**start, "function": {"name": function["name"], "arguments": ""}}]}
            )
        )
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in split(function["arguments"], size)
        )
    events.append(chunk({}, choice["finish_reason"]))
    options = ctx.body.get("stream_options")
    if isinstance(options, dict) and cast(dict[str, Any], options).get("include_usage"):
        events.append(_event("openai", {**base, "choices": [], "usage": body["usage"]}))
    events.append(b"data: [DONE]\n\n")
    return events


# --- OpenAI Responses


def _responses(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    sequence = iter(range(1_000_000_000))
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        value = {"type": kind, "sequence_number": next(sequence), **fields}
        events.append(_event("openai-responses", value, kind))

    opening: dict[str, Any] = {**body, "status": "in_progress", "output": [], "usage": None}
    opening["incomplete_details"] = None
    emit("response.created", response=opening)
    emit("response.in_progress", response=opening)
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            _responses_message(emit, index, item, size)
        elif item["type"] == "reasoning":
            _responses_reasoning(emit, index, item, size)
        else:
            _responses_call(emit, index, item, size)
    terminal = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    emit(terminal, response=body)
    return events


def _responses_message(
    emit: Callable[..., None], index: int, item: dict[str, Any], size: int
) -> None:
    item_id = item["id"]
    emit(
        "response.output_item.added",
        output_index=index,
        item={**item, "status": "in_progress", "content": []},
    )
    for position, part in enumerate(item["content"]):
        where = {"item_id": item_id, "output_index": index, "content_index": position}
        refusal = part["type"] == "refusal"
        empty = {"type": "refusal", "refusal": ""} if refusal else {**part, "text": ""}
        emit("response.content_part.added", **where, part=empty)
        text = part["refusal"] if refusal else part["text"]
        kind = "response.refusal" if refusal else "response.output_text"
        for piece in split(text, size):
            extra: dict[str, Any] = {} if refusal else {"logprobs": []}
            emit(f"{kind}.delta", **where, delta=piece, **extra)
        emit(f"{kind}.done", **where, **({"refusal": text} if refusal else {"text": text}))
        emit("response.content_part.done", **where, part=part)
    emit("response.output_item.done", output_index=index, item=item)


def _responses_reasoning(
    emit: Callable[..., None], index: int, item: dict[str, Any], size: int
) -> None:
    """A reasoning item: added with no summary, then each summary part as deltas (the
    encrypted content, when included, rides on the item itself)."""
    item_id = item["id"]
    emit("response.output_item.added", output_index=index, item={**item, "summary": []})
    for position, part in enumerate(item["summary"]):
        where = {"item_id": item_id, "output_index": index, "summary_index": position}
        emit("response.reasoning_summary_part.added", **where, part={**part, "text": ""})
        for piece in split(part["text"], size):
            emit("response.reasoning_summary_text.delta", **where, delta=piece)
        emit("response.reasoning_summary_text.done", **where, text=part["text"])
        emit("response.reasoning_summary_part.done", **where, part=part)
    emit("response.output_item.done", output_index=index, item=item)


def _responses_call(emit: Callable[..., None], index: int, item: dict[str, Any], size: int) -> None:
    item_id = item["id"]
    emit(
        "response.output_item.added",
        output_index=index,
        item={**item, "status": "in_progress", "arguments": ""},
    )
    for piece in split(item["arguments"], size):
        emit(
            "response.function_call_arguments.delta",
            item_id=item_id,
            output_index=index,
            delta=piece,
        )
    emit(
        "response.function_call_arguments.done",
        item_id=item_id,
        output_index=index,
        arguments=item["arguments"],
    )
    emit("response.output_item.done", output_index=index, item=item)


# --- Anthropic Messages


def _anthropic(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append(_event("anthropic", {"type": kind, **fields}, kind))

    usage = body["usage"]
    opening: dict[str, Any] = {
        **body,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "stop_details": None,
        "usage": {**usage, "output_tokens": 1},
    }
    emit("message_start", message=opening)
    for index, block in enumerate(body["content"]):
        _anthropic_block(emit, index, block, size)
        emit("content_block_stop", index=index)
    stop = {
        "stop_reason": body["stop_reason"],
        "stop_sequence": None,
        "stop_details": body.get("stop_details"),
    }
    emit("message_delta", delta=stop, usage={"output_tokens": usage["output_tokens"]})
    emit("message_stop")
    return events


def _anthropic_block(
    emit: Callable[..., None], index: int, block: dict[str, Any], size: int
) -> None:
    """One content block: its start, then its text, thinking and signature, or input as
    deltas; blocks that are not written piece by piece (redacted thinking, a server tool's
    result) come whole in their start, as the API sends them."""
    kind = block["type"]

    def start(content_block: dict[str, Any]) -> None:
        emit("content_block_start", index=index, content_block=content_block)
        if index == 0:
            emit("ping")

    def delta(**fields: Any) -> None:
        emit("content_block_delta", index=index, delta=fields)

    if kind == "text":
        stream_text_start(block, start, delta)
        for piece in split(block["text"], size):
            delta(type="text_delta", text=piece)
    elif kind == "thinking":
        start({"type": "thinking", "thinking": "", "signature": ""})
        for piece in split(block["thinking"], size):
            delta(type="thinking_delta", thinking=piece)
        delta(type="signature_delta", signature=block["signature"])
    elif kind in ("tool_use", "server_tool_use"):
        start({**block, "input": {}})
        delta(type="input_json_delta", partial_json="")
        arguments = json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False)
        for piece in split(arguments, size):
            delta(type="input_json_delta", partial_json=piece)
    else:
        start(block)


# --- Gemini


def _google(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    usage = body["usageMetadata"]
    tail = {"modelVersion": body["modelVersion"], "responseId": body["responseId"]}
    candidates = body.get("candidates")
    if not candidates:  # a blocked prompt: one event says so
        return [_event("google", body)]
    candidate = candidates[0]
    parts = candidate.get("content", {}).get("parts", [])
    early_usage = {"promptTokenCount": usage["promptTokenCount"]}
    early_usage["totalTokenCount"] = usage["promptTokenCount"]
    chunks: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" in part:
            kind = {"thought": True} if part.get("thought") else {}
            chunks.extend([{"text": piece, **kind}] for piece in split(part["text"], size))
            if "thoughtSignature" in part:  # a stream signs its text in a last, empty part
                chunks.append([{"text": "", "thoughtSignature": part["thoughtSignature"]}])
        elif chunks and "functionCall" in chunks[-1][-1]:
            chunks[-1].append(part)  # parallel calls arrive together, in one event
        else:
            chunks.append([part])
    events: list[bytes] = []
    for number, chunk in enumerate(chunks):
        last = number == len(chunks) - 1
        value: dict[str, Any] = {
            "candidates": [
                {
                    "content": {"parts": chunk, "role": "model"},
                    **({k: v for k, v in candidate.items() if k != "content"} if last else {}),
                    "index": 0,
                }
            ],
            "usageMetadata": usage if last else early_usage,
            **tail,
        }
        events.append(_event("google", value))
    if not chunks:
        events.append(_event("google", {**body}))
    return events


# --- error events


_ERRORS: dict[str, dict[str, tuple[Any, ...]]] = {
    # fault kind -> per provider: (status or type, code, message)
    "overloaded": {
        "openai": ("server_error", None, "The server is overloaded or not ready yet."),
        "anthropic": ("overloaded_error", None, "Overloaded"),
        "google": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    },
    "server_error": {
        "openai": ("server_error", None, "The server had an error while processing your request."),
        "anthropic": ("api_error", None, "Internal server error"),
        "google": (500, "INTERNAL", "An internal error has occurred."),
    },
    "rate_limit": {
        "openai": ("requests", "rate_limit_exceeded", "Rate limit reached (wink emulator)."),
        "anthropic": ("rate_limit_error", None, "Rate limited (wink emulator)."),
        "google": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (wink emulator)."),
    },
    "quota_exhausted": {
        "openai": ("insufficient_quota", "insufficient_quota", "You exceeded your current quota."),
        "anthropic": ("billing_error", None, "Your credit balance is too low."),
        "google": (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota."),
    },
    "bad_request": {
        "openai": ("invalid_request_error", None, "Invalid request (wink emulator)."),
        "anthropic": ("invalid_request_error", None, "Invalid request (wink emulator)."),
        "google": (400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    },
    "context_window_exceeded": {
        "openai": (
            "invalid_request_error",
            "context_length_exceeded",
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again.",
        ),
        "anthropic": (
            "invalid_request_error",
            None,
            "prompt is too long: 208656 tokens > 200000 maximum",
        ),
        "google": (
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200293) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
    },
}


def error_events(provider: Provider, fault: Fault, ctx: WireContext) -> list[bytes]:
    """The events a provider sends when it fails mid-stream (then the stream ends)."""
    if provider == "bedrock":
        return stream_error(fault)
    kind = fault.error_kind or "overloaded"
    family = "openai" if provider == "openai-responses" else provider
    first, code, text = _ERRORS[kind][family]
    message = fault.message or text
    if provider == "openai":
        error = {"message": message, "type": first, "param": None, "code": code}
        return [_event("openai", {"error": error})]
    if provider == "openai-responses":
        error = {"type": first, "code": code or first, "message": message, "param": None}
        failed: dict[str, Any] = {
            "id": ctx.ids.response(),
            "object": "response",
            "status": "failed",
            "output": [],
        }
        failed["error"] = {"code": code or first, "message": message}
        return [
            _event(provider, {"type": "error", "sequence_number": 0, "error": error}, "error"),
            _event(provider, {"type": "response.failed", "response": failed}, "response.failed"),
        ]
    if provider == "anthropic":
        error = {"type": "error", "error": {"type": first, "message": message}}
        return [_event("anthropic", error, "error")]
    details: list[dict[str, Any]] = []
    if kind == "quota_exhausted":
        violation = {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
        details.append(
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
        )
    error = {"code": first, "message": message, "status": code}
    if details:
        error["details"] = details
    return [_event("google", {"error": error})]


_RENDERERS: dict[Provider, Callable[[dict[str, Any], WireContext, int, Turn], list[bytes]]] = {
    "openai": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "google": _google,
    "bedrock": bedrock_stream,
}


def corrupt_frame(frame: bytes) -> bytes:
    """An event-stream message with its message CRC broken (a byte flipped in transit)."""
    return frame[:-1] + bytes([frame[-1] ^ 0xFF])
