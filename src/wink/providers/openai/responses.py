"""OpenAI Responses API: the neutral transcript <-> `POST /responses` JSON.

Client, error map, strict schemas and failure text are shared with Chat Completions
(`wink.providers.openai.client`). Wire facts are in docs/adapters/openai.md.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, cast

from ...core.foundation.builtin import BuiltinToolCall, Citation
from ...core.foundation.carriage import Carriage, ContentRules
from ...core.foundation.choice import request_tool_choice
from ...core.foundation.content import (
    Attachment,
    CachePoint,
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
    NativeOutput,
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
from .builtin import (
    BUILTIN_ITEMS,
    builtin_call,
    map_builtin_tools,
    text_citations,
    titled,
    web_searches,
)
from .client import FILE_BYTES, failure_text, file_name, image_carriage, strict_schema
from .thinking import openai_reasoning_effort

__all__ = ["CONTENT_RULES", "PROVIDER", "build_request", "parse_response"]

# --- tables

PROVIDER = "openai-responses"
_REBUILT_ITEMS = frozenset({"message", "function_call"})

_INCOMPLETE_REASONS: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}

# ModelSettings (and OpenAISettings) field -> request key (the Responses API has no stop
# sequences or seed).
_SETTING_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "max_output_tokens",
    "top_p": "top_p",
    "prompt_cache_key": "prompt_cache_key",
    "prompt_cache_retention": "prompt_cache_retention",
}

# A `function_call_output` carries parts (its `output` a list); no audio input at all.
CONTENT_RULES = ContentRules(
    (
        image_carriage("inside"),
        Carriage(
            frozenset({"application/pdf", "text/plain"}),
            frozenset({"data", "url"}),
            "inside",
            max_total_bytes=FILE_BYTES,
        ),
    )
)

# --- request building


def build_request(request: ModelRequest, model: str, settings: ModelSettings) -> dict[str, Any]:
    """The Responses body for one neutral request; stateless (`store` stays the caller's)."""
    builtin, include = map_builtin_tools(request.builtin_tools)
    instructions = [m.content for m in request.messages if isinstance(m, SystemMessage)]
    body: dict[str, Any] = {"model": model, "input": _map_messages(request.messages)}
    if instructions:
        body["instructions"] = "\n\n".join(instructions)
    if request.tools or builtin:
        body["tools"] = [_map_tool_spec(spec) for spec in request.tools] + builtin
    if request.output is not None:
        schema = strict_schema(request.output.schema)
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": request.output.name,
                "schema": schema if schema is not None else dict(request.output.schema),
                "strict": schema is not None,
            }
        }
    body.update(settings.to_fields(_SETTING_KEYS))
    choice = request_tool_choice(request, settings)
    if choice is not None:
        named = choice not in ("auto", "required", "none")
        body["tool_choice"] = {"type": "function", "name": choice} if named else choice
    if settings.parallel_tool_calls is not None and request.tools:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    body.update(_reasoning_fields(model, settings))
    if include:
        body["include"] = [*body.get("include", ()), *include]
    body.update(settings.extra)
    return body


def _reasoning_fields(model: str, settings: ModelSettings) -> dict[str, Any]:
    """`reasoning` (effort, and a summary when thinking is to be shown) and the encrypted
    reasoning, so reasoning items can go back even with `store: false`."""
    effort = openai_reasoning_effort(model, settings, PROVIDER)
    if effort is None or settings.thinking is None:
        return {}
    reasoning: dict[str, Any] = {"effort": effort}
    if settings.thinking.show:
        reasoning["summary"] = "auto"
    return {"reasoning": reasoning, "include": ["reasoning.encrypted_content"]}


def _map_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": _map_user(message)})
        elif isinstance(message, AssistantMessage):
            items.extend(_map_assistant(message))
        elif isinstance(message, ToolResultMessage):
            items.append(_map_tool_result(message))
    return items


def _map_user(message: UserMessage) -> str | list[dict[str, Any]]:
    if not message.has_attachments:
        return message.text
    parts = (_map_part(part) for part in message.parts)
    return [part for part in parts if part is not None]


def _map_part(part: UserPart) -> dict[str, Any] | None:
    """An input part; a cache point is none (OpenAI caches the prefix on its own)."""
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, CachePoint):
        return None
    return _map_attachment(part)


def _map_attachment(part: Attachment) -> dict[str, Any]:
    if isinstance(part, Image):
        return {"type": "input_image", "image_url": data_url(part)}
    if part.url is not None:
        return {"type": "input_file", "file_url": part.url}
    return {"type": "input_file", "filename": file_name(part), "file_data": data_url(part)}


def _map_assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    """The output items as the API gave them, ids included, when the turn was its own: a
    reasoning item must be followed by the very item it led to. Otherwise the turn is
    rebuilt from text and calls, and its reasoning items are left out with it (an id-less
    item after a reasoning item is refused)."""
    native = message.native_for(PROVIDER)
    if native is not None:
        echoed = _echo_native(native, message.tool_calls)
        if echoed is not None:
            return echoed
    items: list[dict[str, Any]] = []
    if message.text:
        items.append({"role": "assistant", "content": message.text})
    items.extend(_function_call(call) for call in message.tool_calls)
    return items


def _echo_native(native: NativeOutput, calls: tuple[ToolCall, ...]) -> list[dict[str, Any]] | None:
    """Every item verbatim but each `function_call`'s `call_id` and arguments, which are
    the loop's echo of the call in the same place (its id made distinct, its arguments
    sendable, if they were not); None when calls and items disagree."""
    pending = list(calls)
    items: list[dict[str, Any]] = []
    for item in native.items:
        if item.get("type") == "function_call":
            if not pending or pending[0].name != item.get("name"):
                return None
            call = pending.pop(0)
            items.append({**item, "call_id": call.id, "arguments": call.arguments_json()})
        else:
            items.append(dict(item))
    return None if pending else items


