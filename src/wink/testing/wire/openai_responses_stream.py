"""OpenAI Responses as it streams: typed, numbered events around each output item."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..faults import Fault
from ..formats import split
from ..turns import Turn
from .base import WireContext
from .openai_responses_builtin import BUILTIN_ITEMS, annotation_events, item_events
from .openai_stream import STREAM_ERRORS
from .sse import sse_event

__all__ = ["responses_stream", "responses_stream_error"]


def responses_stream(body: dict[str, Any], ctx: WireContext, size: int, turn: Turn) -> list[bytes]:
    """`response.created`, each output item's events, then the terminal event."""
    sequence = iter(range(1_000_000_000))
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        value = {"type": kind, "sequence_number": next(sequence), **fields}
        events.append(sse_event(value, kind))

    opening: dict[str, Any] = {**body, "status": "in_progress", "output": [], "usage": None}
    opening["incomplete_details"] = None
    emit("response.created", response=opening)
    emit("response.in_progress", response=opening)
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            _responses_message(emit, index, item, size)
        elif item["type"] == "reasoning":
            _responses_reasoning(emit, index, item, size)
        elif item["type"] in BUILTIN_ITEMS:
            item_events(emit, index, item, size)
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
        annotation_events(emit, where, part)
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


def responses_stream_error(fault: Fault, ctx: WireContext) -> list[bytes]:
    """The `error` event, then `response.failed`, as Responses fails mid-stream."""
    first, code, text = STREAM_ERRORS[fault.error_kind or "overloaded"]
    message = fault.message or text
    error = {"type": first, "code": code or first, "message": message, "param": None}
    failed: dict[str, Any] = {
        "id": ctx.ids.response(),
        "object": "response",
        "status": "failed",
        "output": [],
    }
    failed["error"] = {"code": code or first, "message": message}
    return [
        sse_event({"type": "error", "sequence_number": 0, "error": error}, "error"),
        sse_event({"type": "response.failed", "response": failed}, "response.failed"),
    ]
