"""Anthropic Messages: the neutral transcript <-> `POST /v1/messages` JSON.

Wire facts (bearer auth, 529 overloaded, rate-limit headers) and the resulting
requests are in docs/adapters/anthropic.md.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

# --- guarded SDK import

try:
    import anthropic
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the Anthropic adapter needs the anthropic SDK: pip install 'wink[anthropic]'"
    ) from _missing

from ...core.foundation.builtin import Citation
from ...core.foundation.carriage import MB, Carriage, ContentRules
from ...core.foundation.choice import request_tool_choice
from ...core.foundation.content import (
    Attachment,
    CachePoint,
    Document,
    Image,
    TextPart,
)
from ...core.foundation.errors import ConfigurationError, UnsupportedSettingWarning
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
    output_tool_spec,
)
from ...core.foundation.settings import ModelSettings
from ...core.throttling.headers import RateLimitHeaders
from ...core.transport.errors import (
    MalformedResponse,
    SdkErrors,
    StatusFacts,
    map_sdk_errors,
    read_count,
    read_label,
)
from .server_tools import builtin_calls, map_builtin_tools, text_citations
from .thinking import anthropic_thinking

__all__ = [
    "CONTENT_RULES",
    "ERROR_STATUS",
    "PROVIDER",
    "RATE_LIMIT_HEADERS",
    "anthropic_error_facts",
    "build_request",
    "map_errors",
    "parse_response",
]

# --- tables

PROVIDER = "anthropic"  # the tag on the thinking this translator reads and sends back
_DEFAULT_MAX_TOKENS = 4096  # the API requires max_tokens; a generous default
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "paused",
}

# Images and documents travel inside a `tool_result` too; there is no audio input. The
# documented limits: 5 MB an image in base64, 100 images and 32 MB a request (docs/adapters).
CONTENT_RULES = ContentRules(
    (
        Carriage(
            frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"}),
            frozenset({"data", "url"}),
            "inside",
            max_bytes=5 * MB,
            max_count=100,
            encoded=True,
        ),
        Carriage(frozenset({"application/pdf"}), frozenset({"data", "url"}), "inside"),
        Carriage(frozenset({"text/plain"}), in_tool_result="inside"),
    ),
    max_request_bytes=32 * MB,
    cites_documents=True,
)
_MAX_CACHE_POINTS = 4  # `cache_control` breakpoints a request may carry
_CACHED = {"type": "ephemeral"}

# ModelSettings field -> request key.
_SETTING_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "stop": "stop_sequences",
}


# --- request building


def build_request(request: ModelRequest, model: str, settings: ModelSettings) -> dict[str, Any]:
    """The Messages API body for one neutral request."""
    system, messages = _map_messages(request.messages)
    thinking = anthropic_thinking(model, settings)
    budget = cast(int, thinking["thinking"].get("budget_tokens", 0)) if thinking else 0
    body: dict[str, Any] = {
        "model": model,
        # thinking tokens count toward max_tokens: the default leaves room for the answer
        "max_tokens": settings.max_tokens or budget + _DEFAULT_MAX_TOKENS,
        "messages": messages,
    }
    _keep_last_cache_points(messages)
    if system:
        body["system"] = system
    tools = [_map_tool_spec(spec) for spec in request.tools]
    if request.output is not None:
        tools.append(_map_tool_spec(output_tool_spec(request.output)))
    tools.extend(map_builtin_tools(request.builtin_tools)[0])
    choice = _tool_choice(request, settings, bool(thinking))  # refuses what none could carry
    if tools:
        body["tools"] = tools
        if choice is not None:
            body["tool_choice"] = choice
    body.update(settings.to_fields(_SETTING_KEYS))
    if thinking and _foreign_tool_round(request.messages):
        warnings.warn(
            "thinking is off for this Anthropic request: the tool calls it answers were not "
            "Claude's (another provider made them), and with thinking on Anthropic refuses "
            "such a turn; it is on again from the next user message (filter "
            "UnsupportedSettingWarning to silence)",
            UnsupportedSettingWarning,
            stacklevel=2,
        )
        thinking = {}
    body.update(thinking)
    body.update(settings.extra)
    return body


_CHOICE_TYPES = {"auto": "auto", "required": "any", "none": "none"}


def _tool_choice(
    request: ModelRequest, settings: ModelSettings, thinking: bool
) -> dict[str, Any] | None:
    """`tool_choice`: `auto`, `any` ("required"), `none`, or `tool` with its name; with
    `disable_parallel_tool_use` when `parallel_tool_calls=False` (not on `none`). With a
    structured output (a tool here), "none" forces the output tool: the prompt's tools
    are off, and the answer can still be given."""
    choice = request_tool_choice(request, settings)
    if choice == "none" and request.output is not None:
        if thinking:
            raise ConfigurationError(
                'tool_choice="none" with a structured output forces the output tool on '
                'Anthropic, which refuses a forced tool with thinking on: use "auto" or '
                "turn thinking off",
                provider="anthropic",
                option="tool_choice",
            )
        return {"type": "tool", "name": output_tool_spec(request.output).name}
    serial = settings.parallel_tool_calls is False
    if choice is None and not serial:
        return None
    kind = _CHOICE_TYPES.get(choice or "auto", "tool")
    mapped: dict[str, Any] = {"type": kind}
    if kind == "tool":
        mapped["name"] = choice
    if serial and kind != "none":
        mapped["disable_parallel_tool_use"] = True
    return mapped


def _foreign_tool_round(messages: Iterable[Message]) -> bool:
    """Whether the current tool loop (the turns since the last user message) holds tool
    calls that are not Claude's (another provider made them, or they were rebuilt
    without their blocks). With thinking on, Anthropic refuses a final assistant turn
    calling tools without a thinking block first (a 400), no signature can be made up for
    another model's turn, and thinking stays the same across one assistant turn, tool
    rounds included: such a loop goes on with thinking off. Claude's own turns go back
    as they came, with or without thinking (adaptive thinking may skip it)."""
    for message in reversed(list(messages)):
        if isinstance(message, UserMessage):
            return False
        if (
            isinstance(message, AssistantMessage)
            and message.tool_calls
            and message.native_for(PROVIDER) is None
            and not message.thinking_for(PROVIDER)
        ):
            return True
    return False


def _map_messages(messages: Iterable[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, alternating user/assistant messages); consecutive user turns merge."""
    system: list[str] = []
    mapped: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.content)
            continue
        role, blocks = _map_message(message)
        if mapped and mapped[-1]["role"] == role:
            mapped[-1]["content"].extend(blocks)
        else:
            mapped.append({"role": role, "content": blocks})
    return "\n\n".join(system), mapped


