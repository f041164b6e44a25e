"""Gemini streaming: `:streamGenerateContent?alt=sse`, each event a partial
`GenerateContentResponse`; the last one carries `finishReason` (or the prompt was
blocked: `promptFeedback.blockReason`).

Parts are added up in order: text parts (`thought: true` ones are thinking), whole
`functionCall`, `executableCode` and `codeExecutionResult` parts, and the thought
signatures riding on any; the candidate's `groundingMetadata` and `urlContextMetadata`
(last chunks) as last sent. An event
`{"error": {...}}` reports a failure mid-stream, classified by its `code`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from ...core.foundation.errors import PromptEvaluationError
from ...core.foundation.events import StreamEvent, TextDelta, ThinkingDelta
from ...core.foundation.messages import ModelResponse
from ...core.transport.decoding import (
    Parse,
    SSEFramed,
    ToolCalls,
    keep_identity,
    stream_failure,
    truncated,
)
from ...core.transport.errors import MalformedResponse
from .errors import google_error_facts
from .generate import parse_arguments, synthetic_call_id

__all__ = ["GeminiStream", "GeminiStreamDecoder"]

_GENERATE = ":generateContent"
# Every partial response repeats these; the rebuilt body keeps them (the `chat` span's
# `gen_ai.response.model` and `gen_ai.response.id` come from there).
_IDENTITY_KEYS = ("modelVersion", "responseId", "createTime")
_STREAM = ":streamGenerateContent?alt=sse"
# What built-in tools leave on a candidate, sent whole on the last chunk(s): kept as last seen.
_METADATA_KEYS = ("groundingMetadata", "urlContextMetadata")


class GeminiStream(SSEFramed):
    """The Gemini API `StreamFormat`."""

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        if not path.endswith(_GENERATE):
            raise ValueError(f"not a generateContent URL: {path}")
        return path[: -len(_GENERATE)] + _STREAM, body

    def decoder(
        self, prompt_name: str, secrets: tuple[str, ...], parse: Parse
    ) -> GeminiStreamDecoder:
        return GeminiStreamDecoder(prompt_name, secrets, parse)


class _TextRun:
    """Consecutive plain text parts of one kind, kept as pieces until the end (a long
    answer is one part, not thousands)."""

    __slots__ = ("pieces", "thought")

    def __init__(self, thought: bool) -> None:
        self.thought = thought
        self.pieces: list[str] = []

    def part(self) -> dict[str, Any]:
        part: dict[str, Any] = {"text": "".join(self.pieces)}
        if self.thought:
            part["thought"] = True
        return part


class GeminiStreamDecoder:
    """One round of partial responses -> deltas, then the response they add up to."""

    end_marker: str | None = None
    __slots__ = (
        "_blocked",
        "_calls",
        "_finish",
        "_grounding",
        "_identity",
        "_parse",
        "_parts",
        "_prompt",
        "_secrets",
        "_usage",
    )

    def __init__(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> None:
        self._prompt = prompt_name
        self._secrets = secrets
        self._parse = parse
        self._parts: list[dict[str, Any] | _TextRun] = []
        self._calls = ToolCalls()
        self._finish: Any = None
        self._blocked: Any = None
        self._usage: Any = None
        self._identity: dict[str, Any] = {}
        self._grounding: dict[str, Any] = {}  # the candidate's metadata, as last sent

    @property
    def usage_reported(self) -> bool:
        return self._usage is not None

    def feed(self, event: str, chunk: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        if chunk is None:
            return  # no end marker on this wire
        error = chunk.get("error")
        if error is not None:
            raise self._failure(chunk, error)
        keep_identity(chunk, _IDENTITY_KEYS, self._identity)
        usage = chunk.get("usageMetadata")
        if usage is not None:
            self._usage = usage
        candidates = chunk.get("candidates")
        if not candidates:
            feedback = chunk.get("promptFeedback")
            if isinstance(feedback, dict):
                feedback = cast(dict[str, Any], feedback)
                if feedback.get("blockReason"):
                    self._blocked = feedback
            return
        if not isinstance(candidates, list):
            raise MalformedResponse("candidates is not a list")
        candidate = cast(list[Any], candidates)[0]
        if not isinstance(candidate, dict):
            raise MalformedResponse("candidates[0] is not an object")
        candidate = cast(dict[str, Any], candidate)
        content = candidate.get("content")
        if content is not None:
            if not isinstance(content, dict):
                raise MalformedResponse("candidates[0].content is not an object")
            parts = cast(dict[str, Any], content).get("parts", [])
            if not isinstance(parts, list):
                raise MalformedResponse("candidates[0].content.parts is not a list")
            for part in cast(list[Any], parts):
                if not isinstance(part, dict):
                    raise MalformedResponse("a part is not an object")
                self._read_part(cast(dict[str, Any], part), out)
        finish = candidate.get("finishReason")
        if finish is not None:
            self._finish = finish
        for key in _METADATA_KEYS:
            if candidate.get(key) is not None:
                self._grounding[key] = candidate[key]

    def _read_part(self, part: dict[str, Any], out: list[StreamEvent]) -> None:
        text = part.get("text")
        if text is not None:
            if not isinstance(text, str):
                raise MalformedResponse("a part's text is not a string")
            thought = part.get("thought") is True
            if text:
                out.append(ThinkingDelta(text) if thought else TextDelta(text))
            if len(part) == (2 if "thought" in part else 1):  # plain text: join the run
                last = self._parts[-1] if self._parts else None
                if not isinstance(last, _TextRun) or last.thought != thought:
                    last = _TextRun(thought)
                    self._parts.append(last)
                last.pieces.append(text)
                return
        function = part.get("functionCall")
        if isinstance(function, dict):
            self._announce(cast(dict[str, Any], function), out)
        self._parts.append(part)

    def _announce(self, function: dict[str, Any], out: list[StreamEvent]) -> None:
        """A call arrives whole: started and ready at once, with the id the parser will
        give it (Gemini's, or the one synthesized from its position and name)."""
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedResponse("functionCall.name is missing")
        call_id = function.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = synthetic_call_id()  # `finish` gives the parsed call the same one
        key = len(self._calls)
        self._calls.start(key, call_id, name, out)
        self._calls.ready(key, out, parse_arguments(function.get("args")))

    def finish(self) -> ModelResponse:
        if self._finish is None and self._blocked is None:
            raise truncated(self._prompt, "a chunk with its `finishReason`")
        body: dict[str, Any] = dict(self._identity)
        if self._blocked is not None and self._finish is None:
            body["promptFeedback"] = self._blocked
        else:
            candidate: dict[str, Any] = {"finishReason": self._finish, "index": 0}
            parts = [part.part() if isinstance(part, _TextRun) else part for part in self._parts]
            if parts:
                candidate["content"] = {"parts": parts, "role": "model"}
            candidate.update(self._grounding)
            body["candidates"] = [candidate]
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        response = self._parse(body)
        announced = [call.id for call in self._calls.in_order()]
        if not response.tool_calls or len(announced) != len(response.tool_calls):
            return response
        # Gemini sent no ids: the calls keep the ones their events announced.
        calls = tuple(
            replace(call, id=announced[index])
            if (call.provider_data or {}).get("synthetic_id")
            else call
            for index, call in enumerate(response.tool_calls)
        )
        return replace(response, tool_calls=calls)

    def _failure(self, chunk: dict[str, Any], error: Any) -> PromptEvaluationError:
        detail = cast(dict[str, Any], error) if isinstance(error, dict) else {"message": error}
        code = detail.get("code")
        status = code if isinstance(code, int) and 400 <= code <= 599 else 500
        message = detail.get("message")
        text = message if isinstance(message, str) and message else "an error event in the stream"
        return stream_failure(self._prompt, google_error_facts(status, chunk, text), self._secrets)
