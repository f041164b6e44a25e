"""Google Gemini: the neutral transcript <-> the `generateContent` REST API, over httpx2.

Wire facts (v1beta, thought signatures, RetryInfo, why no SDK) and the resulting
requests are in docs/adapters/google.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from ...core.foundation.carriage import MB, Carriage, ContentRules, attachments_after_results
from ...core.foundation.choice import request_tool_choice
from ...core.foundation.content import CachePoint, TextPart, UserPart
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
from ...core.transport.errors import (
    MalformedResponse,
    read_count,
    read_label,
)
from .grounding import builtin_calls, grounding_citations, map_builtin_tools, search_requests
from .thinking import gemini_thinking_config

__all__ = [
    "CONTENT_RULES",
    "PROVIDER",
    "build_request",
    "parse_arguments",
    "parse_response",
    "synthetic_call_id",
]

# --- tables

PROVIDER = "google"

_BLOCKED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "ESCALATION")
_BLOCKED_MORE = ("IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")
# Failures, even with `functionCall` parts (never run: the loop runs no call of an
# "error" answer). UNEXPECTED_TOOL_CALL is documented as "the model generated a tool call
# but no tools were enabled in the request": a call nobody offered.
_FAILED = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS")
_FAILED_MORE = ("MALFORMED_RESPONSE", "MISSING_THOUGHT_SIGNATURE", "PUP_LIMITED_DISABLED")
# Anything else (OTHER, LANGUAGE, NO_IMAGE, a new value) is "other".
_FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "CONTINUATION": "length",  # the per-request token limit; wink does not continue
    **dict.fromkeys((*_BLOCKED, *_BLOCKED_MORE), "content_filter"),
    **dict.fromkeys((*_FAILED, *_FAILED_MORE), "error"),
}

# A `functionResponse` carries parts on Gemini 3 only: what a tool returned goes in a user
# content right after the results, which every model reads (docs/adapters/google.md).
# Inline data: at most 20 MB a request.
CONTENT_RULES = ContentRules(
    (
        Carriage(
            frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}),
            frozenset({"data", "url"}),
            "after",
        ),
        Carriage(frozenset({"application/pdf", "text/plain"}), frozenset({"data", "url"}), "after"),
        Carriage(
            frozenset(
                {"audio/wav", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"}
            ),
            frozenset({"data", "url"}),
            "after",
        ),
    ),
    max_request_bytes=20 * MB,
)

# ModelSettings field -> generationConfig key.
_GENERATION_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "maxOutputTokens",
    "top_p": "topP",
    "seed": "seed",
}


# --- request building


def build_request(
    request: ModelRequest,
    settings: ModelSettings,
    model: str = "",
    *,
    wire: str = "Gemini",
    exclude_domains: bool = False,
) -> dict[str, Any]:
    """The `generateContent` body for one neutral request (`wire` names it in refusals;
    `exclude_domains`: its Google Search takes `excludeDomains`, as Vertex's does)."""
    builtin = map_builtin_tools(request.builtin_tools, wire, exclude_domains=exclude_domains)
    contents, system = _map_messages(request.messages)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": system}
    declarations = [_map_tool_spec(spec) for spec in request.tools]
    generation = _map_settings(settings)
    thinking = gemini_thinking_config(model, settings)
    if thinking:
        generation["thinkingConfig"] = thinking
    output = request.output
    if output is not None and declarations:
        # Gemini rejects function calling together with a JSON response mime type:
        # the output becomes one more function, and the model must call a function.
        declarations.append(_map_tool_spec(output_tool_spec(output)))
    elif output is not None:
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = dict(output.schema)
    calling = _calling_config(request, settings)  # refuses a choice no request could carry
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
        if calling is not None:
            body["toolConfig"] = {"functionCallingConfig": calling}
    if builtin:
        body["tools"] = [*body.get("tools", ()), *builtin]
    if generation:
        body["generationConfig"] = generation
    if settings.extra:
        _merge(body, settings.extra)
    return body


_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}