def _map_message(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", _map_user(message)
    if isinstance(message, AssistantMessage):
        return "assistant", _map_assistant(message)
    if isinstance(message, ToolResultMessage):
        return "user", [_map_tool_result(message)]
    raise TypeError(f"cannot send {type(message).__name__} to Anthropic")


def _map_user(message: UserMessage) -> list[dict[str, Any]]:
    """Text, image and document blocks; a cache point marks the block before it."""
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, CachePoint):
            if blocks:
                blocks[-1]["cache_control"] = dict(_CACHED)
        elif isinstance(part, TextPart):
            if _has_text(part.text):
                blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append(_map_attachment(part))
    return blocks


def _map_attachment(part: Attachment) -> dict[str, Any]:
    """An `image` or `document` block, its source base64, a URL, or (plain text) text."""
    if part.url is not None:
        source: dict[str, Any] = {"type": "url", "url": part.url}
    elif isinstance(part, Document) and part.text is not None:
        source = {"type": "text", "media_type": part.media_type, "data": part.text}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": part.base64()}
    block: dict[str, Any] = {"type": "image" if isinstance(part, Image) else "document"}
    block["source"] = source
    if isinstance(part, Document) and part.name:
        block["title"] = part.name
    if isinstance(part, Document) and part.citations:
        block["citations"] = {"enabled": True}
    return block


