"""OpenAI Chat Completions on the wire, plus the error side both OpenAI APIs share."""

from __future__ import annotations

import re
from typing import Any

from ..caching import CachePrefix, prefixes
from ..faults import Fault
from ..formats import as_list, as_object, as_str, dump, go_duration
from ..history import HistoryEntry, arguments_text, content_text
from ..hosts import HostRoute
from ..parts import FoundPart, looks_like, parse_data_url
from ..ratelimit import RateSnapshot
from ..records import Provider, ToolResultView
from ..server import RawRequest
from ..thinking import ReasoningLedger
from ..turns import Turn
from .base import Headers, Rendered, WireContext, fault_message, retry_headers
from .batch import EmulatedBatchApi
from .openai_batch import OPENAI_BATCHES
from .openai_stream import chat_stream, chat_stream_error, shown_thoughts
from .sse import SseFraming

__all__ = ["OpenAIChatWire", "OpenAIWireBase"]

# Quiet defaults for the token limits, which the emulator does not model.
_TOKEN_LIMIT = 2_000_000
_FAULT_REQUEST_LIMIT = 500

_SERVER_ERRORS = {
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The server is overloaded or not ready yet.",
    504: "Gateway timeout.",
}
_FINISH_REASONS = {"stop": "stop", "length": "length", "content_filter": "content_filter"}
_REJECTIONS = frozenset({"permission_denied", "not_found", "context_window_exceeded"})
_CHAT_CONTEXT_WINDOW = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted "
    "in 131072 tokens. Please reduce the length of the messages."
)
_NO_SYSTEM_ROLE = re.compile(r"^o1-(mini|preview)")  # the first o1 models take neither role
_INSTRUCTION_ROLES = ("system", "developer")
_MAX_CALL_ID = 40
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_BAD_IMAGE = (  # as recorded (tests/conformance/multimodal/openai/chat_400_invalid_image_format)
    "You uploaded an unsupported image. Please make sure your image has of one the "
    "following formats: ['png', 'jpeg', 'gif', 'webp']."
)
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_CHOICES = ("none", "auto", "required")