def _calling_config(request: ModelRequest, settings: ModelSettings) -> dict[str, Any] | None:
    """`functionCallingConfig`: `AUTO`, `ANY` ("required"), `NONE`, or `ANY` with
    `allowedFunctionNames` for a tool's name. With a structured output among tools the
    default is `ANY`: Gemini takes no JSON response type beside functions, so the answer
    is one more function the model must call, and "none" allows that function alone."""
    choice = request_tool_choice(request, settings)
    if choice is None:
        return {"mode": "ANY"} if request.output is not None else None
    mode = _MODES.get(choice)
    if mode == "NONE" and request.output is not None:  # the prompt's tools off, not the answer
        return {"mode": "ANY", "allowedFunctionNames": [output_tool_spec(request.output).name]}
    if mode is None:
        return {"mode": "ANY", "allowedFunctionNames": [choice]}
    if mode == "AUTO" and request.output is not None:
        return {"mode": "ANY"}  # the answer is a function call too
    return {"mode": mode}


def _map_settings(settings: ModelSettings) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for field, key in _GENERATION_KEYS.items():
        value = getattr(settings, field)
        if value is not None:
            config[key] = value
    if settings.stop:
        config["stopSequences"] = list(settings.stop)
    return config


def _merge(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge `extra` into `target`, recursing into objects both sides have."""
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(cast(dict[str, Any], current), cast(Mapping[str, Any], value))
        else:
            target[key] = value


def _map_messages(
    messages: tuple[Message, ...],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(contents, systemInstruction parts); same-role neighbours share one content, but
    what tools returned as parts, moved after their results, has one of its own (as
    recorded: docs/adapters/google.md)."""
    contents: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    real_ids: set[str] = set()  # call ids the model gave (synthesized ones are never sent)
    given = {id(message) for message in messages}
    for message in attachments_after_results(messages):
        if isinstance(message, SystemMessage):
            system.append({"text": message.content})
            continue
        role, parts = _map_message(message, real_ids)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role and id(message) in given:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return contents, system


def _map_message(
    message: UserMessage | AssistantMessage | ToolResultMessage, real_ids: set[str]
) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, ToolResultMessage):
        return "user", [_map_tool_result(message, real_ids)]
    if isinstance(message, UserMessage):
        return "user", _map_user(message)
    return "model", _map_assistant(message, real_ids)


def _map_user(message: UserMessage) -> list[dict[str, Any]]:
    if not message.has_attachments:
        return [{"text": message.text}]
    parts = (_map_part(part) for part in message.parts)
    return [part for part in parts if part is not None]


def _map_part(part: UserPart) -> dict[str, Any] | None:
    """`text`, `inlineData` (bytes) or `fileData` (a URL); a cache point is none (Gemini
    caches a repeated prefix on its own)."""
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, CachePoint):
        return None
    if part.url is not None:
        return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
    return {"inlineData": {"mimeType": part.media_type, "data": part.base64()}}


def _map_assistant(message: AssistantMessage, real_ids: set[str]) -> list[dict[str, Any]]:
    """The parts as Gemini gave them when the turn was Gemini's (each signature on its own
    part, thought parts kept, nothing merged), else rebuilt from text and calls."""
    native = message.native_for(PROVIDER)
    if native is not None:
        echoed = _echo_native(native, message.tool_calls, real_ids)
        if echoed is not None:
            return echoed
    parts: list[dict[str, Any]] = []
    if message.text:
        part: dict[str, Any] = {"text": message.text}
        signature = (message.provider_data or {}).get("thought_signature")
        if isinstance(signature, str):
            part["thoughtSignature"] = signature
        parts.append(part)
    parts.extend(_map_tool_call(call, real_ids) for call in message.tool_calls)
    return parts


def _echo_native(
    native: NativeOutput, calls: tuple[ToolCall, ...], real_ids: set[str]
) -> list[dict[str, Any]] | None:
    """Every part verbatim but `functionCall` ones, which are the loop's echo of the call in
    the same place (ids and signatures as `_map_tool_call` sends them); None when the
    calls and the parts disagree."""
    pending = list(calls)
    parts: list[dict[str, Any]] = []
    for part in native.items:
        if "functionCall" in part:
            if not pending:
                return None
            parts.append(_map_tool_call(pending.pop(0), real_ids))
        else:
            parts.append(dict(part))
    return None if pending else parts


