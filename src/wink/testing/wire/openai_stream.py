"""OpenAI Chat Completions as it streams: `chat.completion.chunk` events, then `[DONE]`;
and the error event either OpenAI wire sends when it fails mid-stream."""

from __future__ import annotations

from typing import Any, cast

from ..faults import Fault
from ..formats import dump, split
from ..turns import Turn
from .base import WireContext
from .sse import sse_event

__all__ = ["STREAM_ERRORS", "chat_stream", "chat_stream_error", "shown_thoughts"]

STREAM_ERRORS: dict[str, tuple[str, str | None, str]] = {
    # fault kind -> (type, code, message), as both OpenAI wires word them
    "overloaded": ("server_error", None, "The server is overloaded or not ready yet."),
    "server_error": (
        "server_error",
        None,
        "The server had an error while processing your request.",
    ),
    "rate_limit": ("requests", "rate_limit_exceeded", "Rate limit reached (wink emulator)."),
    "quota_exhausted": (
        "insufficient_quota",
        "insufficient_quota",
        "You exceeded your current quota.",
    ),
    "bad_request": ("invalid_request_error", None, "Invalid request (wink emulator)."),
    "context_window_exceeded": (
        "invalid_request_error",
        "context_length_exceeded",
        "Your input exceeds the context window of this model. Please adjust your input "
        "and try again.",
    ),
}


def chat_stream(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    """The answer as chunks: the role, the thinking (on a host that shows it), the text
    (or refusal) and each call's arguments in pieces of `size` characters, the finish
    reason, the usage when asked for."""
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
        return sse_event({**base, "choices": choices})

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
    host = ctx.host
    if host is not None and host.reasoning_field is not None:  # thinking before the answer
        for index, thought in enumerate(shown_thoughts(turn)):
            events.extend(
                chunk(host.reasoning_delta(piece, index)) for piece in split(thought, size)
            )
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
        events.append(sse_event({**base, "choices": [], "usage": body["usage"]}))
    events.append(b"data: [DONE]\n\n")
    return events


def shown_thoughts(turn: Turn) -> list[str]:
    """The turn's thinking a compatible host shows (a redacted thought it keeps)."""
    return [thought.text for thought in turn.thinking if not thought.redacted]


def chat_stream_error(fault: Fault) -> list[bytes]:
    """The `error` event Chat Completions sends when it fails mid-stream."""
    kind, code, text = STREAM_ERRORS[fault.error_kind or "overloaded"]
    error = {"message": fault.message or text, "type": kind, "param": None, "code": code}
    return [sse_event({"error": error})]
