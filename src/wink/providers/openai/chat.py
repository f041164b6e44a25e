"""OpenAI Chat Completions: the neutral transcript <-> `POST /chat/completions` JSON
(and OpenAI-compatible servers). Wire facts are in docs/adapters/openai.md."""

from __future__ import annotations

import json
from typing import Any, cast

from ...core.foundation.messages import (
    AssistantMessage,
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from ...core.foundation.settings import ModelSettings
from ...core.transport.errors import MalformedResponse, read_count
from .client import failure_text, strict_schema
from .thinking import openai_reasoning_effort

__all__ = ["PROVIDER", "build_request", "parse_response"]

# --- tables

PROVIDER = "openai"

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}

# ModelSettings field -> request key.
_SETTING_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "max_completion_tokens",
    "top_p": "top_p",
    "stop": "stop",
    "seed": "seed",
}


# --- request building


def build_request(request: ModelRequest, model: str, settings: ModelSettings) -> dict[str, Any]:
    """The Chat Completions body for one neutral request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [_map_message(message) for message in request.messages],
    }
    if request.tools:
        body["tools"] = [_map_tool_spec(spec) for spec in request.tools]
    if request.output is not None:
        schema = strict_schema(request.output.schema)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.output.name,
                "schema": schema if schema is not None else dict(request.output.schema),
                "strict": schema is not None,
            },
        }
    body.update(settings.to_fields(_SETTING_KEYS))
    effort = openai_reasoning_effort(model, settings, PROVIDER)
    if effort is not None:
        body["reasoning_effort"] = effort
    body.update(settings.extra)
    return body


def _map_message(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        return _map_assistant(message)
    return _map_tool_result(message)


def _map_assistant(message: AssistantMessage) -> dict[str, Any]:
    """Text and calls. Chat Completions takes no reasoning back (OpenAI returns none; a
    compatible server's thinking parts are for reading): thinking is never sent."""
    mapped: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.tool_calls:
        mapped["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for call in message.tool_calls
        ]
    return mapped


def _map_tool_result(message: ToolResultMessage) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": message.call_id, "content": failure_text(message)}


def _map_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    schema = strict_schema(spec.parameters)
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": schema if schema is not None else dict(spec.parameters),
    }
    if schema is not None:
        function["strict"] = True
    return {"type": "function", "function": function}


# --- response parsing


def parse_response(body: Any) -> ModelResponse:
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    completion = cast(dict[str, Any], body)
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse("`choices` is missing or empty")
    choice = cast(list[Any], choices)[0]
    if not isinstance(choice, dict):
        raise MalformedResponse("a choice is not an object")
    message = cast(dict[str, Any], choice).get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("the choice has no message")
    message = cast(dict[str, Any], message)
    text, thinking = _parse_content(message.get("content"))
    calls = _parse_tool_calls(message.get("tool_calls"))
    reason = _FINISH_REASONS.get(str(cast(dict[str, Any], choice).get("finish_reason")), "other")
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise MalformedResponse("message.refusal is not a string")
    if refusal:
        reason = "refusal"
    elif calls:
        reason = "tool_calls"
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=_parse_usage(completion.get("usage")),
        finish_reason=reason,
        raw=completion,
        thinking=thinking,
        refusal=refusal or None,
    )


def _parse_content(content: Any) -> tuple[str | None, tuple[ThinkingPart, ...]]:
    """(answer text, thinking): OpenAI sends a string; compatible servers (Mistral) may
    send a list of parts, `text` ones the answer, `thinking` ones reasoning to read."""
    if content is None or isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise MalformedResponse("message.content is neither a string nor a list of parts")
    texts: list[str] = []
    thinking: list[ThinkingPart] = []
    for entry in cast(list[Any], content):
        if not isinstance(entry, dict):
            raise MalformedResponse("a message.content part is not an object")
        part = cast(dict[str, Any], entry)
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise MalformedResponse("a text part of message.content has no text")
            texts.append(text)
        elif kind == "thinking":
            thought = _thinking_text(part.get("thinking"))
            thinking.append(ThinkingPart(PROVIDER, text=thought or None, raw=part))
    return ("".join(texts) if texts else None), tuple(thinking)


def _thinking_text(value: Any) -> str:
    """A thinking part's text: a string, or a list of `{"type": "text", "text"}` parts."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    pieces = (
        cast(dict[str, Any], item).get("text") if isinstance(item, dict) else None
        for item in cast(list[Any], value)
    )
    return "\n\n".join(piece for piece in pieces if isinstance(piece, str) and piece)


def _parse_tool_calls(value: Any) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MalformedResponse("message.tool_calls is not a list")
    calls: list[ToolCall] = []
    for item in cast(list[Any], value):
        call = cast(dict[str, Any], item) if isinstance(item, dict) else {}
        function = call.get("function")
        if not isinstance(function, dict):
            raise MalformedResponse("a tool call has no function")
        function = cast(dict[str, Any], function)
        call_id, name = call.get("id"), function.get("name")
        arguments = function.get("arguments")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise MalformedResponse("a tool call has no id or name")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments) if arguments is not None else ""
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
    return tuple(calls)


def _parse_usage(counts: Any) -> Usage:
    """Some compatible servers send no `usage`: every count is then 0. `reasoning_tokens`
    is part of `completion_tokens`, as wink counts it."""
    return Usage(
        input_tokens=read_count(counts, "prompt_tokens"),
        output_tokens=read_count(counts, "completion_tokens"),
        cached_tokens=read_count(counts, "prompt_tokens_details", "cached_tokens"),
        reasoning_tokens=read_count(counts, "completion_tokens_details", "reasoning_tokens"),
    )
