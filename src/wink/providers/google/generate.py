"""Google Gemini: the neutral transcript <-> the `generateContent` REST API, over httpx2.

Wire facts (v1beta, thought signatures, RetryInfo, why no SDK) and the resulting
requests are in docs/adapters/google.md.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

# --- guarded transport import

try:
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Google adapter needs httpx2: pip install 'wink[google]'") from _missing

from ...adapters.base import ModelSettings, ProviderAdapter, WireRequest
from ...core.foundation.errors import ConfigurationError
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
from ...core.transport.errors import (
    MalformedResponse,
    SdkErrors,
    StatusFacts,
    map_sdk_errors,
    read_count,
)
from ...core.transport.http import EncodedRequest, HttpCalls
from ..thinking import gemini_thinking_config
from .errors import google_error_facts

__all__ = ["DEFAULT_BASE_URL", "GeminiCalls", "GeminiErrorAnswer", "GoogleAdapter"]

# --- tables

PROVIDER = "google"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_API_VERSION = "v1beta"  # v1 lacks parts of the API (parametersJsonSchema, thinking)
_MODEL_PREFIXES = ("models/", "tunedModels/")  # already a resource name

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

# ModelSettings field -> generationConfig key.
_GENERATION_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "maxOutputTokens",
    "top_p": "topP",
    "seed": "seed",
}


# --- request building


def _build_request(
    request: ModelRequest, settings: ModelSettings, model: str = ""
) -> dict[str, Any]:
    """The `generateContent` body for one neutral request."""
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
        thinking=tuple(_parse_thought(part) for part in parts if part.get("thought") is True),
        native=NativeOutput(PROVIDER, tuple(parts)) if parts else None,
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


# --- the exchange and its failures


class GeminiErrorAnswer(Exception):
    """A non-2xx answer. Raised inside the error map, so the HTTP status decides what it
    becomes, by the same core table as every other provider."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code} {response.reason_phrase}".strip())
        self.response = response


_BODY_LIMIT = 2000  # characters of a non-JSON error page kept in the payload


def _status_facts(error: GeminiErrorAnswer) -> StatusFacts:
    """What an error answer says. Gemini's `{"error": {...}}` gives the message, RetryInfo
    and QuotaFailure; any other body (a proxy's HTML page) is kept as text, truncated."""
    response = error.response
    status = response.status_code
    reason = response.reason_phrase or "error"
    body = _error_body(response.content)
    if body is None:
        return StatusFacts(
            status=status,
            message=f"{reason} (not a Gemini error body)",
            body=response.text[:_BODY_LIMIT],  # decoded by its declared charset
            headers=response.headers,
        )
    message = body["error"].get("message")
    text = message if isinstance(message, str) and message else reason
    return google_error_facts(status, body, text, response.headers)


def _error_body(content: bytes) -> dict[str, Any] | None:
    """The documented `{"error": {...}}` object, or None for any other body."""
    try:
        data = json.loads(content)
    except ValueError:  # not JSON, or not UTF-8 (a latin-1 error page)
        return None
    if isinstance(data, dict) and isinstance(cast(dict[str, Any], data).get("error"), dict):
        return cast(dict[str, Any], data)
    return None


_ERRORS = SdkErrors(
    sdk="httpx2",
    status=(GeminiErrorAnswer,),
    facts=_status_facts,
    timeout=(httpx2.TimeoutException,),
    connection=(httpx2.TransportError,),
    unreadable=(httpx2.DecodingError,),
)


