"""OpenAI Chat Completions: the neutral transcript <-> `POST /chat/completions` JSON
(and OpenAI-compatible servers). Wire facts are in docs/adapters/openai.md."""

from __future__ import annotations

import json
import re
from typing import Any, cast

from ...core.foundation.builtin import refuse_builtin
from ...core.foundation.carriage import Carriage, ContentRules, attachments_after_results
from ...core.foundation.choice import request_tool_choice
from ...core.foundation.content import (
    Audio,
    CachePoint,
    Document,
    Image,
    TextPart,
    UserPart,
    data_url,
)
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
from ...core.transport.errors import MalformedResponse, read_count, read_label
from .client import FILE_BYTES, failure_text, file_name, image_carriage, strict_schema
from .thinking import openai_reasoning_effort

__all__ = ["CONTENT_RULES", "PROVIDER", "build_request", "parse_response"]

# --- tables

PROVIDER = "openai"

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}

# Which role carries the instructions: the first o1 models take no system message at all
# (a 400, `unsupported_value`: they get the instructions at the head of the first user
# message); the reasoning models after them take them as `developer`, the rest as `system`.
_NO_SYSTEM_ROLE = re.compile(r"^o1-(mini|preview)")
_DEVELOPER_ROLE = re.compile(r"^(ft:)?(o\d|gpt-5)")

# ModelSettings (and OpenAISettings) field -> request key.
_SETTING_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "max_completion_tokens",
    "top_p": "top_p",
    "stop": "stop",
    "seed": "seed",
    "prompt_cache_key": "prompt_cache_key",
    "prompt_cache_retention": "prompt_cache_retention",
}

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}  # `input_audio.format`

# A `role: tool` message carries text only: what a tool returned as parts goes in a user
# message right after the results. A plain-text document goes as text; files and audio
# only as bytes (Chat Completions takes no file URL).
CONTENT_RULES = ContentRules(
    (
        image_carriage("after"),
        Carriage(
            frozenset({"application/pdf"}), in_tool_result="after", max_total_bytes=FILE_BYTES
        ),
        Carriage(frozenset({"text/plain"}), in_tool_result="after"),
        Carriage(frozenset(_AUDIO_FORMATS), in_tool_result="after"),
    )
)


# --- request building