class OpenAIWireBase(SseFraming):
    """Headers, rate-limit headers and error bodies shared by Chat and Responses."""

    provider: Provider = "openai"
    file_field = "file.file_data"  # where a file part holds its data, in error `param`s
    context_window = (_CHAT_CONTEXT_WINDOW, "messages")  # the 400's message and its param

    base_path = "/v1"
    path = "/v1/chat/completions"  # the wire's own path
    batches: EmulatedBatchApi | None = OPENAI_BATCHES  # both OpenAI wires' batch API

    def own_route(self, raw: RawRequest) -> HostRoute | None:
        return HostRoute(self.provider) if raw.path == self.path else None

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered | None:
        return None

    def headers(self, ctx: WireContext) -> Headers:
        return {
            "content-type": "application/json",
            "x-request-id": ctx.ids.openai_request(),
            "openai-version": "2020-10-01",
            "openai-processing-ms": "1",
            "access-control-expose-headers": "X-Request-ID",
        }

    def rate_headers(self, rate: RateSnapshot, now: float) -> Headers:
        return {
            "x-ratelimit-limit-requests": str(rate.limit),
            "x-ratelimit-limit-tokens": str(_TOKEN_LIMIT),
            "x-ratelimit-remaining-requests": str(rate.remaining),
            "x-ratelimit-remaining-tokens": str(_TOKEN_LIMIT),
            "x-ratelimit-reset-requests": go_duration(rate.reset_after),
            "x-ratelimit-reset-tokens": "0s",
        }

    def error(
        self,
        ctx: WireContext,
        status: int,
        message: str,
        kind: str,
        code: str | None,
        param: str | None = None,
    ) -> Rendered:
        """`{"error": {message, type, param, code}}`, as every OpenAI error is sent."""
        body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
        return Rendered(status, self.headers(ctx), dump(body))

    def render_not_found(self, message: str, ctx: WireContext) -> Rendered:
        return self.error(ctx, 404, message, "invalid_request_error", None)

    def render_fault(self, fault: Fault, ctx: WireContext) -> Rendered:
        kind = fault.kind
        if kind == "rate_limit":
            return self._rate_limited(fault, ctx)
        if kind == "quota_exhausted":
            message = fault_message(
                fault,
                "You exceeded your current quota, please check your plan and billing details. "
                "For more information on this error, read the docs: "
                "https://platform.openai.com/docs/guides/error-codes/api-errors.",
            )
            return self.error(ctx, 429, message, "insufficient_quota", "insufficient_quota")
        if kind in ("server_error", "overloaded"):
            status = fault.status or 503
            text = _SERVER_ERRORS.get(status, "The server had an error processing your request.")
            return self.error(ctx, status, fault_message(fault, text), "server_error", None)
        if kind == "unauthorized":
            message = fault_message(
                fault,
                "Incorrect API key provided: sk-emula**ator. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
            )
            return self.error(ctx, 401, message, "invalid_request_error", "invalid_api_key")
        if kind in _REJECTIONS:
            return self._rejected(fault, ctx)
        if kind == "wrong_shape":
            body = fault.body if fault.body is not None else self.wrong_shape(ctx)
            return Rendered(200, self.headers(ctx), dump(body))
        message = fault_message(fault, "Invalid request.")
        return self.error(
            ctx, fault.status or 400, message, "invalid_request_error", fault.code, fault.param
        )

    def wrong_shape(self, ctx: WireContext) -> dict[str, Any]:
        return {"foo": 1}

    def _rejected(self, fault: Fault, ctx: WireContext) -> Rendered:
        """A 403, 404 or context-window 400, as OpenAI words them (docs/adapters/openai.md)."""
        model = ctx.model or "gpt-4.1"
        if fault.kind == "context_window_exceeded":
            text, param = self.context_window
            message = fault_message(fault, text)
            return self.error(
                ctx, 400, message, "invalid_request_error", "context_length_exceeded", param
            )
        if fault.kind == "not_found":
            text = f"The model `{model}` does not exist or you do not have access to it."
        else:  # OpenAI answers a model the project may not use with 403 model_not_found
            text = f"Project `proj_wink_emulator` does not have access to model `{model}`"
        status = 404 if fault.kind == "not_found" else 403
        message = fault_message(fault, text)
        return self.error(ctx, status, message, "invalid_request_error", "model_not_found")

    def refuse_part(self, part: FoundPart, data: bytes | None) -> Fault | None:
        """OpenAI's words for an image that is not one, a file of a type it does not read
        (as recorded, docs/testing.md), an audio format it does not take."""
        if part.encoded is None:
            return None  # a URL: the API fetches it
        if part.kind == "image":
            if (
                data is None
                or not looks_like(data, part.media_type)
                or (part.media_type not in _IMAGE_TYPES)
            ):
                return Fault.bad_request(_BAD_IMAGE, code="invalid_image_format")
            return None
        if part.kind == "audio":
            if part.media_type not in _AUDIO_TYPES.values():
                return Fault.bad_request(
                    f"Invalid value: '{part.media_type}'. Supported values are: 'wav' and 'mp3'.",
                    param=f"{part.path}.input_audio.format",
                    code="invalid_value",
                )
            return None if data is not None else _bad_file(f"{part.path}.input_audio.data", None)
        media_type = part.media_type or ""
        if data is None or not (media_type == "application/pdf" or media_type.startswith("text/")):
            param = f"{part.path}.{self.file_field}"
            return _bad_file(param, media_type if data is not None else None)
        return None

    def cache_prefixes(self, body: dict[str, Any]) -> tuple[CachePrefix, ...]:
        """OpenAI caches on its own: a prefix ends at every message (tools first)."""
        items = [(as_object(tool), False) for tool in as_list(body.get("tools"))]
        items += [(message, True) for message in self.prompt_items(body)]
        return prefixes(items)

    def prompt_items(self, body: dict[str, Any]) -> list[Any]:
        """The prompt's messages (Chat) or input items (Responses), in order."""
        return as_list(body.get("messages"))

    def _rate_limited(self, fault: Fault, ctx: WireContext) -> Rendered:
        wait = fault.retry_after
        limit = ctx.rate.limit if ctx.rate else _FAULT_REQUEST_LIMIT
        hint = f" Please try again in {go_duration(wait)}." if wait is not None else ""
        message = (
            f"Rate limit reached for {ctx.model or 'default'} in organization "
            f"org-wink-emulator on requests per min (RPM): Limit {limit}, Used {limit}, "
            f"Requested 1.{hint} Visit https://platform.openai.com/account/rate-limits "
            "to learn more."
        )
        rendered = self.error(ctx, 429, message, "requests", "rate_limit_exceeded")
        headers = rendered.headers
        if ctx.rate is None:
            reset = wait if wait is not None else 1.0
            snapshot = RateSnapshot(limit=limit, remaining=0, reset_after=reset)
            headers.update(self.rate_headers(snapshot, ctx.now))
        headers.update(retry_headers(fault))
        return rendered


