"""OpenAI Chat Completions: the neutral transcript <-> `POST /chat/completions` JSON.

Also the OpenAI pieces the Responses adapter shares: the client, the error map, strict
schemas and the failure text. Wire facts are in docs/adapters/openai.md.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

# --- guarded SDK import

try:
    import httpx2
    import openai
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the OpenAI adapter needs the openai SDK: pip install 'wink[openai]'"
    ) from _missing

from ...adapters.base import ModelSettings, ProviderAdapter, StainlessCalls, WireRequest
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
from ...core.throttling.headers import RateLimitHeaders
from ...core.transport.errors import (
    MalformedResponse,
    SdkErrors,
    StatusFacts,
    map_sdk_errors,
    read_count,
)
from ...core.transport.http import HttpCalls
from ..thinking import openai_reasoning_effort

__all__ = [
    "FAILURE_PREFIX",
    "RATE_LIMIT_HEADERS",
    "OpenAIAdapter",
    "OpenAIClientAdapter",
    "failure_text",
    "load_openai_client",
    "map_openai_errors",
    "openai_error_facts",
    "strict_schema",
]

# --- tables

PROVIDER = "openai"

# OpenAI has no error flag on tool results: a failure is marked in its text.
FAILURE_PREFIX = "Error: "
# Local OpenAI-compatible servers (Ollama, vLLM) need no key, but the SDK insists on one.
_PLACEHOLDER_KEY = "not-needed"

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


# --- shared with the Responses adapter


def load_openai_client(
    api_key: str | None, base_url: str | None, timeout: float, *, sync: bool = False
) -> Any:
    """The client (async, or sync for `evaluate()`) with the SDK's retries off; a
    placeholder key for compatible servers that need none."""
    import os

    if api_key is None and base_url is not None and not os.environ.get("OPENAI_API_KEY"):
        api_key = _PLACEHOLDER_KEY
    kind = openai.OpenAI if sync else openai.AsyncOpenAI
    return kind(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)


def failure_text(message: ToolResultMessage) -> str:
    """What the model reads: failures unmistakably marked, successes never look like one."""
    if not message.success:
        return FAILURE_PREFIX + message.content
    if message.content.startswith(FAILURE_PREFIX):
        return " " + message.content
    return message.content


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema in OpenAI strict form, or None when strict mode cannot express it.

    Strict mode needs every object closed (`additionalProperties: false`) and every
    property required; a parameter with a default cannot be represented, so such tools
    are sent non-strict.
    """
    result = copy.deepcopy(dict(schema))

    def close(node: Any) -> bool:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            if item.get("type") == "object" or "properties" in item:
                properties = cast(dict[str, Any], item.get("properties", {}))
                if set(properties) != set(cast(list[str], item.get("required", []))):
                    return False
                if item.get("additionalProperties") not in (None, False):
                    return False
                item["additionalProperties"] = False
            return all(close(value) for value in item.values())
        if isinstance(node, list):
            return all(close(value) for value in cast(list[Any], node))
        return True

    return result if close(result) else None


# --- request building


def _build_request(request: ModelRequest, model: str, settings: ModelSettings) -> dict[str, Any]:
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


def _parse_response(body: Any) -> ModelResponse:
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


# --- error mapping


# Error codes a content filter sends (Azure OpenAI: `content_filter`; image models:
# `content_policy_violation`); OpenAI's reasoning models flag a prompt as `invalid_prompt`.
_FILTER_CODES = frozenset({"content_filter", "content_policy_violation"})
_CONTEXT_WINDOW_WORDS = "maximum context length"  # OpenAI's and compatible servers' text


def openai_error_facts(
    status: int, body: Any, default_message: str, headers: Mapping[str, str] | None = None
) -> StatusFacts:
    """What an OpenAI error object (`{"message", "type", "param", "code"}`) says, for an
    error answer and a stream's error event alike (docs/adapters/openai.md)."""
    detail = cast(dict[str, Any], body) if isinstance(body, dict) else {}
    code, kind, message = detail.get("code"), detail.get("type"), detail.get("message")
    text = message if isinstance(message, str) else default_message
    return StatusFacts(
        status=status,
        message=text,
        body=body,
        headers=headers,
        # OpenAI sends an exhausted quota as a 429 too.
        quota_exhausted="insufficient_quota" in (code, kind),
        context_window_exceeded=code == "context_length_exceeded"
        or _CONTEXT_WINDOW_WORDS in text.lower(),
        content_filtered=code in _FILTER_CODES
        or (code == "invalid_prompt" and "flagged" in text.lower()),
    )


def _status_facts(error: openai.APIStatusError) -> StatusFacts:
    # the body is unwrapped by the SDK: {"message", "type", "param", "code"}
    return openai_error_facts(error.status_code, error.body, str(error), error.response.headers)


# OpenAI's allowance headers; their resets are Go durations ("1.5s", "6m0s"). OpenAI-
# compatible servers that report an allowance use the same names.
RATE_LIMIT_HEADERS = RateLimitHeaders(
    requests=(
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    ),
    resets=(
        ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
        ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ),
)

_ERRORS = SdkErrors(
    sdk="openai",
    status=(openai.APIStatusError,),
    facts=_status_facts,
    timeout=(openai.APITimeoutError,),
    connection=(openai.APIConnectionError,),
    unreadable=(openai.APIResponseValidationError, json.JSONDecodeError),
    other=(openai.OpenAIError,),
    rate_limit_headers=RATE_LIMIT_HEADERS,
)


def map_openai_errors(
    prompt_name: str, secrets: Iterable[str] = (), *, model: str | None = None
) -> AbstractContextManager[None]:
    """openai SDK exceptions -> the typed contract (shared by both OpenAI adapters)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets, model=model)


_CALLS = StainlessCalls(httpx2.Response)


# --- the adapters


class OpenAIClientAdapter(ProviderAdapter):
    """What both OpenAI adapters share: the client, the key rules and the error map."""

    api_key_variables = ("OPENAI_API_KEY",)
    rate_limit_headers = RATE_LIMIT_HEADERS

    def _http_calls(self) -> HttpCalls:
        return _CALLS

    def _make_client(self, *, sync: bool) -> Any:
        return load_openai_client(self._api_key, self.base_url, self.timeout, sync=sync)

    def _key_optional(self) -> bool:
        return self.base_url is not None  # a compatible server; see load_openai_client

    def _is_async_client(self, client: Any) -> bool:
        return isinstance(client, openai.AsyncOpenAI)

    def _map_errors(self, prompt_name: str) -> AbstractContextManager[None]:
        return map_openai_errors(prompt_name, self._secrets, model=self.model)


class OpenAIAdapter(OpenAIClientAdapter):
    """OpenAI Chat Completions (and compatible servers) through the openai SDK."""

    provider = PROVIDER

    def _check_settings(self) -> None:
        openai_reasoning_effort(self.model, self.settings, self.provider)

    def _build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest("/chat/completions", _build_request(request, self.model, self.settings))

    def _parse_response(self, data: Any, request: ModelRequest) -> ModelResponse:
        return _parse_response(data)