def _keep_last_cache_points(messages: list[dict[str, Any]]) -> None:
    """At most `_MAX_CACHE_POINTS` marked blocks (the API refuses more): the last ones are
    kept, which cache the longest prefixes (docs/caching.md)."""
    marked = [
        block
        for message in messages
        for block in cast(list[dict[str, Any]], message["content"])
        if "cache_control" in block
    ]
    for block in marked[:-_MAX_CACHE_POINTS]:
        del block["cache_control"]


def _map_assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    """The turn as Claude gave it when it was Claude's (thinking blocks intact and first,
    server tool blocks kept: what `pause_turn` and a tool round with thinking need), else
    rebuilt from text and calls. Another provider's thinking is never sent."""
    native = message.native_for(PROVIDER)
    if native is not None:
        echoed = _echo_native(native, message.tool_calls)
        if echoed is not None:
            return echoed
    blocks = [_thinking_block(part) for part in message.thinking_for(PROVIDER)]
    if _has_text(message.text):
        blocks.append({"type": "text", "text": message.text})
    blocks.extend(_tool_use_block(call) for call in message.tool_calls)
    return blocks


def _echo_native(native: NativeOutput, calls: tuple[ToolCall, ...]) -> list[dict[str, Any]] | None:
    """The blocks as received, each `tool_use` with the loop's echo of its call in the
    same place (its id, which may have been made distinct, and its arguments, which may
    have been made sendable), and without the text blocks of no text Claude may answer
    beside its calls (the API refuses them back); None when the calls do not match."""
    pending = list(calls)
    blocks: list[dict[str, Any]] = []
    for item in native.items:
        if item.get("type") == "tool_use":
            if not pending or pending[0].name != item.get("name"):
                return None
            call = pending.pop(0)
            blocks.append({**item, "id": call.id, "input": _tool_use_block(call)["input"]})
        elif item.get("type") != "text" or _has_text(item.get("text")):
            blocks.append(dict(item))
    return None if pending else blocks


def _has_text(text: object) -> bool:
    """Whether a text block of `text` may be sent: the Messages API refuses one with no
    text or only whitespace (400 "text content blocks must be non-empty")."""
    return isinstance(text, str) and bool(text.strip())


def _thinking_block(part: ThinkingPart) -> dict[str, Any]:
    if part.raw is not None:
        return dict(part.raw)
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    return {"type": "thinking", "thinking": part.text or "", "signature": part.signature or ""}