def build_request(
    request: ModelRequest,
    model: str,
    settings: ModelSettings,
    *,
    model_id: str | None = None,
    reasoning_echo: str | None = None,
    max_tokens_field: str | None = None,
) -> dict[str, Any]:
    """The Chat Completions body for one neutral request: `model` chooses the rules,
    `model_id` (default `model`) is what the body names. A host that wants the model's
    thinking back on tool-call turns names the field (`reasoning_echo`); a host whose
    output limit has another name says which (`max_tokens_field`)."""
    for tool in request.builtin_tools:  # Chat Completions has no built-in tools
        raise refuse_builtin("OpenAI Chat Completions", tool)
    messages = attachments_after_results(request.messages)
    body: dict[str, Any] = {
        "model": model_id or model,
        "messages": _map_messages(
            messages, model, reasoning_echo, thinking_on=settings.thinking is not None
        ),
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
    keys = _SETTING_KEYS
    if max_tokens_field is not None and max_tokens_field != keys["max_tokens"]:
        keys = {**keys, "max_tokens": max_tokens_field}
    body.update(settings.to_fields(keys))
    body.update(_tool_fields(request, settings))
    effort = openai_reasoning_effort(model, settings, PROVIDER)
    if effort is not None:
        body["reasoning_effort"] = effort
    body.update(settings.extra)
    return body


def _tool_fields(request: ModelRequest, settings: ModelSettings) -> dict[str, Any]:
    """`tool_choice` (a tool's name as a named function) and `parallel_tool_calls`; both
    only with tools, as Chat Completions refuses either without."""
    fields: dict[str, Any] = {}
    choice = request_tool_choice(request, settings)
    if choice is not None:
        named = choice not in ("auto", "required", "none")
        fields["tool_choice"] = (
            {"type": "function", "function": {"name": choice}} if named else choice
        )
    if settings.parallel_tool_calls is not None and request.tools:
        fields["parallel_tool_calls"] = settings.parallel_tool_calls
    return fields


def _map_messages(
    messages: tuple[Message, ...],
    model: str,
    reasoning_echo: str | None = None,
    thinking_on: bool = False,
) -> list[dict[str, Any]]:
    """The messages; instructions in the role this model takes them in, or, for a model
    that takes none, at the head of the user message that follows them."""
    fold = _NO_SYSTEM_ROLE.match(model) is not None
    role = "developer" if _DEVELOPER_ROLE.match(model) else "system"
    mapped: list[dict[str, Any]] = []
    held: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            if fold:
                held.append(message.content)
            else:
                mapped.append({"role": role, "content": message.content})
            continue
        item = _map_message(message, reasoning_echo, thinking_on)
        if held and item["role"] == "user":
            item["content"] = _prefixed("\n\n".join(held), item["content"])
            held = []
        mapped.append(item)
    if held:
        mapped.append({"role": "user", "content": "\n\n".join(held)})
    return mapped


def _prefixed(text: str, content: Any) -> Any:
    """A user message's content with `text` before it (a string, or a list of parts)."""
    if isinstance(content, list):
        return [{"type": "text", "text": text}, *cast(list[Any], content)]
    return f"{text}\n\n{content}"


def _map_message(
    message: Message, reasoning_echo: str | None = None, thinking_on: bool = False
) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        if not message.has_attachments:  # text alone stays a string (compatible servers)
            return {"role": "user", "content": message.text}
        parts = (_map_part(part) for part in message.parts)
        return {"role": "user", "content": [part for part in parts if part is not None]}
    if isinstance(message, AssistantMessage):
        return _map_assistant(message, reasoning_echo, thinking_on)
    return _map_tool_result(message)


def _map_part(part: UserPart) -> dict[str, Any] | None:
    """A content part; a cache point is none (OpenAI caches the prefix on its own)."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, CachePoint):
        return None
    if isinstance(part, Image):
        return {"type": "image_url", "image_url": {"url": data_url(part)}}
    if isinstance(part, Audio):
        audio = {"data": part.base64(), "format": _AUDIO_FORMATS[part.media_type]}
        return {"type": "input_audio", "input_audio": audio}
    return _map_document(part)


def _map_document(part: Document) -> dict[str, Any]:
    text = part.text
    if text is not None:  # no file type for text: it goes as text
        return {"type": "text", "text": text}
    return {"type": "file", "file": {"filename": file_name(part), "file_data": data_url(part)}}


def _map_assistant(
    message: AssistantMessage, reasoning_echo: str | None, thinking_on: bool = False
) -> dict[str, Any]:
    """Text and calls. OpenAI takes no reasoning back (it returns none; a compatible
    server's thinking is for reading), except a host that names `reasoning_echo`: on a
    tool-call turn its thinking goes back in that field (DeepSeek refuses the turn
    without it, even empty)."""
    mapped: dict[str, Any] = {"role": "assistant", "content": message.text}
    own = [part for part in message.thinking if part.provider == PROVIDER]
    if reasoning_echo is not None and message.tool_calls and (own or thinking_on):
        mapped[reasoning_echo] = "".join(part.text or "" for part in own)
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
    thinking = _parse_reasoning(message) + thinking
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
        model=read_label(completion, "model"),
        service_tier=read_label(completion, "service_tier"),
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


_REASONING_FIELDS = ("reasoning_content", "reasoning")  # DeepSeek, vLLM; OpenRouter, Groq


def _parse_reasoning(message: dict[str, Any]) -> tuple[ThinkingPart, ...]:
    """A compatible server's thinking, beside the answer: `reasoning_content` (DeepSeek),
    `reasoning` (OpenRouter, Groq, Ollama), else OpenRouter's `reasoning_details` (its
    text and summary entries; an encrypted entry is kept in `raw`)."""
    for key in _REASONING_FIELDS:
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            raise MalformedResponse(f"message.{key} is not a string")
        if value:
            return (ThinkingPart(PROVIDER, text=value, raw={key: value}),)
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return ()
    parts: list[ThinkingPart] = []
    for entry in cast(list[Any], details):
        if isinstance(entry, dict):
            item = cast(dict[str, Any], entry)
            text = item.get("text") or item.get("summary")
            parts.append(
                ThinkingPart(PROVIDER, text=text if isinstance(text, str) else None, raw=item)
            )
    return tuple(parts)


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
    """Some compatible servers send no `usage`: every count is then 0. `prompt_tokens`
    includes the cached and cache-write tokens, `completion_tokens` the reasoning ones,
    as wink counts them (`Usage`). A host that bills in the answer (OpenRouter's
    `usage.cost`) gives `billed_cost`."""
    return Usage(
        input_tokens=read_count(counts, "prompt_tokens"),
        output_tokens=read_count(counts, "completion_tokens"),
        cached_tokens=read_count(counts, "prompt_tokens_details", "cached_tokens"),
        reasoning_tokens=read_count(counts, "completion_tokens_details", "reasoning_tokens"),
        cache_write_tokens=read_count(counts, "prompt_tokens_details", "cache_write_tokens"),
        billed_cost=_billed_cost(counts),
    )


def _billed_cost(counts: Any) -> float | None:
    """OpenRouter's `usage.cost` (credits billed for the request), if a number."""
    cost = cast(dict[str, Any], counts).get("cost") if isinstance(counts, dict) else None
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return float(cost)
    return None
