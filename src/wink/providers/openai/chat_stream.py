"""OpenAI Chat Completions streaming: `chat.completion.chunk` events, then `[DONE]`.

The request adds `stream: true` and `stream_options.include_usage` (usage arrives in a
last chunk with no choices). Tool calls arrive as fragments keyed by `index`; an error
arrives as a chunk `{"error": {...}}` (compatible servers such as Groq send them).
"""

from __future__ import annotations

from collections.abc import Mapping
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
from .client import openai_error_facts

__all__ = ["ChatStream", "ChatStreamDecoder", "openai_error_status"]

_DONE = "[DONE]"
# Every chunk repeats the completion's identity; the rebuilt body keeps it (the `chat`
# span's `gen_ai.response.id` and `gen_ai.response.model` come from there).
_IDENTITY_KEYS = ("id", "model", "created", "system_fingerprint", "service_tier")
_REASONING_KEYS = ("reasoning", "reasoning_content")  # compatible servers' thinking text

# An error object's code or type -> the HTTP status it stands for.
_STATUS_BY_CODE = {
    "insufficient_quota": 429,
    "rate_limit_exceeded": 429,
    "requests": 429,
    "tokens": 429,
    "server_error": 500,
    "api_error": 500,
    "overloaded": 503,
    "service_unavailable": 503,
    "timeout": 408,
    "invalid_api_key": 401,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "model_not_found": 404,
    "invalid_request_error": 400,
    "invalid_prompt": 400,
    "context_length_exceeded": 400,
    "content_filter": 400,
}


def openai_error_status(error: Mapping[str, Any]) -> int:
    """The HTTP status an OpenAI-style error object stands for.

    A `status_code` field (Groq) or an Azure `status` decides; else the code, else the
    type; an error that says nothing recognisable is a server error (retry-safe).
    """
    code, kind = error.get("code"), error.get("type")
    for field in ("status_code", "status"):
        status = error.get(field)
        if isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599:
            return status
    for key in (code, kind):
        if isinstance(key, str) and key in _STATUS_BY_CODE:
            return _STATUS_BY_CODE[key]
    return 500


class ChatStream(SSEFramed):
    """The Chat Completions `StreamFormat`."""

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        streamed = {**body, "stream": True}
        streamed.setdefault("stream_options", {"include_usage": True})
        return path, streamed

    def decoder(
        self, prompt_name: str, secrets: tuple[str, ...], parse: Parse
    ) -> ChatStreamDecoder:
        return ChatStreamDecoder(prompt_name, secrets, parse)


class ChatStreamDecoder:
    """One round of chunks -> deltas, then the `chat.completion` body they add up to."""

    end_marker: str | None = _DONE
    __slots__ = (
        "_calls",
        "_done",
        "_finish",
        "_identity",
        "_parse",
        "_prompt",
        "_reasoning",
        "_refusal",
        "_secrets",
        "_text",
        "_usage",
    )

    def __init__(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> None:
        self._prompt = prompt_name
        self._secrets = secrets
        self._parse = parse
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._reasoning: dict[str, list[str]] = {}
        self._calls = ToolCalls()
        self._finish: Any = None
        self._usage: Any = None
        self._identity: dict[str, Any] = {}
        self._done = False

    @property
    def usage_reported(self) -> bool:
        return self._usage is not None

    def feed(self, event: str, chunk: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        if chunk is None:  # `[DONE]`
            self._done = True
            self._calls.all_ready(out)
            return
        error = chunk.get("error")
        if error is not None:
            raise self._failure(error)
        keep_identity(chunk, _IDENTITY_KEYS, self._identity)
        usage = chunk.get("usage")
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        if not choices:
            return
        if not isinstance(choices, list):
            raise MalformedResponse("`choices` is not a list")
        choice = cast(list[Any], choices)[0]
        if not isinstance(choice, dict):
            raise MalformedResponse("a choice is not an object")
        choice = cast(dict[str, Any], choice)
        delta = choice.get("delta")
        if delta:
            if not isinstance(delta, dict):
                raise MalformedResponse("a choice's delta is not an object")
            self._read_delta(cast(dict[str, Any], delta), out)
        finish = choice.get("finish_reason")
        if finish is not None:
            self._finish = finish
            self._calls.all_ready(out)

    def _read_delta(self, delta: dict[str, Any], out: list[StreamEvent]) -> None:
        content = delta.get("content")
        if content:
            if not isinstance(content, str):
                raise MalformedResponse("delta.content is not a string")
            self._text.append(content)
            out.append(TextDelta(content))
        refusal = delta.get("refusal")
        if refusal:
            if not isinstance(refusal, str):
                raise MalformedResponse("delta.refusal is not a string")
            self._refusal.append(refusal)
        for key in _REASONING_KEYS:
            thought = delta.get(key)
            if thought:
                if not isinstance(thought, str):
                    raise MalformedResponse(f"delta.{key} is not a string")
                self._reasoning.setdefault(key, []).append(thought)
                out.append(ThinkingDelta(thought))
        calls = delta.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise MalformedResponse("delta.tool_calls is not a list")
            for position, item in enumerate(cast(list[Any], calls)):
                if not isinstance(item, dict):
                    raise MalformedResponse("a tool call delta is not an object")
                self._read_call(cast(dict[str, Any], item), position, out)

    def _read_call(self, item: dict[str, Any], position: int, out: list[StreamEvent]) -> None:
        # `index` says which call a fragment belongs to; servers that omit it send one
        # call per delta entry, named by `id` or by position.
        key: Any = item.get("index")
        call_id = item.get("id")
        if key is None:
            key = call_id if isinstance(call_id, str) and call_id else position
        function = item.get("function")
        function = cast(dict[str, Any], function) if isinstance(function, dict) else {}
        calls = self._calls
        if key not in calls:
            name = function.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise MalformedResponse("a tool call starts without an id or a name")
            calls.start(key, call_id, name, out)
        fragment = function.get("arguments")
        if fragment:
            if not isinstance(fragment, str):
                raise MalformedResponse("function.arguments is not a string")
            calls.add(key, fragment, out)

    def finish(self) -> ModelResponse:
        if not self._done:
            raise truncated(self._prompt, "its `[DONE]` line")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._text) if self._text else None,
        }
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        for key, pieces in self._reasoning.items():
            message[key] = "".join(pieces)
        if len(self._calls):
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": "".join(call.fragments)},
                }
                for call in self._calls.in_order()
            ]
        body: dict[str, Any] = {
            **self._identity,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._usage is not None:
            body["usage"] = self._usage
        return self._parse(body)

    def _failure(self, error: Any) -> PromptEvaluationError:
        detail = cast(dict[str, Any], error) if isinstance(error, dict) else {"message": error}
        facts = openai_error_facts(
            openai_error_status(detail), detail, "an error event in the stream"
        )
        return stream_failure(self._prompt, facts, self._secrets)