def _tool_use_block(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": _input_of(call)}


def _input_of(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as the object `input` must be. A JSON string (every call made
    on OpenAI, when another provider's transcript continues here) is decoded; input that
    was not an object went back to the model as a failed tool result, and its echo is
    `{}`."""
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, parse_constant=_not_json)
        except ValueError:
            return {}
    return dict(cast("Mapping[str, Any]", arguments)) if isinstance(arguments, Mapping) else {}


def _not_json(constant: str) -> Any:
    """`Infinity` / `NaN` are not JSON (the body would not encode): treated as broken."""
    raise ValueError(f"{constant} is not JSON")


def _map_tool_result(message: ToolResultMessage) -> dict[str, Any]:
    """Text, or with parts a list of blocks (the text first, when there is any)."""
    content: str | list[dict[str, Any]] = message.content
    if message.attachments:
        text = [{"type": "text", "text": message.content}] if _has_text(message.content) else []
        content = text + [_map_attachment(part) for part in message.attachments]
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.call_id,
        "content": content,
    }
    if not message.success:
        block["is_error"] = True
    return block


def _map_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


# --- response parsing


def parse_response(body: Any) -> ModelResponse:
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    message = cast(dict[str, Any], body)
    content = message.get("content")
    if not isinstance(content, list):
        raise MalformedResponse("`content` is missing or not a list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[ThinkingPart] = []
    blocks: list[dict[str, Any]] = []
    citations: list[Citation] = []
    at = 0  # where the next text block starts in the answer
    for block in cast(list[Any], content):
        if not isinstance(block, dict):
            raise MalformedResponse("a content block is not an object")
        item = cast(dict[str, Any], block)
        blocks.append(item)
        kind = item.get("type")
        if kind == "text":
            text = item.get("text")
            if not isinstance(text, str):
                raise MalformedResponse("a text block has no text")
            texts.append(text)
            citations.extend(text_citations(item, (at, at + len(text))))
            at += len(text)
        elif kind == "tool_use":
            calls.append(_parse_tool_call(item))
        elif kind in _THINKING_BLOCKS:
            thinking.append(_parse_thinking(item))
    reason = _FINISH_REASONS.get(str(message.get("stop_reason")), "other")
    usage = _parse_usage(message.get("usage"))
    native = NativeOutput(PROVIDER, tuple(blocks))
    model = read_label(message, "model")
    tier = read_label(message, "usage", "service_tier")
    ran = builtin_calls(blocks, PROVIDER)
    if calls:
        return ModelResponse(
            text="".join(texts) or None,
            tool_calls=tuple(calls),
            usage=usage,
            finish_reason="tool_calls",
            raw=message,
            thinking=tuple(thinking),
            native=native,
            model=model,
            service_tier=tier,
            builtin_calls=ran,
            citations=tuple(citations),
        )
    if reason == "tool_calls":
        raise MalformedResponse("stop_reason is tool_use but there is no tool_use block")
    return ModelResponse(
        text="".join(texts),
        usage=usage,
        finish_reason=reason,
        raw=message,
        thinking=tuple(thinking),
        native=native,
        refusal=_refusal_explanation(message.get("stop_details")) if reason == "refusal" else None,
        model=model,
        service_tier=tier,
        builtin_calls=ran,
        citations=tuple(citations),
    )


def _refusal_explanation(details: Any) -> str | None:
    """`stop_details.explanation` of a refusal: Anthropic's words for it, when it gave any
    (the text blocks are what the model wrote before its classifiers stopped it)."""
    if details is None:
        return None
    if not isinstance(details, dict):
        raise MalformedResponse("stop_details is not an object")
    explanation = cast(dict[str, Any], details).get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise MalformedResponse("stop_details.explanation is not a string")
    return explanation or None


def _parse_thinking(block: dict[str, Any]) -> ThinkingPart:
    """A `thinking` block (text, maybe empty when display is omitted, and signature) or a
    `redacted_thinking` one (encrypted `data`); kept whole in `raw` for the echo."""
    if block.get("type") == "redacted_thinking":
        data = block.get("data")
        if not isinstance(data, str):
            raise MalformedResponse("a redacted_thinking block has no data")
        return ThinkingPart(PROVIDER, redacted=data, raw=block)
    text, signature = block.get("thinking"), block.get("signature")
    if not isinstance(text, str) or not isinstance(signature, str):
        raise MalformedResponse("a thinking block has no thinking text or signature")
    return ThinkingPart(PROVIDER, text=text or None, signature=signature, raw=block)


def _parse_tool_call(block: dict[str, Any]) -> ToolCall:
    call_id, name = block.get("id"), block.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise MalformedResponse("a tool_use block has no id or name")
    tool_input = block.get("input")
    # An input that is not an object is kept raw: the executor reports it to the model.
    arguments: str | Mapping[str, Any] = (
        cast(dict[str, Any], tool_input)
        if isinstance(tool_input, dict)
        else tool_input
        if isinstance(tool_input, str)
        else json.dumps(tool_input)
    )
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _parse_usage(value: Any) -> Usage:
    """Anthropic's `input_tokens` excludes cache reads and writes; wink's includes them.
    `output_tokens` includes thinking; newer answers count it apart (`thinking_tokens`).
    `cache_creation` splits the writes by how long they last (1 hour costs more)."""
    if not isinstance(value, dict):
        raise MalformedResponse("`usage` is missing")
    counts = cast(dict[str, Any], value)
    fresh = read_count(counts, "input_tokens")
    read = read_count(counts, "cache_read_input_tokens")
    written = read_count(counts, "cache_creation_input_tokens")
    return Usage(
        input_tokens=fresh + read + written,
        output_tokens=read_count(counts, "output_tokens"),
        cached_tokens=read,
        reasoning_tokens=read_count(counts, "output_tokens_details", "thinking_tokens"),
        cache_write_tokens=written,
        cache_write_1h_tokens=read_count(counts, "cache_creation", "ephemeral_1h_input_tokens"),
        web_search_requests=read_count(counts, "server_tool_use", "web_search_requests"),
    )


# --- error mapping


# 429s that waiting seconds does not lift (the SDK picks them by `error.details.error_code`).
_SPEND_LIMITS = (anthropic.ContractSpendLimitReachedError, anthropic.EnforcedSpendLimitReachedError)


# What an invalid_request_error says when the input does not fit the context window:
# "prompt is too long: 208656 tokens > 200000 maximum", or, with the room max_tokens asks,
# "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, ...".
_CONTEXT_WINDOW_WORDS = ("prompt is too long", "exceed context limit")
# An empty balance is a 400 invalid_request_error, not a 429 or a 402 (docs/adapters).
_NO_CREDIT_WORDS = "credit balance is too low"


# The error type of an error body -> the HTTP status it stands for (the API's table), for
# the bodies that come without one: a stream's error event, a batch's errored item.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def anthropic_error_facts(
    status: int,
    body: Any,
    default_message: str,
    headers: Mapping[str, str] | None = None,
    *,
    spend_limit: bool = False,
) -> StatusFacts:
    """What an Anthropic error body (`{"type": "error", "error": {"type", "message"}}`)
    says, for an error answer and a stream's `error` event alike."""
    detail = cast(dict[str, Any], body).get("error") if isinstance(body, dict) else None
    detail = cast(dict[str, Any], detail) if isinstance(detail, dict) else {}
    kind, message = detail.get("type"), detail.get("message")
    text = message if isinstance(message, str) else default_message
    lowered = text.lower()
    invalid = kind == "invalid_request_error"
    return StatusFacts(
        status=status,
        message=text,
        body=body,
        headers=headers,
        quota_exhausted=spend_limit
        or status == ERROR_STATUS["billing_error"]  # a 402 is out of credit, whatever the body
        or kind == "billing_error"
        or _NO_CREDIT_WORDS in lowered,
        # Anthropic answers 429 only for the organization's own limits (its capacity
        # runs short with a 529): a `rate_limit_error` always names one.
        limit_named=kind == "rate_limit_error",
        context_window_exceeded=invalid and any(w in lowered for w in _CONTEXT_WINDOW_WORDS),
    )


def _status_facts(error: anthropic.APIStatusError) -> StatusFacts:
    # the whole body: {"type": "error", "error": {...}, "request_id"}
    return anthropic_error_facts(
        error.status_code,
        error.body,
        str(error),
        error.response.headers,
        spend_limit=isinstance(error, _SPEND_LIMITS),
    )


# Anthropic's allowance headers; their resets are RFC 3339 times.
RATE_LIMIT_HEADERS = RateLimitHeaders(
    requests=(
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
    resets=tuple(
        (f"anthropic-ratelimit-{allowance}-remaining", f"anthropic-ratelimit-{allowance}-reset")
        for allowance in ("requests", "tokens", "input-tokens", "output-tokens")
    ),
    retry_after_ms="retry-after-ms",  # the wait in milliseconds, before retry-after
)

_ERRORS = SdkErrors(
    sdk="anthropic",
    status=(anthropic.APIStatusError,),
    facts=_status_facts,
    timeout=(anthropic.APITimeoutError,),
    connection=(anthropic.APIConnectionError,),
    unreadable=(anthropic.APIResponseValidationError, json.JSONDecodeError),
    other=(anthropic.AnthropicError,),
    rate_limit_headers=RATE_LIMIT_HEADERS,
)


def map_errors(
    prompt_name: str, secrets: Iterable[str] = (), model: str | None = None
) -> AbstractContextManager[None]:
    """anthropic SDK exceptions -> the typed contract (shared table logic in core)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets, model=model)
