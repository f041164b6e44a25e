"""Gemini as it streams (`:streamGenerateContent?alt=sse`): one whole
`GenerateContentResponse` per event, ended in `\\r\\n\\r\\n`; and its error event."""

from __future__ import annotations

from typing import Any

from ..faults import Fault
from ..formats import split
from ..turns import Turn
from .base import WireContext
from .sse import sse_event

__all__ = ["google_event", "google_stream", "google_stream_error"]

_STREAM_ERRORS: dict[str, tuple[int, str, str]] = {
    # fault kind -> (code, status, message)
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "server_error": (500, "INTERNAL", "An internal error has occurred."),
    "rate_limit": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (wink emulator)."),
    "quota_exhausted": (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota."),
    "bad_request": (400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    "context_window_exceeded": (
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
    ),
}


def google_event(value: Any) -> bytes:
    """One event, framed as Gemini frames them."""
    return sse_event(value, end=b"\r\n\r\n")


def google_stream(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    """The answer's parts in events: text and thoughts in pieces of `size`, calls whole
    (parallel calls in one event), the finish and usage on the last."""
    usage = body["usageMetadata"]
    tail = {"modelVersion": body["modelVersion"], "responseId": body["responseId"]}
    candidates = body.get("candidates")
    if not candidates:  # a blocked prompt: one event says so
        return [google_event(body)]
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
        events.append(google_event(value))
    if not chunks:
        events.append(google_event({**body}))
    return events


def google_stream_error(fault: Fault) -> list[bytes]:
    """The error event Gemini sends when it fails mid-stream."""
    kind = fault.error_kind or "overloaded"
    code, status, text = _STREAM_ERRORS[kind]
    details: list[dict[str, Any]] = []
    if kind == "quota_exhausted":
        violation = {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
        details.append(
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
        )
    error: dict[str, Any] = {"code": code, "message": fault.message or text, "status": status}
    if details:
        error["details"] = details
    return [google_event({"error": error})]
