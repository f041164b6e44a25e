"""Google Gemini through google-genai: the neutral transcript <-> `generateContent` JSON.

Wire facts (v1beta pinned, thought signatures, RetryInfo, no SDK retries) and the
resulting requests are in docs/adapters/google.md.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

# --- guarded SDK import

try:
    import httpx
    import httpx2
    from google import genai
    from google.genai import errors as genai_errors
    from google.genai import types as genai_types
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the Google adapter needs the google-genai SDK: pip install 'wink[google]'"
    ) from _missing

from ..core.messages import (
    AssistantMessage,
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
    output_tool_spec,
)
from ..core.provider_errors import (
    MalformedResponse,
    SdkErrors,
    StatusFacts,
    map_sdk_errors,
    read_count,
)
from ..core.throttle import google_quota_is_daily, google_retry_delay
from .base import ModelSettings, ProviderAdapter, WireRequest

__all__ = ["GoogleAdapter"]

# --- tables

_API_VERSION = "v1beta"  # google-genai 3.4 defaults to v1, which lacks parts of the API

_BLOCKED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "ESCALATION")
_BLOCKED_MORE = ("IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")
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

# ModelSettings field -> generationConfig key.
_GENERATION_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "maxOutputTokens",
    "top_p": "topP",
    "seed": "seed",
}


def _optional_error_types(module_name: str, *names: str) -> tuple[type[BaseException], ...]:
    """Exception classes of a transport the SDK may use when installed (aiohttp)."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return ()
    return tuple(getattr(module, name) for name in names)


# Most specific first: a transport timeout is also a transport error.
_TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.TimeoutException,
    httpx.TimeoutException,
    TimeoutError,  # aiohttp's total timeout (asyncio.TimeoutError)
)
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.TransportError,
    httpx.TransportError,
    ConnectionError,
    *_optional_error_types("aiohttp", "ClientError"),
)
_UNREADABLE_ERRORS: tuple[type[BaseException], ...] = (
    genai_errors.UnknownApiResponseError,
    httpx2.DecodingError,
    httpx.DecodingError,
    json.JSONDecodeError,
)

# --- request building


def _build_request(request: ModelRequest, settings: ModelSettings) -> dict[str, Any]:
    """The `generateContent` body for one neutral request."""
    contents, system = _map_messages(request.messages)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": system}
    declarations = [_map_tool_spec(spec) for spec in request.tools]
    generation = _map_settings(settings)
    output = request.output
    if output is not None and declarations:
        # Gemini rejects function calling together with a JSON response mime type:
        # the output becomes one more function, and the model must call a function.
        declarations.append(_map_tool_spec(output_tool_spec(output)))
        body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY"}}
    elif output is not None:
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = dict(output.schema)
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
    if generation:
        body["generationConfig"] = generation
    if settings.extra:
        _merge(body, settings.extra)
    return body


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


