"""Gemini API `models/{model}:generateContent` on the wire (camelCase JSON)."""

from __future__ import annotations

import re
from typing import Any

from ..caching import CachePrefix, prefixes
from ..faults import Fault
from ..formats import as_list, as_object, as_str, dump, proto_duration
from ..history import HistoryEntry, arguments_text, content_text
from ..hosts import HostRoute
from ..parts import FoundPart, kind_of_media
from ..ratelimit import RateSnapshot
from ..records import Provider, ToolResultView
from ..server import RawRequest
from ..thinking import ReasoningLedger, seal
from ..turns import Turn
from .base import Headers, Rendered, WireContext, fault_message
from .batch import EmulatedBatchApi
from .google_batch import GOOGLE_BATCHES
from .google_builtin import builtin_metadata, builtin_parts
from .google_history import either, history_problem, signs_every_step
from .google_stream import google_event, google_stream, google_stream_error
from .sse import SseFraming

__all__ = ["GoogleWire"]

GENERATE_ROUTE = re.compile(r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):([A-Za-z]+)$")
_COUNT_ROUTE = re.compile(r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):countTokens$")
_GENERATE_FIELDS = frozenset(
    {
        "model",
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "safetySettings",
        "generationConfig",
        "cachedContent",
    }
)

_FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_SERVER_ERRORS = {
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    502: ("UNAVAILABLE", "The service is currently unavailable."),
    503: ("UNAVAILABLE", "The service is currently unavailable."),
    504: ("DEADLINE_EXCEEDED", "The request timed out. Please try again."),
}
# What generateContent reads inline or by URI (video aside, which wink does not send).
_MEDIA_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/heic",
        "image/heif",
        "application/pdf",
        "audio/wav",
        "audio/x-wav",
        "audio/mp3",
        "audio/mpeg",
        "audio/aiff",
        "audio/aac",
        "audio/ogg",
        "audio/flac",
    }
)
_HELP = {
    "@type": "type.googleapis.com/google.rpc.Help",
    "links": [
        {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
        }
    ],
}
_QUOTAS = {
    "rate_limit": (
        "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
        "10",
    ),
    "quota_exhausted": (
        "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
        "250",
    ),
}
_SAFETY_RATINGS = [
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]