def _function_call(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments_json(),
    }


def _map_tool_result(message: ToolResultMessage) -> dict[str, Any]:
    """Text, or with parts the list of them (the text first, when there is any)."""
    output: str | list[dict[str, Any]] = failure_text(message)
    if message.attachments:
        text = [{"type": "input_text", "text": output}] if output else []
        output = text + [_map_attachment(part) for part in message.attachments]
    return {"type": "function_call_output", "call_id": message.call_id, "output": output}


def _map_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    schema = strict_schema(spec.parameters)
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": schema if schema is not None else dict(spec.parameters),
        "strict": schema is not None,
    }


# --- response parsing


def parse_response(body: Any) -> ModelResponse:
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    response = cast(dict[str, Any], body)
    output = response.get("output")
    if not isinstance(output, list):
        raise MalformedResponse("`output` is missing or not a list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[ThinkingPart] = []
    items: list[dict[str, Any]] = []
    refusals: list[str] = []
    ran: list[BuiltinToolCall] = []
    citations: list[Citation] = []
    for entry in cast(list[Any], output):
        if not isinstance(entry, dict):
            raise MalformedResponse("an output item is not an object")
        item = cast(dict[str, Any], entry)
        items.append(item)
        kind = item.get("type")
        if kind == "message":
            _parse_message_content(item, texts, refusals, citations)
        elif kind == "function_call":
            calls.append(_parse_tool_call(item))
        elif kind == "reasoning":
            thinking.append(_parse_reasoning(item))
        elif kind in BUILTIN_ITEMS:
            ran.append(builtin_call(item, PROVIDER))
    usage = _parse_usage(response.get("usage"))
    searches = web_searches(response, items)
    refused = bool(refusals)
    return ModelResponse(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        usage=replace(usage, web_search_requests=searches) if searches else usage,
        finish_reason=_parse_finish_reason(response, refused=refused, has_calls=bool(calls)),
        raw=response,
        thinking=tuple(thinking),
        native=_native(items),
        refusal="".join(refusals) or None,
        model=read_label(response, "model"),
        service_tier=read_label(response, "service_tier"),
        builtin_calls=titled(ran, citations),
        citations=tuple(citations),
    )


def _native(items: list[dict[str, Any]]) -> NativeOutput | None:
    """The items for an exact echo when it matters: a turn of messages and calls only
    is rebuilt just as well (and id-free) from its text and calls."""
    if all(item.get("type") in _REBUILT_ITEMS for item in items):
        return None
    return NativeOutput(PROVIDER, tuple(items))


def _parse_reasoning(item: dict[str, Any]) -> ThinkingPart:
    """A reasoning item: its summary texts (when asked for) and encrypted content."""
    summary = item.get("summary")
    texts: list[str] = []
    for part in cast(list[Any], summary) if isinstance(summary, list) else []:
        text = cast(dict[str, Any], part).get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text:
            texts.append(text)
    encrypted = item.get("encrypted_content")
    return ThinkingPart(
        PROVIDER,
        text="\n\n".join(texts) or None,
        redacted=encrypted if isinstance(encrypted, str) else None,
        raw=item,
    )


def _parse_message_content(
    item: dict[str, Any], texts: list[str], refusals: list[str], citations: list[Citation]
) -> None:
    """Collect output text with its citations (their spans over the whole answer), and
    refusal text (a `refusal` part, its words maybe empty)."""
    content = item.get("content")
    if not isinstance(content, list):
        raise MalformedResponse("a message item has no content list")
    for part in cast(list[Any], content):
        block = cast(dict[str, Any], part) if isinstance(part, dict) else {}
        if block.get("type") == "output_text":
            text = block.get("text")
            if not isinstance(text, str):
                raise MalformedResponse("an output_text part has no text")
            citations.extend(text_citations(block, sum(map(len, texts))))
            texts.append(text)
        elif block.get("type") == "refusal":
            words = block.get("refusal")
            if words is not None and not isinstance(words, str):
                raise MalformedResponse("a refusal part's refusal is not a string")
            refusals.append(words or "")


def _parse_tool_call(item: dict[str, Any]) -> ToolCall:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise MalformedResponse("a function_call item has no call_id or name")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments) if arguments is not None else ""
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _parse_finish_reason(
    response: dict[str, Any], *, refused: bool, has_calls: bool
) -> FinishReason:
    if refused:
        return "refusal"
    if response.get("status") == "incomplete":
        details = response.get("incomplete_details")
        reason = cast(dict[str, Any], details).get("reason") if isinstance(details, dict) else None
        return _INCOMPLETE_REASONS.get(str(reason), "other")
    if response.get("status") == "failed":
        return "error"
    return "tool_calls" if has_calls else "stop"


def _parse_usage(counts: Any) -> Usage:
    """`input_tokens` includes the cached and cache-write tokens, `output_tokens` the
    reasoning ones, as wink counts them (`Usage`)."""
    return Usage(
        input_tokens=read_count(counts, "input_tokens"),
        output_tokens=read_count(counts, "output_tokens"),
        cached_tokens=read_count(counts, "input_tokens_details", "cached_tokens"),
        reasoning_tokens=read_count(counts, "output_tokens_details", "reasoning_tokens"),
        cache_write_tokens=read_count(counts, "input_tokens_details", "cache_write_tokens"),
    )