def _map_messages(messages: Iterable[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(contents, systemInstruction parts); same-role neighbours share one content."""
    contents: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    real_ids: set[str] = set()  # call ids the model gave (synthesized ones are never sent)
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"text": message.content})
            continue
        role, parts = _map_message(message, real_ids)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
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
    return [{"text": message.content}]


def _map_assistant(message: AssistantMessage, real_ids: set[str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.text:
        part: dict[str, Any] = {"text": message.text}
        signature = (message.provider_data or {}).get("thought_signature")
        if isinstance(signature, str):
            part["thoughtSignature"] = signature
        parts.append(part)
    parts.extend(_map_tool_call(call, real_ids) for call in message.tool_calls)
    return parts


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
        decoded = json.loads(arguments)
    except ValueError:
        return None
    return cast(dict[str, Any], decoded) if isinstance(decoded, dict) else None


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


def _parse_response(body: Any) -> ModelResponse:
    """A `GenerateContentResponse` dict -> `ModelResponse`; raises `MalformedResponse`."""
    if not isinstance(body, dict):
        raise MalformedResponse("the body is not a JSON object")
    body = cast(dict[str, Any], body)
    usage = _parse_usage(body.get("usageMetadata"))
    candidates = body.get("candidates")
    if not candidates:
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and cast(dict[str, Any], feedback).get("blockReason"):
            return ModelResponse(text=None, usage=usage, finish_reason="content_filter", raw=body)
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
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=usage,
        finish_reason=reason,
        provider_data=provider_data,
        raw=body,
    )


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


def _parse_tool_calls(parts: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    """`functionCall` parts in order; ids synthesized (and marked) when Gemini gives none."""
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
            call_id = f"call_{len(calls)}_{name}"
            data["synthetic_id"] = True
        elif not isinstance(call_id, str):
            raise MalformedResponse("functionCall.id is not a string")
        signature = part.get("thoughtSignature")
        if isinstance(signature, str):
            data["thought_signature"] = signature
        arguments = _parse_arguments(function.get("args"))
        calls.append(ToolCall(call_id, name, arguments, data or None))
    return tuple(calls)


def _parse_arguments(args: Any) -> str | Mapping[str, Any]:
    """An object stays an object; anything else stays raw for the executor to reject."""
    if args is None:
        return {}
    if isinstance(args, dict | str):
        return cast(str | dict[str, Any], args)
    return json.dumps(args)


def _parse_usage(counts: Any) -> Usage:
    """Thinking tokens are billed as output: output = candidates + thoughts."""
    thoughts = read_count(counts, "thoughtsTokenCount")
    return Usage(
        input_tokens=read_count(counts, "promptTokenCount")
        + read_count(counts, "toolUsePromptTokenCount"),
        output_tokens=read_count(counts, "candidatesTokenCount") + thoughts,
        cached_tokens=read_count(counts, "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


# --- error mapping


def _status_facts(error: genai_errors.APIError) -> StatusFacts:
    untyped = cast(Any, error)  # the SDK's attributes carry partly unknown types
    code, body = untyped.code, untyped.details  # details: the whole error body
    status = code if isinstance(code, int) else 0
    headers = getattr(untyped.response, "headers", None)
    return StatusFacts(
        status=status,
        message=error.message if isinstance(error.message, str) else str(error),
        body=body,
        headers=cast(Mapping[str, str], headers) if isinstance(headers, Mapping) else None,
        quota_exhausted=status == 429 and google_quota_is_daily(body),
        retry_after=google_retry_delay(body),
    )


_ERRORS = SdkErrors(
    sdk="google-genai",
    status=(genai_errors.APIError,),
    facts=_status_facts,
    timeout=_TIMEOUT_ERRORS,
    connection=_CONNECTION_ERRORS,
    unreadable=_UNREADABLE_ERRORS,
)


def _map_errors(prompt_name: str, secrets: Iterable[str] = ()) -> AbstractContextManager[None]:
    """google-genai / transport exceptions -> the typed contract (shared logic in core)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets)


# --- the adapter


class GoogleAdapter(ProviderAdapter):
    """Gemini's `generateContent` through google-genai, translated to and from wink's loop."""

    provider = "google"
    api_key_variables = ("GOOGLE_API_KEY", "GEMINI_API_KEY")

    def _make_client(self, *, sync: bool) -> Any:
        options = genai_types.HttpOptions(
            base_url=self.base_url,
            api_version=_API_VERSION,
            timeout=_milliseconds(self.timeout),
            # One attempt: wink's RetryPolicy decides. Explicit (not None) so the SDK's
            # aiohttp transport also skips its implicit reconnect-and-retry.
            retry_options=genai_types.HttpRetryOptions(attempts=1),
        )
        # api_key None: the SDK reads GEMINI_API_KEY / GOOGLE_API_KEY.
        client = genai.Client(api_key=self._api_key, http_options=options)
        return client if sync else client.aio

    def _is_async_client(self, client: Any) -> bool:
        return not isinstance(client, genai.Client)

    def _build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest(self.model, _build_request(request, self.settings))

    def _parse_response(self, data: Any, request: ModelRequest) -> ModelResponse:
        return _parse_response(data)

    def _map_errors(self, prompt_name: str) -> AbstractContextManager[None]:
        return _map_errors(prompt_name, self._secrets)

    def _post(self, client: Any, wire: WireRequest, time_limit: float) -> tuple[bytes | str, Any]:
        api_client = client._api_client
        path = _model_path(wire.path, api_client)
        response = api_client.request("post", path, dict(wire.body), self._options(time_limit))
        return response.body or "", response.headers or {}

    async def _post_async(
        self, client: Any, wire: WireRequest, time_limit: float
    ) -> tuple[bytes | str, Any]:
        api_client = getattr(client, "aio", client)._api_client
        path = _model_path(wire.path, api_client)
        response = await api_client.async_request(
            "post", path, dict(wire.body), self._options(time_limit)
        )
        return response.body or "", response.headers or {}

    def _options(self, timeout: float) -> Any:
        if timeout == self.timeout:
            return None
        return genai_types.HttpOptions(timeout=_milliseconds(timeout))


def _milliseconds(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


def _model_path(model: str, api_client: Any) -> str:
    """The resource path `generate_content` builds (`_transformers.t_model`)."""
    if model.startswith(("models/", "tunedModels/", "projects/", "publishers/")):
        return f"{model}:generateContent"
    if getattr(api_client, "vertexai", False):
        return f"publishers/google/models/{model}:generateContent"
    return f"models/{model}:generateContent"