def _map_tool_call(call: ToolCall, real_ids: set[str]) -> dict[str, Any]:
    """A `functionCall` part as the model sent it: its id only if real, its signature back."""
    data = call.provider_data or {}
    function: dict[str, Any] = {"name": call.name}
    args = _args_object(call.arguments)
    if args is not None:
        function["args"] = args
    if not data.get("synthetic_id"):
        function["id"] = call.id
        real_ids.add(call.id)
    part: dict[str, Any] = {"functionCall": function}
    signature = data.get("thought_signature")
    if isinstance(signature, str):
        part["thoughtSignature"] = signature
    return part


def _args_object(arguments: str | Mapping[str, Any]) -> dict[str, Any] | None:
    """`args` must be a JSON object on the wire; arguments that were not one are left out."""
    if not isinstance(arguments, str):
        return dict(arguments)
    try:
        decoded = json.loads(arguments, parse_constant=_not_json)
    except ValueError:
        return None
    return cast(dict[str, Any], decoded) if isinstance(decoded, dict) else None


def _not_json(constant: str) -> Any:
    """`Infinity` / `NaN` are not JSON: such arguments are left out like broken ones."""
    raise ValueError(f"{constant} is not JSON")


def _map_tool_result(message: ToolResultMessage, real_ids: set[str]) -> dict[str, Any]:
    """A `functionResponse` part: `{"output": ...}` on success, `{"error": ...}` on failure."""
    key = "output" if message.success else "error"
    function: dict[str, Any] = {"name": message.name, "response": {key: message.content}}
    if message.call_id in real_ids:
        function["id"] = message.call_id
    return {"functionResponse": function}


def _map_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    # `parametersJsonSchema` takes pydantic's JSON schema as is (anyOf, nullable unions,
    # additionalProperties), where `parameters` would need a lossy OpenAPI translation.
    return {
        "name": spec.name,
        "description": spec.description,
        "parametersJsonSchema": dict(spec.parameters),
    }


# --- response parsing


def parse_response(body: Any) -> ModelResponse:
    """A `GenerateContentResponse` dict -> `ModelResponse`; raises `MalformedResponse`."""
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    body = cast(dict[str, Any], body)
    usage = _parse_usage(body.get("usageMetadata"))
    model = read_label(body, "modelVersion")
    tier = read_label(body, "usageMetadata", "serviceTier")
    tier = tier.lower() if tier is not None else None  # genai-prices' "flex", "priority"
    candidates = body.get("candidates")
    if not candidates:
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and cast(dict[str, Any], feedback).get("blockReason"):
            return ModelResponse(
                text=None,
                usage=usage,
                finish_reason="content_filter",
                raw=body,
                model=model,
                service_tier=tier,
            )
        raise MalformedResponse("no candidates and no promptFeedback.blockReason")
    if not isinstance(candidates, list):
        raise MalformedResponse("candidates is not a list")
    candidate = cast(list[Any], candidates)[0]
    if not isinstance(candidate, dict):
        raise MalformedResponse("candidates[0] is not an object")
    candidate = cast(dict[str, Any], candidate)
    reason = _parse_finish_reason(candidate.get("finishReason"))
    parts = _candidate_parts(candidate, reason)
    text, signature = _parse_text(parts)
    calls = _parse_tool_calls(parts)
    provider_data = {"thought_signature": signature} if signature else None
    if calls and reason == "stop":
        reason = "tool_calls"
    searches = search_requests(candidate, model)
    if searches:
        usage = replace(usage, web_search_requests=searches)
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=usage,
        builtin_calls=builtin_calls(parts, candidate, PROVIDER),
        citations=grounding_citations(text, candidate),
        finish_reason=reason,
        provider_data=provider_data,
        raw=body,
        thinking=tuple(_parse_thought(part) for part in parts if part.get("thought") is True),
        native=NativeOutput(PROVIDER, tuple(parts)) if parts else None,
        model=model,
        service_tier=tier,
    )


