"""Anthropic Messages as it streams: `message_start`, each content block's start, deltas
and stop, `message_delta`, `message_stop`; and its `error` event."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..faults import Fault
from ..formats import split
from ..turns import Turn
from .anthropic_citations import stream_text_start
from .base import WireContext
from .sse import sse_event

__all__ = ["anthropic_stream", "anthropic_stream_error"]

_STREAM_ERRORS: dict[str, tuple[str, str]] = {
    # fault kind -> (error type, message)
    "overloaded": ("overloaded_error", "Overloaded"),
    "server_error": ("api_error", "Internal server error"),
    "rate_limit": ("rate_limit_error", "Rate limited (wink emulator)."),
    "quota_exhausted": ("billing_error", "Your credit balance is too low."),
    "bad_request": ("invalid_request_error", "Invalid request (wink emulator)."),
    "context_window_exceeded": (
        "invalid_request_error",
        "prompt is too long: 208656 tokens > 200000 maximum",
    ),
}


def anthropic_stream(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    """The answer's events, its text, thinking and tool input in pieces of `size`."""
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append(sse_event({"type": kind, **fields}, kind))

    usage = body["usage"]
    opening: dict[str, Any] = {
        **{key: value for key, value in body.items() if key != "container"},
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
    if "container" in body:  # the code execution sandbox, named as the message ends
        stop["container"] = body["container"]
    counts = {"output_tokens": usage["output_tokens"]}
    if "server_tool_use" in usage:
        counts["server_tool_use"] = usage["server_tool_use"]
    emit("message_delta", delta=stop, usage=counts)
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


def anthropic_stream_error(fault: Fault) -> list[bytes]:
    """The `error` event Anthropic sends when it fails mid-stream."""
    kind, text = _STREAM_ERRORS[fault.error_kind or "overloaded"]
    error = {"type": "error", "error": {"type": kind, "message": fault.message or text}}
    return [sse_event(error, "error")]