class GoogleWire(SseFraming):
    """Candidates, `usageMetadata`, and `{"error": {code, message, status, details}}`."""

    provider: Provider = "google"

    def headers(self, ctx: WireContext) -> Headers:
        return {
            "content-type": "application/json; charset=UTF-8",
            "vary": "Origin, X-Origin, Referer",
            "server": "scaffolding on HTTPServer2",
            "server-timing": "gfet4t7; dur=1",
            "x-xss-protection": "0",
            "x-frame-options": "SAMEORIGIN",
            "x-content-type-options": "nosniff",
        }

    base_path = ""
    batches: EmulatedBatchApi | None = GOOGLE_BATCHES

    def own_route(self, raw: RawRequest) -> HostRoute | None:
        match = GENERATE_ROUTE.match(raw.path)
        if match is None:
            return None
        model, method = match.groups()
        if method != "streamGenerateContent":
            return HostRoute(
                self.provider, model, not_found=method != "generateContent", stream=False
            )
        problem = (
            None
            if "alt=sse" in raw.query.split("&")
            else "wink emulator: only the SSE form of streamGenerateContent (?alt=sse) is emulated."
        )
        return HostRoute(self.provider, model, stream=True, problem=problem)

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered | None:
        if not routed and "x-goog-api-key" not in raw.headers:
            return None
        message = (
            f"models/{ctx.model} is not found for API version v1beta, or is not "
            "supported for this method."
            if ctx.model
            else "Requested entity was not found."
        )
        return self.render_not_found(message, ctx)

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        return google_stream(body, ctx, size, turn)

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        return google_stream_error(fault)

    def stream_event(self, value: Any) -> bytes:
        return google_event(value)

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        usage = turn.usage
        metadata: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": max(0, usage.output_tokens - usage.reasoning_tokens),
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.input_tokens}],
        }
        if usage.cached_tokens:
            metadata["cachedContentTokenCount"] = usage.cached_tokens
        if usage.reasoning_tokens:
            metadata["thoughtsTokenCount"] = usage.reasoning_tokens
        body: dict[str, Any] = {}
        if turn.finish == "refusal":
            # Gemini has no refusal finish reason: the closest is a blocked prompt.
            body["promptFeedback"] = {"blockReason": "SAFETY", "safetyRatings": _SAFETY_RATINGS}
            metadata = {
                "promptTokenCount": usage.input_tokens,
                "totalTokenCount": usage.input_tokens,
            }
        else:
            body["candidates"] = [self._candidate(turn, ctx)]
        body["usageMetadata"] = metadata
        body["modelVersion"] = ctx.model
        body["responseId"] = ctx.ids.google_response()
        return Rendered(200, self.headers(ctx), dump(body))

    def _candidate(self, turn: Turn, ctx: WireContext) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        shown = [thought.text for thought in turn.thinking if not thought.redacted]
        if shown and _includes_thoughts(ctx.body):
            # One thought part, the summary of it all (a stream could not tell two apart).
            parts.append({"text": "\n\n".join(shown), "thought": True})
        parts.extend(builtin_parts(ctx.body, turn.content))
        if turn.content is not None:
            parts.append({"text": turn.content})
        calls: list[dict[str, Any]] = []
        for call in turn.calls:
            function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
            if ctx.google_call_ids:
                function_call["id"] = call.id or ctx.ids.google_call()
            calls.append({"functionCall": function_call})
        parts.extend(calls)
        if (turn.thinking or signs_every_step(ctx.model)) and parts:
            # Gemini signs the first call of a step, or the last part of an answer.
            signed = calls[0] if calls else parts[-1]
            signed["thoughtSignature"] = seal("\n".join(t.text for t in turn.thinking))
        candidate: dict[str, Any] = {}
        if parts:
            candidate["content"] = {"parts": parts, "role": "model"}
        candidate["finishReason"] = _FINISH_REASONS.get(turn.finish, "STOP")
        candidate.update(builtin_metadata(ctx.body, turn.content))
        if turn.finish == "content_filter":
            candidate["safetyRatings"] = _SAFETY_RATINGS
        elif turn.calls:
            candidate["finishMessage"] = "Model generated function call(s)."
        candidate["index"] = 0
        return candidate

    def error(
        self,
        ctx: WireContext,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
    ) -> Rendered:
        """`{"error": {code, message, status[, details]}}`."""
        error: dict[str, Any] = {"code": status, "message": message, "status": code}
        if details:
            error["details"] = details
        return Rendered(status, self.headers(ctx), dump({"error": error}))

    def render_not_found(self, message: str, ctx: WireContext) -> Rendered:
        return self.error(ctx, 404, "NOT_FOUND", message)

    def render_fault(self, fault: Fault, ctx: WireContext) -> Rendered:
        kind = fault.kind
        if kind in ("rate_limit", "quota_exhausted"):
            return self._exhausted(fault, ctx)
        if kind == "overloaded":
            message = fault_message(fault, "The model is overloaded. Please try again later.")
            return self.error(ctx, 503, "UNAVAILABLE", message)
        if kind == "server_error":
            status = fault.status or 500
            code, text = _SERVER_ERRORS.get(status, ("INTERNAL", "Internal error encountered."))
            return self.error(ctx, status, code, fault_message(fault, text))
        if kind == "unauthorized":
            details = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ]
            message = fault_message(fault, "API key not valid. Please pass a valid API key.")
            return self.error(ctx, 401, "UNAUTHENTICATED", message, details)
        if kind == "permission_denied":
            message = fault_message(fault, "Permission denied on resource project wink-emulator.")
            return self.error(ctx, 403, "PERMISSION_DENIED", message)
        if kind == "not_found":
            model = ctx.model or "gemini-2.5-flash"
            message = fault_message(
                fault,
                f"models/{model} is not found for API version v1beta, or is not supported "
                "for generateContent. Call ModelService.ListModels to see the list of "
                "available models and their supported methods.",
            )
            return self.error(ctx, 404, "NOT_FOUND", message)
        if kind == "context_window_exceeded":
            message = fault_message(
                fault,
                "The input token count (1200293) exceeds the maximum number of tokens "
                "allowed (1048576).",
            )
            return self.error(ctx, 400, "INVALID_ARGUMENT", message)
        if kind == "wrong_shape":
            body = fault.body
            if body is None:
                body = {"modelVersion": ctx.model, "responseId": ctx.ids.google_response()}
            return Rendered(200, self.headers(ctx), dump(body))
        message = fault_message(fault, "Request contains an invalid argument.")
        return self.error(ctx, fault.status or 400, "INVALID_ARGUMENT", message)

    def _exhausted(self, fault: Fault, ctx: WireContext) -> Rendered:
        metric, quota_id, value = _QUOTAS[fault.kind]
        if ctx.rate is not None and fault.kind == "rate_limit":
            value = str(ctx.rate.limit)
        violation = {
            "quotaMetric": metric,
            "quotaId": quota_id,
            "quotaDimensions": {"location": "global", "model": ctx.model},
            "quotaValue": value,
        }
        details: list[dict[str, Any]] = [
            _HELP,
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        ]
        wait = fault.retry_after
        hint = ""
        if wait is not None:
            delay = proto_duration(wait)
            details.append(
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
            )
            hint = f"\nPlease retry in {delay}."
        message = (
            "You exceeded your current quota, please check your plan and billing details. "
            "For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.\n"
            f"* Quota exceeded for metric: {metric}, limit: {value}, model: {ctx.model}{hint}"
        )
        return self.error(ctx, 429, "RESOURCE_EXHAUSTED", fault_message(fault, message), details)

    def rate_headers(self, rate: RateSnapshot, now: float) -> Headers:
        return {}  # the Gemini API sends no rate-limit headers

    def validate(self, body: dict[str, Any]) -> str | None:
        if "contents" not in body:
            return "* GenerateContentRequest.contents: contents is not specified\n"
        return None

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        """What Gemini refuses in the conversation (`google_history.py`)."""
        return history_problem(body, self.tool_names(body), model)

    def instructions(self, body: dict[str, Any]) -> str | None:
        system = as_object(body.get("systemInstruction", body.get("system_instruction")))
        return content_text(system.get("parts")) or None

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        entries: list[HistoryEntry] = []
        for raw in as_list(body.get("contents")):
            content = as_object(raw)
            parts = [as_object(part) for part in as_list(content.get("parts"))]
            if content.get("role") == "model":
                entries.extend(_model_entries(parts))
                continue
            for part in parts:
                text, response = as_str(part.get("text")), part.get("functionResponse")
                if text is not None:
                    entries.append(HistoryEntry("user", text))
                elif response is not None:
                    entries.append(_result_entry(as_object(response)))
        return tuple(entries)

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        found: list[FoundPart] = []
        for index, content in enumerate(as_list(body.get("contents"))):
            for position, raw in enumerate(as_list(as_object(content).get("parts"))):
                part = as_object(raw)
                where = f"contents[{index}].parts[{position}]"
                found.extend(_media(part, where, in_tool_result=False))
                response = as_object(either(part, "functionResponse", "function_response"))
                for inner, item in enumerate(as_list(response.get("parts"))):
                    spot = f"{where}.function_response.parts[{inner}]"
                    found.extend(_media(as_object(item), spot, in_tool_result=True))
        return found

    def refuse_part(self, part: FoundPart, data: bytes | None) -> Fault | None:
        """Gemini's words for base64 it cannot decode and a media type it does not read."""
        if part.encoded is not None and data is None:
            shown = part.encoded[:40]
            return Fault.bad_request(
                f"Invalid value at '{part.path}.inline_data.data' (TYPE_BYTES), Base64 "
                f'decoding failed for "{shown}"'
            )
        media_type = part.media_type or ""
        if media_type not in _MEDIA_TYPES and not media_type.startswith(("text/", "video/")):
            return Fault.bad_request(f"Unsupported MIME type: {media_type}")
        return None

    def cache_prefixes(self, body: dict[str, Any]) -> tuple[CachePrefix, ...]:
        """Gemini caches on its own (implicit caching): a prefix ends at every content,
        after the system instruction and the tools."""
        items = [(body.get("systemInstruction"), False), (body.get("tools"), False)]
        items += [(content, True) for content in as_list(body.get("contents"))]
        return prefixes(items)

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        results: list[ToolResultView] = []
        for content in as_list(body.get("contents")):
            for part in as_list(as_object(content).get("parts")):
                raw = as_object(part).get("functionResponse")
                if raw is None:
                    continue
                response = as_object(raw).get("response")
                failed = "error" in as_object(response)
                name, call_id = as_str(as_object(raw).get("name")), as_str(as_object(raw).get("id"))
                results.append(ToolResultView(call_id, name, response, failed))
        return tuple(results)

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        names: list[str] = []
        for tool in as_list(body.get("tools")):
            for declaration in as_list(as_object(tool).get("functionDeclarations")):
                name = as_str(as_object(declaration).get("name"))
                if name is not None:
                    names.append(name)
        return tuple(names)

    # --- `POST /v1beta/models/{model}:countTokens` (token_counts.py)

    def token_count_model(self, path: str) -> str | None:
        match = _COUNT_ROUTE.match(path)
        return match.group(1) if match is not None else None

    def token_count_problem(self, body: dict[str, Any]) -> Fault | None:
        for key in body:
            if key not in ("contents", "generateContentRequest"):
                return Fault.bad_request(
                    f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
                )
        inner = body.get("generateContentRequest")
        if inner is not None:
            for key in as_object(inner):
                if key not in _GENERATE_FIELDS:
                    return Fault.bad_request(
                        "Invalid JSON payload received. Unknown name "
                        f"\"{key}\" at 'generate_content_request': Cannot find field."
                    )
        return None

    def counted_request(self, body: dict[str, Any]) -> dict[str, Any]:
        inner = body.get("generateContentRequest")
        return as_object(inner) if inner is not None else {"contents": body.get("contents")}

    def token_count_body(self, count: int) -> dict[str, Any]:
        return {
            "totalTokens": count,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": count}],
        }


