"""ConverseStream: `POST /model/{modelId}/converse-stream`, answered in AWS event-stream
frames (core's `EventStreamFraming`), each an event named by its `:event-type`:
`messageStart`, `contentBlockStart` (a `toolUse` begins), `contentBlockDelta` (`text`,
`toolUse.input` fragments, `reasoningContent` text, signature or redacted bytes, a
document's `citation`: its text block is then a `citationsContent` block),
`contentBlockStop`, `messageStop` (the stop reason), `metadata` (usage, metrics).

An exception framed in the stream (`throttlingException`, `modelStreamErrorException`,
`internalServerException`, `validationException`, `serviceUnavailableException`) is
classified as the same error answered before the stream: core retries it before any
output reached the caller, and raises it typed after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from ...core.foundation.events import CitationDelta, StreamEvent, TextDelta, ThinkingDelta
from ...core.foundation.messages import ModelResponse
from ...core.transport.decoding import Framing, Parse, ToolCalls, stream_failure, truncated
from ...core.transport.errors import MalformedResponse
from ...core.transport.eventstream import EventStreamFraming
from .citations import citation_of
from .errors import stream_error_facts

__all__ = ["ConverseStream", "ConverseStreamDecoder"]

_EVENTS = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)


class ConverseStream:
    """The ConverseStream `StreamFormat`: the `/converse-stream` path, event-stream frames."""

    __slots__ = ()

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        if not path.endswith("/converse"):
            raise ValueError(f"not a Converse URL: {path}")
        return f"{path}-stream", body

    def framing(self) -> Framing:
        return EventStreamFraming()

    def decoder(
        self, prompt_name: str, secrets: tuple[str, ...], parse: Parse
    ) -> ConverseStreamDecoder:
        return ConverseStreamDecoder(prompt_name, secrets, parse)


class _Block:
    """A content block being assembled from its deltas."""

    __slots__ = ("citations", "kind", "pieces", "redacted", "signature", "start")

    def __init__(self, kind: str, start: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.start = start
        self.pieces: list[str] = []
        self.signature: list[str] = []
        self.redacted: list[str] = []
        self.citations: list[Any] = []

    def build(self, arguments: str | None) -> dict[str, Any]:
        if self.kind == "toolUse":
            used = dict(self.start or {})
            used["input"] = _arguments(arguments or "")
            return {"toolUse": used}
        if self.kind == "reasoningContent":
            if self.redacted:
                return {"reasoningContent": {"redactedContent": "".join(self.redacted)}}
            text: dict[str, Any] = {"text": "".join(self.pieces)}
            if self.signature:
                text["signature"] = "".join(self.signature)
            return {"reasoningContent": {"reasoningText": text}}
        if self.citations:
            content = [{"text": "".join(self.pieces)}]
            return {"citationsContent": {"content": content, "citations": self.citations}}
        return {"text": "".join(self.pieces)}


class ConverseStreamDecoder:
    """One round of ConverseStream events -> deltas, then the Converse answer they add up
    to, read by the non-streaming parser."""

    end_marker: str | None = None
    __slots__ = ("_blocks", "_calls", "_metadata", "_parse", "_prompt", "_secrets", "_stop")

    def __init__(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> None:
        self._prompt = prompt_name
        self._secrets = secrets
        self._parse = parse
        self._blocks: dict[int, _Block] = {}
        self._calls = ToolCalls()
        self._stop: dict[str, Any] | None = None
        self._metadata: dict[str, Any] | None = None

    @property
    def usage_reported(self) -> bool:
        return self._metadata is not None and "usage" in self._metadata

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        if payload is None:
            return  # no end marker on this wire
        if event not in _EVENTS:
            raise stream_failure(self._prompt, stream_error_facts(event, payload), self._secrets)
        if event == "contentBlockDelta":
            self._delta(payload, out)
        elif event == "contentBlockStart":
            self._start(payload, out)
        elif event == "contentBlockStop":
            index = _index(payload)
            if index in self._calls:
                self._calls.ready(index, out)
        elif event == "messageStop":
            self._stop = payload
        elif event == "metadata":
            self._metadata = payload

    def _start(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        index = _index(payload)
        start = payload.get("start")
        used = cast(dict[str, Any], start).get("toolUse") if isinstance(start, dict) else None
        if not isinstance(used, dict):
            return  # a text or reasoning block starts with its first delta
        fields = cast(dict[str, Any], used)
        call_id, name = fields.get("toolUseId"), fields.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise MalformedResponse("a toolUse start has no toolUseId or name")
        self._blocks[index] = _Block("toolUse", {"toolUseId": call_id, "name": name})
        self._calls.start(index, call_id, name, out)

    def _delta(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        index = _index(payload)
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            raise MalformedResponse("a contentBlockDelta has no delta object")
        fields = cast(dict[str, Any], delta)
        if "text" in fields:
            text = _text(fields["text"], "text")
            self._block(index, "text").pieces.append(text)
            if text:
                out.append(TextDelta(text))
        elif "toolUse" in fields:
            used = fields["toolUse"]
            if not isinstance(used, dict) or index not in self._calls:
                raise MalformedResponse("toolUse input for a block that is not a toolUse")
            fragment = _text(cast(dict[str, Any], used).get("input", ""), "toolUse.input")
            self._blocks[index].pieces.append(fragment)
            self._calls.add(index, fragment, out)
        elif "citation" in fields:
            citation = citation_of(fields["citation"])
            self._block(index, "text").citations.append(fields["citation"])
            out.append(CitationDelta(citation))
        elif "reasoningContent" in fields:
            reasoning = fields["reasoningContent"]
            if not isinstance(reasoning, dict):
                raise MalformedResponse("a reasoningContent delta is not an object")
            self._reasoning(index, cast(dict[str, Any], reasoning), out)

    def _reasoning(self, index: int, reasoning: dict[str, Any], out: list[StreamEvent]) -> None:
        block = self._block(index, "reasoningContent")
        if "text" in reasoning:
            text = _text(reasoning["text"], "reasoningContent.text")
            block.pieces.append(text)
            if text:
                out.append(ThinkingDelta(text))
        if "signature" in reasoning:
            block.signature.append(_text(reasoning["signature"], "reasoningContent.signature"))
        if "redactedContent" in reasoning:
            block.redacted.append(_text(reasoning["redactedContent"], "redactedContent"))

    def _block(self, index: int, kind: str) -> _Block:
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _Block(kind)
        elif block.kind != kind:
            raise MalformedResponse(f"block {index} is a {block.kind}, not a {kind}")
        return block

    def finish(self) -> ModelResponse:
        stop = self._stop
        if stop is None:
            raise truncated(self._prompt, "its messageStop event")
        content = [
            self._blocks[index].build(self._calls.text(index) if index in self._calls else None)
            for index in sorted(self._blocks)
        ]
        body: dict[str, Any] = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop.get("stopReason"),
            "usage": (self._metadata or {}).get("usage", {}),
        }
        if "additionalModelResponseFields" in stop:
            body["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
        return self._parse(body)


def _arguments(text: str) -> Any:
    """The input as the whole answer carries it: the object; `{}` for none; the text
    itself when it is not JSON (the tool then fails with a message the model reads)."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _index(payload: Mapping[str, Any]) -> int:
    index = payload.get("contentBlockIndex")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise MalformedResponse("an event has no contentBlockIndex")
    return index


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MalformedResponse(f"{what} is not a string")
    return value
