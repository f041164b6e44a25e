"""OpenAI Responses streaming: typed events, ending in `response.completed`
(or `response.incomplete` / `response.failed`), whose `response` is the whole answer.

Text comes in `response.output_text.delta`, reasoning summaries in
`response.reasoning_summary_text.delta`, function calls as `response.output_item.added`
then `response.function_call_arguments.delta` fragments keyed by item id, and an
`error` event (or `response.failed`) reports a failure. A `url_citation` annotation
(`response.output_text.annotation.added`, sent after the text it cites) is a
`CitationDelta` with its span over the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ...core.foundation.errors import PromptEvaluationError
from ...core.foundation.events import CitationDelta, StreamEvent, TextDelta, ThinkingDelta
from ...core.foundation.messages import ModelResponse
from ...core.transport.decoding import Parse, SSEFramed, ToolCalls, stream_failure, truncated
from ...core.transport.errors import MalformedResponse
from .builtin import url_citation
from .chat_stream import openai_error_status
from .client import openai_error_facts

__all__ = ["ResponsesStream", "ResponsesStreamDecoder"]

_TERMINAL = frozenset({"response.completed", "response.incomplete"})
_THINKING = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})


class ResponsesStream(SSEFramed):
    """The Responses API `StreamFormat`."""

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        return path, {**body, "stream": True}

    def decoder(
        self, prompt_name: str, secrets: tuple[str, ...], parse: Parse
    ) -> ResponsesStreamDecoder:
        return ResponsesStreamDecoder(prompt_name, secrets, parse)


class ResponsesStreamDecoder:
    """One round of Responses events -> deltas, then the final `response` object."""

    end_marker: str | None = None
    __slots__ = (
        "_calls",
        "_final",
        "_items",
        "_parse",
        "_part_starts",
        "_prompt",
        "_secrets",
        "_text_length",
    )

    def __init__(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> None:
        self._prompt = prompt_name
        self._secrets = secrets
        self._parse = parse
        self._calls = ToolCalls()
        self._items: dict[int, dict[str, Any]] = {}  # finished output items by index
        self._final: dict[str, Any] | None = None
        # Where each output_text part starts in the whole answer, so an annotation's span
        # (given within its part) is placed as the non-streamed answer places it.
        self._text_length = 0
        self._part_starts: dict[tuple[Any, Any], int] = {}

    @property
    def usage_reported(self) -> bool:
        return self._final is not None and self._final.get("usage") is not None

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        if payload is None:
            return  # no end marker on this wire
        kind = payload.get("type", event)
        if kind == "response.output_text.delta":
            delta = payload.get("delta")
            if not isinstance(delta, str):
                raise MalformedResponse("response.output_text.delta has no delta")
            if delta:
                self._text_length += len(delta)
                out.append(TextDelta(delta))
        elif kind == "response.content_part.added":
            where = (payload.get("item_id"), payload.get("content_index"))
            self._part_starts[where] = self._text_length
        elif kind == "response.output_text.annotation.added":
            annotation = payload.get("annotation")
            if not isinstance(annotation, dict):
                raise MalformedResponse(f"{kind} has no annotation")
            where = (payload.get("item_id"), payload.get("content_index"))
            start = self._part_starts.get(where, 0)
            citation = url_citation(cast(dict[str, Any], annotation), start)
            if citation is not None:
                out.append(CitationDelta(citation))
        elif kind in _THINKING:
            delta = payload.get("delta")
            if not isinstance(delta, str):
                raise MalformedResponse(f"{kind} has no delta")
            if delta:
                out.append(ThinkingDelta(delta))
        elif kind == "response.function_call_arguments.delta":
            delta = payload.get("delta")
            if not isinstance(delta, str):
                raise MalformedResponse("response.function_call_arguments.delta has no delta")
            self._calls.add(_key(payload, payload.get("item_id")), delta, out)
        elif kind == "response.output_item.added":
            self._item_added(payload, out)
        elif kind == "response.output_item.done":
            self._item_done(payload, out)
        elif kind in _TERMINAL:
            self._final = _response_of(payload)
            self._calls.all_ready(out)
        elif kind == "response.failed":
            raise self._failure(_response_of(payload).get("error"))
        elif kind == "error":
            nested = payload.get("error")
            raise self._failure(nested if isinstance(nested, dict) else payload)

    def _item_added(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        item = _item_of(payload)
        if item.get("type") != "function_call":
            return
        call_id, name = item.get("call_id"), item.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise MalformedResponse("a function_call item has no call_id or name")
        self._calls.start(_key(payload, item.get("id")), call_id, name, out)

    def _item_done(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        item = _item_of(payload)
        index = payload.get("output_index")
        if isinstance(index, int):
            self._items[index] = item
        if item.get("type") == "function_call":
            key = _key(payload, item.get("id"))
            if key in self._calls:
                arguments = item.get("arguments")
                self._calls.ready(key, out, arguments if isinstance(arguments, str) else None)

    def finish(self) -> ModelResponse:
        final = self._final
        if final is None:
            raise truncated(self._prompt, "its `response.completed` event")
        if not final.get("output") and self._items:
            final = {**final, "output": [self._items[index] for index in sorted(self._items)]}
        return self._parse(final)

    def _failure(self, error: Any) -> PromptEvaluationError:
        detail = cast(dict[str, Any], error) if isinstance(error, dict) else {}
        facts = openai_error_facts(openai_error_status(detail), detail, "the response failed")
        return stream_failure(self._prompt, facts, self._secrets)


def _key(payload: dict[str, Any], item_id: Any) -> Any:
    """Which call an event is about: its `output_index` (every function-call event has
    one), else its item id."""
    index = payload.get("output_index")
    return index if index is not None else item_id


def _response_of(payload: dict[str, Any]) -> dict[str, Any]:
    response = payload.get("response")
    if not isinstance(response, dict):
        raise MalformedResponse(f"{payload.get('type')} has no response object")
    return cast(dict[str, Any], response)


def _item_of(payload: dict[str, Any]) -> dict[str, Any]:
    item = payload.get("item")
    if not isinstance(item, dict):
        raise MalformedResponse(f"{payload.get('type')} has no item")
    return cast(dict[str, Any], item)