def _model_entries(parts: list[dict[str, Any]]) -> list[HistoryEntry]:
    """A model turn's text (its text parts but thoughts, one entry) and calls, in order."""
    entries: list[HistoryEntry] = []
    texts = [
        as_str(part.get("text")) or ""
        for part in parts
        if "text" in part and part.get("thought") is not True
    ]
    for part in parts:
        call = part.get("functionCall")
        if "text" in part and part.get("thought") is not True and texts:
            entries.append(HistoryEntry("assistant", "".join(texts)))
            texts = []
        elif call is not None:
            function = as_object(call)
            name, call_id = as_str(function.get("name")), as_str(function.get("id"))
            text = arguments_text(function.get("args", {}))
            entries.append(HistoryEntry("call", text, name, call_id))
    return entries


def _result_entry(function: dict[str, Any]) -> HistoryEntry:
    """A `functionResponse` part: its `output` (or `error`) as text."""
    response = as_object(function.get("response"))
    failed = "error" in response
    value = response.get("error" if failed else "output", response)
    text = value if isinstance(value, str) else content_text(value)
    name, call_id = as_str(function.get("name")), as_str(function.get("id"))
    return HistoryEntry("result", text, name, call_id, failed)


def _includes_thoughts(body: dict[str, Any]) -> bool:
    """`generationConfig.thinkingConfig.includeThoughts`; the API reads the proto field
    names too (google-genai sends `include_thoughts`), so does the emulator."""
    generation = as_object(body.get("generationConfig", body.get("generation_config")))
    config = as_object(generation.get("thinkingConfig", generation.get("thinking_config")))
    return config.get("includeThoughts", config.get("include_thoughts")) is True


def _media(part: dict[str, Any], path: str, *, in_tool_result: bool) -> list[FoundPart]:
    """An `inlineData` or `fileData` part as a found part (none for any other)."""
    inline = either(part, "inlineData", "inline_data")
    if inline is not None:
        data = as_object(inline)
        media_type = as_str(either(data, "mimeType", "mime_type"))
        encoded = as_str(data.get("data")) or ""
        kind = kind_of_media(media_type)
        return [FoundPart(kind, path, media_type, encoded, None, in_tool_result, urlsafe=True)]
    linked = either(part, "fileData", "file_data")
    if linked is not None:
        data = as_object(linked)
        media_type = as_str(either(data, "mimeType", "mime_type"))
        url = as_str(either(data, "fileUri", "file_uri"))
        kind = kind_of_media(media_type)
        return [FoundPart(kind, path, media_type, url=url, in_tool_result=in_tool_result)]
    return []
