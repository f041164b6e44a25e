"""Anthropic Messages streaming: `message_start`, content blocks (`content_block_start`,
`_delta`, `_stop`), `message_delta` (stop reason, usage), `message_stop`.

Deltas: `text_delta`, `input_json_delta` (tool input as JSON fragments),
`thinking_delta` and `signature_delta` (thinking blocks), `citations_delta` (a citation,
before the text it supports: a `CitationDelta`). An `error`
event (`overloaded_error` and the like) reports a failure mid-stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from ...core.foundation.errors import PromptEvaluationError
from ...core.foundation.events import CitationDelta, StreamEvent, TextDelta, ThinkingDelta
from ...core.foundation.messages import ModelResponse
from ...core.transport.decoding import Parse, SSEFramed, ToolCalls, stream_failure, truncated
from ...core.transport.errors import MalformedResponse
from .messages import ERROR_STATUS, anthropic_error_facts
from .server_tools import citation_of

__all__ = ["AnthropicStream", "AnthropicStreamDecoder"]

_CALL_BLOCKS = frozenset({"tool_use"})  # client tools; server tools run at Anthropic


class AnthropicStream(SSEFramed):
    """The Messages API `StreamFormat`."""

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        return path, {**body, "stream": True}

    def decoder(
        self, prompt_name: str, secrets: tuple[str, ...], parse: Parse
    ) -> AnthropicStreamDecoder:
        return AnthropicStreamDecoder(prompt_name, secrets, parse)


class _Block:
    """A content block being assembled: its start object, and its streamed pieces."""

    __slots__ = ("citations", "pieces", "signature", "start")

    def __init__(self, start: dict[str, Any]) -> None:
        self.start = start
        self.pieces: list[str] = []
        self.signature: list[str] = []
        self.citations: list[Any] = []

    def build(self, arguments: str | None) -> dict[str, Any]:
        block = dict(self.start)
        kind = block.get("type")
        if kind == "text":
            block["text"] = str(block.get("text") or "") + "".join(self.pieces)
            if self.citations:
                block["citations"] = [
                    *cast(list[Any], block.get("citations") or []),
                    *self.citations,
                ]
        elif kind == "thinking":
            block["thinking"] = str(block.get("thinking") or "") + "".join(self.pieces)
            block["signature"] = str(block.get("signature") or "") + "".join(self.signature)
        else:
            if arguments is None:  # not a call wink runs: a server tool's, sent back as is
                arguments = "".join(self.pieces)
            if arguments.strip():
                try:
                    block["input"] = json.loads(arguments)
                except ValueError:
                    block["input"] = arguments  # sent raw: the tool fails with a message
        return block


class AnthropicStreamDecoder:
    """One round of message events -> deltas, then the `message` they add up to."""

    end_marker: str | None = None
    __slots__ = (
        "_blocks",
        "_calls",
        "_done",
        "_message",
        "_parse",
        "_prompt",
        "_secrets",
        "_stop",
        "_usage",
    )

    def __init__(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> None:
        self._prompt = prompt_name
        self._secrets = secrets
        self._parse = parse
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, _Block] = {}
        self._calls = ToolCalls()
        self._usage: dict[str, Any] = {}
        self._stop: dict[str, Any] = {}
        self._done = False

    @property
    def usage_reported(self) -> bool:
        return bool(self._usage)

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        if payload is None:
            return  # no end marker on this wire
        kind = payload.get("type", event)
        if kind == "content_block_delta":
            self._delta(payload, out)
        elif kind == "content_block_start":
            self._start(payload, out)
        elif kind == "content_block_stop":
            index = _index(payload)
            if index in self._calls:
                self._calls.ready(index, out)
        elif kind == "message_start":
            message = payload.get("message")
            if not isinstance(message, dict):
                raise MalformedResponse("message_start has no message")
            self._message = cast(dict[str, Any], message)
            self._add_usage(self._message.get("usage"))
        elif kind == "message_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict):
                self._stop.update(cast(dict[str, Any], delta))
            self._add_usage(payload.get("usage"))
        elif kind == "message_stop":
            self._done = True
            self._calls.all_ready(out)
        elif kind == "error":
            raise self._failure(payload.get("error"))

    def _start(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        index = _index(payload)
        block = payload.get("content_block")
        if not isinstance(block, dict):
            raise MalformedResponse("content_block_start has no content_block")
        block = cast(dict[str, Any], block)
        self._blocks[index] = _Block(block)
        if block.get("type") in _CALL_BLOCKS:
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise MalformedResponse("a tool_use block has no id or name")
            self._calls.start(index, call_id, name, out)

    def _delta(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        index = _index(payload)
        block = self._blocks.get(index)
        delta = payload.get("delta")
        if block is None or not isinstance(delta, dict):
            raise MalformedResponse("a content_block_delta for no started block")
        delta = cast(dict[str, Any], delta)
        kind = delta.get("type")
        if kind == "text_delta":
            text = _text(delta, "text")
            if text:
                block.pieces.append(text)
                out.append(TextDelta(text))
        elif kind == "input_json_delta":
            fragment = _text(delta, "partial_json")
            if fragment and index in self._calls:
                self._calls.add(index, fragment, out)
            elif fragment:  # a server tool's input: the turn goes back with it
                block.pieces.append(fragment)
        elif kind == "thinking_delta":
            text = _text(delta, "thinking")
            if text:
                block.pieces.append(text)
                out.append(ThinkingDelta(text))
        elif kind == "signature_delta":
            signature = _text(delta, "signature")
            block.signature.append(signature)
            out.append(ThinkingDelta("", signature=signature))
        elif kind == "citations_delta":
            citation = delta.get("citation")
            block.citations.append(citation)
            out.append(CitationDelta(citation_of(citation)))

    def _add_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            # message_delta's counts are cumulative: a later value replaces an earlier one
            self._usage.update(
                (key, value)
                for key, value in cast(dict[str, Any], usage).items()
                if value is not None
            )

    def finish(self) -> ModelResponse:
        if not self._done or self._message is None:
            raise truncated(self._prompt, "its `message_stop` event")
        content = [
            self._blocks[index].build(self._calls.text(index) if index in self._calls else None)
            for index in sorted(self._blocks)
        ]
        body = {
            **self._message,
            "content": content,
            "stop_reason": self._stop.get("stop_reason"),
            "stop_sequence": self._stop.get("stop_sequence"),
            "stop_details": self._stop.get("stop_details"),  # a refusal's explanation
            "usage": self._usage,
        }
        return self._parse(body)

    def _failure(self, error: Any) -> PromptEvaluationError:
        detail = cast(dict[str, Any], error) if isinstance(error, dict) else {}
        kind = detail.get("type")
        status = ERROR_STATUS.get(kind, 500) if isinstance(kind, str) else 500
        body = {"type": "error", "error": detail}
        facts = anthropic_error_facts(status, body, "an error event in the stream")
        return stream_failure(self._prompt, facts, self._secrets)


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise MalformedResponse(f"{payload.get('type')} has no block index")
    return index


def _text(delta: dict[str, Any], key: str) -> str:
    value = delta.get(key)
    if not isinstance(value, str):
        raise MalformedResponse(f"a {delta.get('type')} has no {key}")
    return value