class OpenAIChatWire(OpenAIWireBase):
    """`POST /v1/chat/completions`."""

    provider: Provider = "openai"

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered:
        """Any request no other wire claims gets OpenAI's 404."""
        return self.render_not_found(f"Invalid URL ({raw.method} {raw.path})", ctx)

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        return chat_stream(body, ctx, size, turn)

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        return chat_stream_error(fault)

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        """The completion; its message carries the turn's thinking only on a host that
        shows it (`EmulatedHost.reasoning`: DeepSeek's, OpenRouter's field)."""
        refused = turn.finish == "refusal"
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if refused else turn.content,
            "refusal": turn.content if refused else None,
            "annotations": [],
        }
        if ctx.host is not None:  # a compatible host shows the thinking OpenAI keeps
            message.update(ctx.host.reasoning(shown_thoughts(turn)))
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.id or ctx.ids.openai_call(),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in turn.calls
            ]
        finish = _FINISH_REASONS.get(turn.finish, "stop")
        if turn.calls and finish == "stop":
            finish = "tool_calls"
        usage = turn.usage
        body = {
            "id": ctx.ids.openai_completion(),
            "object": "chat.completion",
            "created": int(ctx.now),
            "model": ctx.model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": prompt_details(usage, audio_tokens=0),
                "completion_tokens_details": {
                    "reasoning_tokens": usage.reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
            "system_fingerprint": ctx.ids.fingerprint(),
        }
        return Rendered(200, self.headers(ctx), dump(body))

    def wrong_shape(self, ctx: WireContext) -> dict[str, Any]:
        return {
            "id": ctx.ids.openai_completion(),
            "object": "chat.completion",
            "created": int(ctx.now),
            "model": ctx.model,
            "choices": None,
        }

    def validate(self, body: dict[str, Any]) -> str | None:
        for name in ("model", "messages"):
            if name not in body:
                return f"Missing required parameter: '{name}'."
        return None

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        """`tool_choice` and `parallel_tool_calls` as the API takes them
        (`_tool_settings_refusal`); the conversation's rules, with the real API's 400s:
        every `tool_calls` id
        answered by the `tool` messages right after it, no `tool` message that answers
        none, ids of at most 40 characters, no instructions role for the first o1 models.
        (Chat Completions takes no reasoning back: nothing else to check.)"""
        refused = _tool_settings_refusal(body, self.tool_names(body))
        if refused is not None:
            return refused
        open_ids: list[str] = []
        messages = [as_object(message) for message in as_list(body.get("messages"))]
        for index, message in enumerate(messages):
            role = message.get("role")
            if role in _INSTRUCTION_ROLES and _NO_SYSTEM_ROLE.match(model):
                return Fault.bad_request(
                    f"Unsupported value: 'messages[{index}].role' does not support '{role}' "
                    "with this model.",
                    param=f"messages[{index}].role",
                    code="unsupported_value",
                )
            if role == "tool":
                call_id = as_str(message.get("tool_call_id"))
                if call_id not in open_ids:
                    return Fault.bad_request(
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                        param=f"messages.[{index}].role",
                    )
                open_ids.remove(call_id)
                continue
            if open_ids:
                return _unanswered(open_ids, index)
            open_ids = []
            calls = [as_object(call) for call in as_list(message.get("tool_calls"))]
            for position, call in enumerate(calls if role == "assistant" else ()):
                call_id = as_str(call.get("id")) or ""
                if len(call_id) > _MAX_CALL_ID:
                    where = f"messages[{index}].tool_calls[{position}].id"
                    return Fault.bad_request(
                        f"Invalid '{where}': string too long. Expected a string with maximum "
                        f"length {_MAX_CALL_ID}, but got a string with length {len(call_id)} "
                        "instead.",
                        param=where,
                        code="string_above_max_length",
                    )
                open_ids.append(call_id)
        return _unanswered(open_ids, len(messages)) if open_ids else None

    def instructions(self, body: dict[str, Any]) -> str | None:
        texts = [
            content_text(as_object(message).get("content"))
            for message in as_list(body.get("messages"))
            if as_object(message).get("role") in _INSTRUCTION_ROLES
        ]
        return "\n\n".join(texts) if texts else None

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        names: dict[str, str] = {}
        entries: list[HistoryEntry] = []
        for raw in as_list(body.get("messages")):
            message = as_object(raw)
            role, content = message.get("role"), message.get("content")
            if role == "user":
                entries.append(HistoryEntry("user", content_text(content)))
            elif role == "assistant":
                text = content_text(content) if content is not None else ""
                if text:
                    entries.append(HistoryEntry("assistant", text))
                for item in as_list(message.get("tool_calls")):
                    call = as_object(item)
                    function = as_object(call.get("function"))
                    name, call_id = as_str(function.get("name")), as_str(call.get("id"))
                    if call_id is not None and name is not None:
                        names[call_id] = name
                    arguments = arguments_text(function.get("arguments"))
                    entries.append(HistoryEntry("call", arguments, name, call_id))
            elif role == "tool":
                call_id = as_str(message.get("tool_call_id"))
                name = names.get(call_id) if call_id is not None else None
                entries.append(HistoryEntry("result", content_text(content), name, call_id))
        return tuple(entries)

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        found: list[FoundPart] = []
        for index, message in enumerate(as_list(body.get("messages"))):
            content = as_object(message).get("content")
            for position, raw in enumerate(as_list(content)):
                part = _chat_part(as_object(raw), f"messages[{index}].content[{position}]")
                if part is not None:
                    found.append(part)
        return found

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for raw in as_list(body.get("messages")):
            message = as_object(raw)
            for call in as_list(message.get("tool_calls")):
                call_id = as_str(as_object(call).get("id"))
                name = as_str(as_object(as_object(call).get("function")).get("name"))
                if call_id is not None and name is not None:
                    names[call_id] = name
            if message.get("role") == "tool":
                call_id = as_str(message.get("tool_call_id"))
                name = names.get(call_id) if call_id is not None else None
                results.append(ToolResultView(call_id, name, message.get("content"), None))
        return tuple(results)

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        names = (
            as_str(as_object(as_object(tool).get("function")).get("name"))
            for tool in as_list(body.get("tools"))
        )
        return tuple(name for name in names if name is not None)


def _tool_settings_refusal(body: dict[str, Any], names: tuple[str, ...]) -> Fault | None:
    """Chat Completions' 400s for `tool_choice` and `parallel_tool_calls`: either without
    `tools`, a choice that is none of its values, a named function not among the tools."""
    for field in ("tool_choice", "parallel_tool_calls"):
        if field in body and not as_list(body.get("tools")):
            return Fault.bad_request(
                f"Invalid value for '{field}': '{field}' is only allowed when 'tools' are "
                "specified.",
                param=field,
            )
    choice = body.get("tool_choice")
    if isinstance(choice, str) and choice not in _CHOICES:
        return Fault.bad_request(
            f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.",
            param="tool_choice",
            code="invalid_value",
        )
    named = as_str(as_object(as_object(choice).get("function")).get("name"))
    if named is not None and named not in names:
        return Fault.bad_request(
            f"Invalid value for 'tool_choice': function '{named}' not found in 'tools'.",
            param="tool_choice",
        )
    return None


def _unanswered(open_ids: list[str], index: int) -> Fault:
    return Fault.bad_request(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(open_ids),
        param=f"messages.[{index}].role",
    )


def prompt_details(usage: Any, **more: int) -> dict[str, int]:
    """`prompt_tokens_details` / `input_tokens_details`: the cached tokens, and the cache
    writes when there are any (as the newer answers report them)."""
    details = {"cached_tokens": usage.cached_tokens, **more}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    return details


def _bad_file(param: str, media_type: str | None) -> Fault:
    """OpenAI's 400 for file data it cannot read (as recorded for an audio type)."""
    got = (
        f"but got unsupported MIME type '{media_type}'"
        if media_type
        else "but the data could not be decoded"
    )
    return Fault.bad_request(
        f"Invalid file data: '{param}'. Expected a base64-encoded data URL with a valid file "
        f"MIME type (e.g. 'data:text/plain;base64,SGVsbG8sIFdvcmxkIQ=='), {got}. Please see "
        "https://platform.openai.com/docs/assistants/tools/file-search#supported-files for "
        "supported file types.",
        param=param,
        code="invalid_value",
    )


def data_part(
    kind: Any, path: str, value: str | None, *, in_tool_result: bool = False
) -> FoundPart | None:
    """A part given as a URL that may be a `data:` URL (its bytes) or a link."""
    if value is None:
        return None
    parsed = parse_data_url(value)
    if parsed is None:
        return FoundPart(kind, path, None, url=value, in_tool_result=in_tool_result)
    media_type, encoded = parsed
    return FoundPart(kind, path, media_type, encoded, None, in_tool_result)


def _chat_part(block: dict[str, Any], path: str) -> FoundPart | None:
    kind = block.get("type")
    if kind == "image_url":
        url = as_str(as_object(block.get("image_url")).get("url"))
        return data_part("image", path, url)
    if kind == "file":
        return data_part("document", path, as_str(as_object(block.get("file")).get("file_data")))
    if kind == "input_audio":
        audio = as_object(block.get("input_audio"))
        audio_format = str(audio.get("format"))
        media_type = _AUDIO_TYPES.get(audio_format, audio_format)
        return FoundPart("audio", path, media_type, as_str(audio.get("data")) or "")
    return None