def _map_errors(
    prompt_name: str, secrets: Iterable[str] = (), model: str | None = None
) -> AbstractContextManager[None]:
    """httpx2 exceptions and error answers -> the typed contract (shared logic in core)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets, model=model)


@functools.lru_cache(maxsize=64)
def _endpoint(base_url: str, model: str) -> str:
    """`{base_url}/v1beta/models/{model}:generateContent` (the adapter checked base_url)."""
    name = model if model.startswith(_MODEL_PREFIXES) else f"models/{model}"
    return f"{base_url.rstrip('/')}/{_API_VERSION}/{name}:generateContent"


def _api_key_from_env() -> str | None:
    """GOOGLE_API_KEY, else GEMINI_API_KEY: google-genai's documented order (an empty
    value counts as unset)."""
    key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    return key.strip() if key else None


# --- the adapter


class GoogleAdapter(ProviderAdapter):
    """Gemini's `generateContent` REST API, translated to and from wink's loop."""

    provider = PROVIDER
    api_key_variables = ("GOOGLE_API_KEY", "GEMINI_API_KEY")

    def _check_settings(self) -> None:
        gemini_thinking_config(self.model, self.settings)

    def _key(self) -> str | None:
        return self._api_key or _api_key_from_env()

    def _make_client(self, *, sync: bool) -> Any:
        kind = httpx2.Client if sync else httpx2.AsyncClient
        return kind(headers=self._own_headers(), timeout=self.timeout)

    def _is_async_client(self, client: Any) -> bool:
        return isinstance(client, httpx2.AsyncClient)

    def _own_headers(self) -> dict[str, str]:
        key = self._key()
        if not key:
            raise ValueError(
                "no Gemini API key: pass api_key= or set GOOGLE_API_KEY or GEMINI_API_KEY"
            )
        return {"x-goog-api-key": key, "content-type": "application/json"}

    def _build_request(self, request: ModelRequest) -> WireRequest:
        url = _endpoint(self.base_url or DEFAULT_BASE_URL, self.model)
        return WireRequest(url, _build_request(request, self.settings, self.model))

    def _parse_response(self, data: Any, request: ModelRequest) -> ModelResponse:
        return _parse_response(data)

    def _map_errors(self, prompt_name: str) -> AbstractContextManager[None]:
        return _map_errors(prompt_name, self._secrets, self.model)

    def _http_calls(self) -> HttpCalls:
        return GeminiCalls(self._key)


class GeminiCalls:
    """Gemini's REST calls over httpx2 (wink's own clients carry the key; a caller's
    client gets it per request unless it carries one)."""

    __slots__ = ("_key",)

    def __init__(self, key: Callable[[], str | None]) -> None:
        self._key = key

    def _headers_for(self, client: httpx2.Client | httpx2.AsyncClient) -> dict[str, str] | None:
        """What a request adds to the client's headers: nothing on wink's own clients; the
        key (unless the caller's client carries one) and the content type on a caller's."""
        present = client.headers
        if "x-goog-api-key" in present and "content-type" in present:
            return None
        headers = {"content-type": "application/json"}
        key = self._key()
        if key and "x-goog-api-key" not in present:
            headers["x-goog-api-key"] = key
        return headers

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes, Any]:
        if not isinstance(client, httpx2.Client):
            raise _not_a_client(client)
        response = client.post(
            wire.path, content=wire.content, headers=self._headers_for(client), timeout=time_limit
        )
        return _content(response), response.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes, Any]:
        if not isinstance(client, httpx2.AsyncClient):
            raise _not_a_client(client)
        response = await client.post(
            wire.path, content=wire.content, headers=self._headers_for(client), timeout=time_limit
        )
        return _content(response), response.headers

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        if not isinstance(client, httpx2.Client):
            raise _not_a_client(client)
        request = client.build_request(
            "POST",
            wire.path,
            content=wire.content,
            headers=self._headers_for(client),
            timeout=time_limit,
        )
        response = client.send(request, stream=True)
        if not response.is_success:
            response.read()  # the error body decides what the answer becomes
            raise GeminiErrorAnswer(response)
        return response

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        if not isinstance(client, httpx2.AsyncClient):
            raise _not_a_client(client)
        request = client.build_request(
            "POST",
            wire.path,
            content=wire.content,
            headers=self._headers_for(client),
            timeout=time_limit,
        )
        response = await client.send(request, stream=True)
        if not response.is_success:
            await response.aread()
            raise GeminiErrorAnswer(response)
        return response


def _content(response: httpx2.Response) -> bytes:
    """The body of a 2xx; any other status is an error answer, classified by status."""
    if not response.is_success:
        raise GeminiErrorAnswer(response)
    return response.content


def _not_a_client(client: object) -> ConfigurationError:
    kind = type(client)
    hint = (
        "; wink speaks the Gemini REST API itself: pass base_url= and api_key= instead"
        if kind.__module__.startswith("google.")
        else ""
    )
    return ConfigurationError(
        f"client= must be an httpx2.Client or httpx2.AsyncClient, not "
        f"{kind.__module__}.{kind.__qualname__}{hint}",
        provider="google",
        option="client",
    )
