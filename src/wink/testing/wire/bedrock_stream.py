"""Bedrock's ConverseStream on the wire: AWS event-stream frames (`messageStart`,
`contentBlockDelta`, ...), the exception frame of a stream that fails, and a frame broken
in transit."""

from __future__ import annotations

from typing import Any

from ..eventstream import event_frame, exception_frame
from ..faults import Fault
from ..formats import dump, split
from ..turns import Turn
from .base import WireContext

__all__ = ["bedrock_stream", "corrupt_frame", "stream_error"]


def stream_error(fault: Fault) -> list[bytes]:
    """The exception frame Bedrock sends when a ConverseStream fails mid-way."""
    kind = fault.error_kind or "overloaded"
    name, text = {
        "overloaded": ("serviceUnavailableException", "Bedrock is unable to process your request."),
        "server_error": ("internalServerException", "The system encountered an unexpected error."),
        "rate_limit": (
            "throttlingException",
            "Too many requests, please wait before trying again.",
        ),
        "quota_exhausted": ("serviceQuotaExceededException", "Your request exceeds the quota."),
        "bad_request": ("validationException", "Malformed input request, please reformat."),
        "context_window_exceeded": (
            "validationException",
            "Input is too long for requested model.",
        ),
    }.get(kind, ("modelStreamErrorException", "The model stream failed."))
    return [exception_frame(name, fault.message or text)]


def bedrock_stream(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    """The answer's events as ConverseStream frames them; text, reasoning and tool input
    in pieces of `size` characters, a redacted block whole, a citation whole."""
    events = [event_frame("messageStart", {"role": "assistant"})]
    for index, block in enumerate(body["output"]["message"]["content"]):
        if "text" in block:
            events += [_delta(index, {"text": piece}) for piece in split(block["text"], size)]
        elif "citationsContent" in block:  # each citation, then the text it supports
            cited = block["citationsContent"]
            events += [_delta(index, {"citation": citation}) for citation in cited["citations"]]
            text = "".join(piece["text"] for piece in cited["content"])
            events += [_delta(index, {"text": piece}) for piece in split(text, size)]
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            if "redactedContent" in reasoning:
                redacted = {"redactedContent": reasoning["redactedContent"]}
                events.append(_delta(index, {"reasoningContent": redacted}))
            else:
                said = reasoning["reasoningText"]
                events += [
                    _delta(index, {"reasoningContent": {"text": piece}})
                    for piece in split(said["text"], size)
                ]
                signature = {"reasoningContent": {"signature": said["signature"]}}
                events.append(_delta(index, signature))
        elif "toolUse" in block:
            used = block["toolUse"]
            start = {"toolUse": {"toolUseId": used["toolUseId"], "name": used["name"]}}
            events.append(
                event_frame("contentBlockStart", {"contentBlockIndex": index, "start": start})
            )
            arguments = (
                used["input"] if isinstance(used["input"], str) else dump(used["input"]).decode()
            )
            events += [
                _delta(index, {"toolUse": {"input": piece}}) for piece in split(arguments, size)
            ]
        events.append(event_frame("contentBlockStop", {"contentBlockIndex": index}))
    events.append(event_frame("messageStop", {"stopReason": body["stopReason"]}))
    events.append(event_frame("metadata", {"usage": body["usage"], "metrics": body["metrics"]}))
    return events


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return event_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})


def corrupt_frame(frame: bytes) -> bytes:
    """An event-stream message with its message CRC broken (a byte flipped in transit)."""
    return frame[:-1] + bytes([frame[-1] ^ 0xFF])