def _parse_thought(part: dict[str, Any]) -> ThinkingPart:
    """A thought part (a summary, sent under `includeThoughts`); kept whole for the echo."""
    text, signature = part.get("text"), part.get("thoughtSignature")
    if text is not None and not isinstance(text, str):
        raise MalformedResponse("a thought part's text is not a string")
    signature = signature if isinstance(signature, str) else None
    return ThinkingPart(PROVIDER, text=text or None, signature=signature, raw=part)


def _parse_finish_reason(value: Any) -> FinishReason:
    if value is None:
        return "stop"
    if not isinstance(value, str):
        raise MalformedResponse("finishReason is not a string")
    return _FINISH_REASONS.get(value, "other")


def _candidate_parts(candidate: dict[str, Any], reason: FinishReason) -> list[dict[str, Any]]:
    """The candidate's parts; a blocked or cut-off candidate may legitimately have none."""
    content = candidate.get("content")
    if content is None:
        if reason == "stop":
            raise MalformedResponse("candidates[0] has no content")
        return []
    if not isinstance(content, dict):
        raise MalformedResponse("candidates[0].content is not an object")
    parts = cast(dict[str, Any], content).get("parts", [])
    if not isinstance(parts, list):
        raise MalformedResponse("candidates[0].content.parts is not a list")
    if not all(isinstance(part, dict) for part in cast(list[Any], parts)):
        raise MalformedResponse("a part is not an object")
    return cast(list[dict[str, Any]], parts)


def _parse_text(parts: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(the answer text, the last thought signature carried by a text part)."""
    pieces: list[str] = []
    signature: str | None = None
    for part in parts:
        text = part.get("text")
        if text is None or part.get("thought") is True:
            continue
        if not isinstance(text, str):
            raise MalformedResponse("a part's text is not a string")
        pieces.append(text)
        found = part.get("thoughtSignature")
        if isinstance(found, str):
            signature = found
    return ("".join(pieces) if pieces else None), signature


def synthetic_call_id() -> str:
    """An id for a call Gemini sent without one: unique in the whole transcript, in the
    characters and length every provider takes (a run that falls over to Anthropic needs
    unique tool_use ids)."""
    return f"call_{os.urandom(12).hex()}"


def _parse_tool_calls(parts: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    """`functionCall` parts in order; ids made (random, and marked) when Gemini gives none."""
    calls: list[ToolCall] = []
    for part in parts:
        function = part.get("functionCall")
        if function is None:
            continue
        if not isinstance(function, dict):
            raise MalformedResponse("functionCall is not an object")
        function = cast(dict[str, Any], function)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedResponse("functionCall.name is missing")
        data: dict[str, Any] = {}
        call_id = function.get("id")
        if call_id is None or call_id == "":
            # Unique in the whole transcript, in the characters and length every provider
            # takes: a run that falls over to Anthropic needs unique tool_use ids.
            call_id = synthetic_call_id()
            data["synthetic_id"] = True
        elif not isinstance(call_id, str):
            raise MalformedResponse("functionCall.id is not a string")
        signature = part.get("thoughtSignature")
        if isinstance(signature, str):
            data["thought_signature"] = signature
        arguments = parse_arguments(function.get("args"))
        calls.append(ToolCall(call_id, name, arguments, data or None))
    return tuple(calls)


def parse_arguments(args: Any) -> str | Mapping[str, Any]:
    """An object stays an object; anything else stays raw for the executor to reject."""
    if args is None:
        return {}
    if isinstance(args, dict | str):
        return cast(str | dict[str, Any], args)
    return json.dumps(args)


def _parse_usage(counts: Any) -> Usage:
    """Thinking tokens are billed as output: output = candidates + thoughts.
    `promptTokenCount` includes the cached tokens; Gemini reports no cache writes."""
    thoughts = read_count(counts, "thoughtsTokenCount")
    return Usage(
        input_tokens=read_count(counts, "promptTokenCount")
        + read_count(counts, "toolUsePromptTokenCount"),
        output_tokens=read_count(counts, "candidatesTokenCount") + thoughts,
        cached_tokens=read_count(counts, "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )
