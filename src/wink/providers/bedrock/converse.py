"""Bedrock's Converse API: the neutral transcript <-> `POST /model/{modelId}/converse` JSON.

One request shape for every model Bedrock serves (Claude, Llama, Mistral, Nova...):
`system` blocks, `messages` of content blocks (`text`, `image`, `document`, `toolUse`,
`toolResult`, `reasoningContent`, `cachePoint`), `inferenceConfig`, `toolConfig`, and
`additionalModelRequestFields` for what only the model takes (Claude's `thinking`).
Wire facts and limits are in docs/hosts/bedrock.md.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, cast

from ...core.foundation.builtin import Citation
from ...core.foundation.carriage import MB, Carriage, ContentRules
from ...core.foundation.choice import request_tool_choice
from ...core.foundation.content import Attachment, CachePoint, Document, Image, TextPart
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
from ...core.transport.errors import MalformedResponse, read_count
from .citations import cited_block, cited_text

__all__ = [
    "CONTENT_RULES",
    "PROVIDER",
    "build_request",
    "parse_response",
    "parse_usage",
    "stop_reason",
    "thinking_fields",
]

PROVIDER = "bedrock"  # the tag on the thinking this translator reads and sends back

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}

# What Converse reads as bytes (it takes S3 locations too, never URLs): images up to
# 3.75 MB and 20 a request, documents up to 4.5 MB and 5 a request; both inside a
# toolResult as well.
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS = {"application/pdf": "pdf", "text/plain": "txt"}
CONTENT_RULES = ContentRules(
    (
        Carriage(
            frozenset(_IMAGE_FORMATS),
            in_tool_result="inside",
            max_bytes=3_932_160,  # 3.75 MB
            max_count=20,
        ),
        Carriage(
            frozenset(_DOCUMENT_FORMATS),
            in_tool_result="inside",
            max_bytes=4_718_592,  # 4.5 MB
            max_count=5,
        ),
    ),
    max_request_bytes=20 * MB,
    cites_documents=True,  # `citations` on a document block (citations.py)
)
_MAX_CACHE_POINTS = 4  # cache checkpoints a request may carry
_CACHE_POINT = {"cachePoint": {"type": "default"}}
# A document's name: letters, digits, single spaces, hyphens, parentheses and brackets.
_NAME_REFUSED = re.compile(r"[^A-Za-z0-9\-()\[\] ]+")

_SETTING_KEYS = {"max_tokens": "maxTokens", "temperature": "temperature", "top_p": "topP"}
_DEFAULT_MAX_TOKENS = 4096  # Claude requires maxTokens once thinking is on
# The models whose Converse takes `toolChoice` beyond auto (AWS's model feature table).
_TOOL_CHOICE_MODELS = re.compile(r"anthropic\.claude|mistral\.mistral-large|amazon\.nova")
_CLAUDE = re.compile(r"anthropic\.claude")
_CLAUDE_MIN_BUDGET = 1024


# --- request building


def build_request(request: ModelRequest, model: str, settings: ModelSettings) -> dict[str, Any]:
    """The Converse body for one neutral request (the model is in the path)."""
    system, messages = _map_messages(request.messages)
    _keep_last_cache_points(messages)
    body: dict[str, Any] = {"messages": messages}
    if system:
        body["system"] = system
    thinking = thinking_fields(model, settings)
    if thinking and _foreign_tool_round(request.messages):
        warnings.warn(
            "thinking is off for this Bedrock request: the tool calls it answers were not "
            "made on Bedrock, and with thinking on Claude refuses such a turn; it is on "
            "again from the next user message (filter UnsupportedSettingWarning to silence)",
            UnsupportedSettingWarning,
            stacklevel=2,
        )
        thinking = {}
    inference = settings.to_fields(_SETTING_KEYS)
    if settings.stop is not None:
        inference["stopSequences"] = list(settings.stop)
    if thinking:
        budget = cast(int, thinking["thinking"]["budget_tokens"])
        inference.setdefault("maxTokens", budget + _DEFAULT_MAX_TOKENS)
        body["additionalModelRequestFields"] = thinking
    if inference:
        body["inferenceConfig"] = inference
    config = _tool_config(request, settings, model, bool(thinking))
    if config is not None:
        body["toolConfig"] = config
    for key, value in settings.extra.items():
        if isinstance(value, Mapping) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **cast(Mapping[str, Any], value)}
        else:
            body[key] = value
    return body


def _tool_config(
    request: ModelRequest, settings: ModelSettings, model: str, thinking: bool
) -> dict[str, Any] | None:
    """`toolConfig`: the tools, and `toolChoice` where the model takes it (`any` for
    "required", `tool` for a name; with a structured output and no choice, `any`: the
    answer is a call, text is not one). Converse has no "none": the prompt's tools are
    left out instead, unless the conversation holds tool blocks (Bedrock then needs
    `toolConfig`), where the choice cannot be carried and is warned about."""
    choice = request_tool_choice(request, settings)  # refuses a choice no request could carry
    specs = list(request.tools)
    if choice == "none":
        if _has_tool_blocks(request.messages):
            _warn_choice(model, "none")
        else:
            specs = []
        choice = None
    tools = [_map_tool_spec(spec) for spec in specs]
    if request.output is not None:
        tools.append(_map_tool_spec(output_tool_spec(request.output)))
    if not tools:
        return None
    config: dict[str, Any] = {"tools": tools}
    takes_choice = _TOOL_CHOICE_MODELS.search(model) is not None
    if choice in (None, "auto"):
        if request.output is not None and not thinking and takes_choice:
            config["toolChoice"] = {"any": {}}
    elif not takes_choice:
        _warn_choice(model, choice)
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    else:
        config["toolChoice"] = {"tool": {"name": choice}}
    return config


def _has_tool_blocks(messages: Iterable[Message]) -> bool:
    return any(
        isinstance(message, ToolResultMessage)
        or (isinstance(message, AssistantMessage) and bool(message.tool_calls))
        for message in messages
    )


def _warn_choice(model: str, choice: str) -> None:
    why = (
        "Converse has no tool choice of none and this conversation holds tool calls"
        if choice == "none"
        else f"{model} takes no tool choice on Bedrock's Converse"
    )
    warnings.warn(
        f"tool_choice={choice!r} is not sent: {why} (filter UnsupportedSettingWarning to silence)",
        UnsupportedSettingWarning,
        stacklevel=4,
    )


def thinking_fields(model: str, settings: ModelSettings) -> dict[str, Any]:
    """Claude's `thinking` for `additionalModelRequestFields` (a token budget); other
    models' reasoning is theirs to switch (`extra_body`), so `thinking=` is refused."""
    asked = settings.thinking
    if asked is None:
        return {}
    if not _CLAUDE.search(model):
        raise _thinking_error(
            f"thinking= is Claude's on Bedrock; {model} takes its own reasoning fields "
            "through extra_body={'additionalModelRequestFields': {...}}"
        )
    budget = asked.budget_tokens
    if budget is None:
        raise _thinking_error(
            "Claude on Bedrock's Converse takes a thinking budget: use "
            "Thinking(budget_tokens=...) or thinking=2048"
        )
    if budget < _CLAUDE_MIN_BUDGET:
        raise _thinking_error(f"Claude's thinking budget is at least 1024 tokens, got {budget}")
    if settings.max_tokens is not None and settings.max_tokens <= budget:
        raise _thinking_error(
            f"max_tokens ({settings.max_tokens}) must be above the thinking budget ({budget})"
        )
    if settings.temperature is not None and settings.temperature != 1:
        raise _thinking_error("Claude takes no temperature other than 1 with thinking on")
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


def _thinking_error(message: str) -> ConfigurationError:
    return ConfigurationError(message, provider=PROVIDER, option="thinking")


def _foreign_tool_round(messages: Iterable[Message]) -> bool:
    """Whether the current tool loop holds calls not made on Bedrock: with thinking on,
    Claude refuses an assistant tool turn that lacks its own signed thinking."""
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


def _map_messages(messages: Iterable[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, alternating user/assistant messages); same-role turns merge."""
    system: list[dict[str, Any]] = []
    mapped: list[dict[str, Any]] = []
    documents = _Names()
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"text": message.content})
            continue
        if isinstance(message, UserMessage):
            role, blocks = "user", _map_user(message, documents)
        elif isinstance(message, AssistantMessage):
            role, blocks = "assistant", _map_assistant(message)
        elif isinstance(message, ToolResultMessage):  # pyright: ignore[reportUnnecessaryIsInstance]
            role, blocks = "user", [_map_tool_result(message, documents)]
        else:  # pragma: no cover - the Message union is closed
            raise TypeError(f"cannot send {type(message).__name__} to Bedrock")
        if mapped and mapped[-1]["role"] == role:
            mapped[-1]["content"].extend(blocks)
        else:
            mapped.append({"role": role, "content": blocks})
    return system, mapped


class _Names:
    """Document names, unique in a request as Converse requires."""

    __slots__ = ("_used",)

    def __init__(self) -> None:
        self._used: set[str] = set()

    def name(self, part: Document) -> str:
        base = " ".join(_NAME_REFUSED.sub(" ", part.name or "").split())[:180] or "document"
        name, number = base, 1
        while name in self._used:
            number += 1
            name = f"{base} ({number})"
        self._used.add(name)
        return name


def _map_user(message: UserMessage, documents: _Names) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, CachePoint):
            if blocks:
                blocks.append(dict(_CACHE_POINT))
        elif isinstance(part, TextPart):
            blocks.append({"text": part.text})
        else:
            blocks.append(_map_attachment(part, documents))
    return blocks


def _map_attachment(part: Attachment, documents: _Names) -> dict[str, Any]:
    """An `image` or `document` block with its bytes (base64 in JSON); the content rules
    refused URLs and other media before this."""
    source = {"bytes": part.base64()}
    if isinstance(part, Image):
        return {"image": {"format": _IMAGE_FORMATS[part.media_type], "source": source}}
    if isinstance(part, Document):
        document: dict[str, Any] = {
            "format": _DOCUMENT_FORMATS[part.media_type],
            "name": documents.name(part),
            "source": source,
        }
        if part.citations:
            document["citations"] = {"enabled": True}
        return {"document": document}
    raise TypeError(f"Bedrock cannot carry {part.describe()}")  # refused before, by the rules


def _keep_last_cache_points(messages: list[dict[str, Any]]) -> None:
    """At most `_MAX_CACHE_POINTS` checkpoints: the last, which cache the longest prefix."""
    seen = 0
    for message in reversed(messages):
        content = cast(list[dict[str, Any]], message["content"])
        for index in range(len(content) - 1, -1, -1):
            if "cachePoint" in content[index]:
                seen += 1
                if seen > _MAX_CACHE_POINTS:
                    del content[index]


def _map_assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    """The turn as Bedrock gave it when it was Bedrock's (reasoning blocks first and
    signed), else rebuilt from text and calls; other wires' thinking is never sent."""
    native = message.native_for(PROVIDER)
    if native is not None:
        echoed = _echo_native(native, message.tool_calls)
        if echoed is not None:
            return echoed
    blocks = [_reasoning_block(part) for part in message.thinking_for(PROVIDER)]
    if message.text:
        blocks.append({"text": message.text})
    blocks.extend(_tool_use_block(call) for call in message.tool_calls)
    return blocks


def _echo_native(native: NativeOutput, calls: tuple[ToolCall, ...]) -> list[dict[str, Any]] | None:
    by_id = {call.id: call for call in calls}
    blocks: list[dict[str, Any]] = []
    for item in native.items:
        used = item.get("toolUse")
        if isinstance(used, dict):
            call = by_id.pop(str(cast(dict[str, Any], used).get("toolUseId")), None)
            if call is None:
                return None
            blocks.append(_tool_use_block(call))
        else:
            blocks.append(dict(item))
    return None if by_id else blocks


def _reasoning_block(part: ThinkingPart) -> dict[str, Any]:
    if part.raw is not None:
        return dict(part.raw)
    if part.redacted is not None:
        return {"reasoningContent": {"redactedContent": part.redacted}}
    text: dict[str, Any] = {"text": part.text or ""}
    if part.signature:
        text["signature"] = part.signature
    return {"reasoningContent": {"reasoningText": text}}


def _tool_use_block(call: ToolCall) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": _input_of(call)}}


def _input_of(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as the object `input` must be (a JSON string from another
    wire is decoded; arguments that were not an object went back as a failed result)."""
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, parse_constant=_not_json)
        except ValueError:
            return {}
    return dict(cast(Mapping[str, Any], arguments)) if isinstance(arguments, Mapping) else {}


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _map_tool_result(message: ToolResultMessage, documents: _Names) -> dict[str, Any]:
    """`toolResult`: the text, then what the tool returned; `status: "error"` for a tool
    that failed (the graceful contract's native form)."""
    content: list[dict[str, Any]] = []
    if message.content or not message.attachments:
        content.append({"text": message.content})
    content.extend(_map_attachment(part, documents) for part in message.attachments)
    result: dict[str, Any] = {"toolUseId": message.call_id, "content": content}
    result["status"] = "success" if message.success else "error"
    return {"toolResult": result}


def _map_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": spec.name, "inputSchema": {"json": dict(spec.parameters)}}
    if spec.description:
        tool["description"] = spec.description
    return {"toolSpec": tool}


# --- response parsing


def parse_response(body: Any) -> ModelResponse:
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    answer = cast(dict[str, Any], body)
    output = answer.get("output")
    message = cast(dict[str, Any], output).get("message") if isinstance(output, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("`output.message` is missing")
    content = cast(dict[str, Any], message).get("content")
    if not isinstance(content, list):
        raise MalformedResponse("`output.message.content` is missing or not a list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[ThinkingPart] = []
    blocks: list[dict[str, Any]] = []
    citations: list[Citation] = []
    for block in cast(list[Any], content):
        if not isinstance(block, dict):
            raise MalformedResponse("a content block is not an object")
        item = cast(dict[str, Any], block)
        blocks.append(item)
        if "text" in item:
            text = item["text"]
            if not isinstance(text, str):
                raise MalformedResponse("a text block's text is not a string")
            texts.append(text)
        elif "citationsContent" in item:
            text = cited_text(item)
            at = sum(len(piece) for piece in texts)
            citations.extend(cited_block(item, (at, at + len(text))))
            texts.append(text)
        elif "toolUse" in item:
            calls.append(_parse_tool_use(item["toolUse"]))
        elif "reasoningContent" in item:
            thinking.append(_parse_reasoning(item))
    reason = stop_reason(answer.get("stopReason"))
    usage = parse_usage(answer.get("usage"))
    native = NativeOutput(PROVIDER, tuple(blocks))
    if calls:
        return ModelResponse(
            text="".join(texts) or None,
            tool_calls=tuple(calls),
            usage=usage,
            finish_reason="tool_calls",
            raw=answer,
            thinking=tuple(thinking),
            native=native,
            citations=tuple(citations),
        )
    if reason == "tool_calls":
        raise MalformedResponse("stopReason is tool_use but there is no toolUse block")
    return ModelResponse(
        text="".join(texts),
        usage=usage,
        finish_reason=reason,
        raw=answer,
        thinking=tuple(thinking),
        native=native,
        citations=tuple(citations),
    )


def stop_reason(value: Any) -> FinishReason:
    if not isinstance(value, str):
        raise MalformedResponse("`stopReason` is missing")
    return _FINISH_REASONS.get(value, "other")


def _parse_tool_use(value: Any) -> ToolCall:
    if not isinstance(value, dict):
        raise MalformedResponse("a toolUse block is not an object")
    used = cast(dict[str, Any], value)
    call_id, name = used.get("toolUseId"), used.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise MalformedResponse("a toolUse block has no toolUseId or name")
    tool_input = used.get("input")
    arguments: str | Mapping[str, Any] = (
        cast(dict[str, Any], tool_input)
        if isinstance(tool_input, dict)
        else tool_input
        if isinstance(tool_input, str)
        else json.dumps(tool_input)
    )
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _parse_reasoning(block: dict[str, Any]) -> ThinkingPart:
    """`reasoningText` (text and Claude's signature) or `redactedContent` (encrypted,
    base64); the block is kept whole in `raw` for the echo."""
    content = block["reasoningContent"]
    if not isinstance(content, dict):
        raise MalformedResponse("a reasoningContent block is not an object")
    reasoning = cast(dict[str, Any], content)
    redacted = reasoning.get("redactedContent")
    if redacted is not None:
        if not isinstance(redacted, str):
            raise MalformedResponse("redactedContent is not base64 text")
        return ThinkingPart(PROVIDER, redacted=redacted, raw=block)
    text = reasoning.get("reasoningText")
    if not isinstance(text, dict):
        raise MalformedResponse("a reasoningContent block has no reasoningText")
    fields = cast(dict[str, Any], text)
    said, signature = fields.get("text"), fields.get("signature")
    if not isinstance(said, str) or (signature is not None and not isinstance(signature, str)):
        raise MalformedResponse("a reasoningText has no text, or a signature that is not text")
    return ThinkingPart(PROVIDER, text=said or None, signature=signature, raw=block)


def parse_usage(value: Any) -> Usage:
    """Converse's `inputTokens` excludes the cache reads and writes; wink's includes them."""
    if not isinstance(value, dict):
        raise MalformedResponse("`usage` is missing")
    fresh = read_count(value, "inputTokens")
    read = read_count(value, "cacheReadInputTokens")
    written = read_count(value, "cacheWriteInputTokens")
    return Usage(
        input_tokens=fresh + read + written,
        output_tokens=read_count(value, "outputTokens"),
        cached_tokens=read,
        cache_write_tokens=written,
    )
