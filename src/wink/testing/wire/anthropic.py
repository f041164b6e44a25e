"""Anthropic Messages (`POST /v1/messages`) on the wire."""

from __future__ import annotations

import base64
from typing import Any

from ..caching import CachePrefix, prefixes
from ..faults import Fault
from ..formats import as_list, as_object, as_str, dump, rfc3339
from ..history import HistoryEntry, arguments_text, content_text
from ..hosts import HostRoute
from ..parts import FoundPart, looks_like
from ..ratelimit import RateSnapshot
from ..records import Provider, ToolResultView
from ..server import RawRequest
from ..thinking import ReasoningLedger, seal
from ..turns import Turn
from .anthropic_batch import ANTHROPIC_BATCHES
from .anthropic_builtin import (
    beta_problem,
    builtin_blocks,
    cited_text_blocks,
    remember_server_blocks,
    server_tool_usage,
)
from .anthropic_citations import answer_citations, citations_problem
from .anthropic_history import blocks_of, history_problem
from .anthropic_stream import anthropic_stream, anthropic_stream_error
from .base import Headers, Rendered, WireContext, fault_message, retry_headers
from .batch import EmulatedBatchApi
from .sse import SseFraming

__all__ = ["AnthropicWire"]

_TOKEN_LIMIT = 2_000_000
_FAULT_REQUEST_LIMIT = 50
_STOP_REASONS = {
    "length": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
    "pause": "pause_turn",
}
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_IMAGE_MAX = 5 * 1024 * 1024  # base64 characters of one image
_MAX_CACHE_POINTS = 4
_SERVER_ERRORS = {
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    504: "Gateway timeout",
}
# What `count_tokens` takes; anything else (`max_tokens`, `temperature`, `stream`) is refused
_COUNTED = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "speed",
        "mcp_servers",
    }
)


class AnthropicWire(SseFraming):
    """Content blocks, `toolu_` ids, `stop_reason`, and the `{"type": "error"}` envelope."""

    provider: Provider = "anthropic"

    def headers(self, ctx: WireContext, request_id: str | None = None) -> Headers:
        return {
            "content-type": "application/json",
            "request-id": request_id or ctx.ids.anthropic_request(),
            "anthropic-organization-id": "00000000-0000-4000-8000-00000000e1a7",
            "x-robots-tag": "none",
        }

    base_path = ""
    batches: EmulatedBatchApi | None = ANTHROPIC_BATCHES

    def own_route(self, raw: RawRequest) -> HostRoute | None:
        return HostRoute(self.provider) if raw.path == "/v1/messages" else None

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered | None:
        if "anthropic-version" in raw.headers:
            return self.render_not_found("Not Found", ctx)
        return None

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        return anthropic_stream(body, ctx, size, turn)

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        return anthropic_stream_error(fault)

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        content = self._thinking(turn, ctx)
        thought = bool(content)
        refused = turn.finish == "refusal"  # the words go in stop_details.explanation
        ran, searches = builtin_blocks(turn, ctx)
        content.extend(ran)
        if ctx.ledger is not None:
            remember_server_blocks(ctx.ledger, ran)
        if turn.content is not None and not refused and turn.citations:
            content.extend(cited_text_blocks(turn.content, turn.citations))
        elif turn.content is not None and not refused:
            cited = answer_citations(ctx.body)
            content.append({"type": "text", "text": turn.content, **_listed(cited)})
        calls = [
            {
                "type": "tool_use",
                "id": call.id or ctx.ids.anthropic_tool_use(),
                "name": call.name,
                "input": call.arguments,
            }
            for call in turn.calls
        ]
        content.extend(calls)
        if turn.finish == "pause":
            content.extend(self._server_tool_blocks(ctx))
        if ctx.ledger is not None:
            for call in calls:  # with thinking, the next request must start the turn with it
                ctx.ledger.remember(f"anthropic:thought:{call['id']}", thought)
            if turn.finish == "pause":  # ... or send it back unchanged
                ctx.ledger.remember(f"anthropic:paused:{content[-2]['id']}", tuple(content))
        stop_reason = _STOP_REASONS.get(turn.finish, "tool_use" if turn.calls else "end_turn")
        usage = turn.usage
        written = usage.cache_write_tokens
        usage_body: dict[str, Any] = {
            "input_tokens": max(0, usage.input_tokens - usage.cached_tokens - written),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": usage.output_tokens,
            "service_tier": "standard",
            "inference_geo": "not_available",
        }
        if turn.ran:
            usage_body["server_tool_use"] = server_tool_usage(turn, searches)
        if usage.reasoning_tokens:
            usage_body["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
        stop_details = (
            {"type": "refusal", "category": None, "explanation": turn.content if refused else None}
            if stop_reason == "refusal"
            else None
        )
        body = {
            "model": ctx.model,
            "id": ctx.ids.anthropic_message(),
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "stop_details": stop_details,
            "usage": usage_body,
        }
        if any(block.get("type") == "server_tool_use" and "code" in block["name"] for block in ran):
            body["container"] = {
                "id": "container_011" + ctx.ids.alnum(21),
                "expires_at": rfc3339(ctx.now + 3600),
            }
        return Rendered(200, self.headers(ctx), dump(body))

    def _thinking(self, turn: Turn, ctx: WireContext) -> list[dict[str, Any]]:
        """Signed thinking blocks, first, when the request turns thinking on (the real API
        thinks only then); `display: "omitted"` empties their text."""
        config = as_object(ctx.body.get("thinking"))
        if config.get("type") not in ("enabled", "adaptive"):
            return []
        omitted = config.get("display") == "omitted"
        blocks: list[dict[str, Any]] = []
        for thought in turn.thinking:
            if thought.redacted:
                blocks.append({"type": "redacted_thinking", "data": seal(thought.text)})
            else:
                shown = "" if omitted else thought.text
                blocks.append({"type": "thinking", "thinking": shown, "signature": seal(shown)})
        return blocks

    def _server_tool_blocks(self, ctx: WireContext) -> list[dict[str, Any]]:
        """A web search the server ran during the paused turn, and its result."""
        call_id = "srvtoolu_01" + ctx.ids.alnum(22)
        result = {
            "type": "web_search_result",
            "title": "wink emulator search result",
            "url": "https://example.com/wink-emulator",
            "encrypted_content": seal("wink emulator search result"),
            "page_age": None,
        }
        return [
            {
                "type": "server_tool_use",
                "id": call_id,
                "name": "web_search",
                "input": {"query": "wink emulator search"},
            },
            {"type": "web_search_tool_result", "tool_use_id": call_id, "content": [result]},
        ]

    def error(self, ctx: WireContext, status: int, kind: str, message: str) -> Rendered:
        """`{"type": "error", "error": {type, message}, "request_id"}`."""
        request_id = ctx.ids.anthropic_request()
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": request_id,
        }
        return Rendered(status, self.headers(ctx, request_id), dump(body))

    def render_not_found(self, message: str, ctx: WireContext) -> Rendered:
        return self.error(ctx, 404, "not_found_error", message)

    def render_fault(self, fault: Fault, ctx: WireContext) -> Rendered:
        kind = fault.kind
        if kind == "rate_limit":
            return self._rate_limited(fault, ctx)
        if kind == "quota_exhausted":
            # Anthropic has no quota-specific 429: an empty balance is this 400.
            message = fault_message(
                fault,
                "Your credit balance is too low to access the Anthropic API. "
                "Please go to Plans & Billing to upgrade or purchase credits.",
            )
            return self.error(ctx, 400, "invalid_request_error", message)
        if kind == "overloaded":
            return self.error(ctx, 529, "overloaded_error", fault_message(fault, "Overloaded"))
        if kind == "server_error":
            status = fault.status or 500
            text = _SERVER_ERRORS.get(status, "Internal server error")
            return self.error(ctx, status, "api_error", fault_message(fault, text))
        if kind == "unauthorized":
            message = fault_message(fault, "invalid x-api-key")
            return self.error(ctx, 401, "authentication_error", message)
        if kind == "permission_denied":
            message = fault_message(
                fault, "Your API key does not have permission to use the specified resource."
            )
            return self.error(ctx, 403, "permission_error", message)
        if kind == "not_found":
            message = fault_message(fault, f"model: {ctx.model or 'claude-sonnet-4-6'}")
            return self.error(ctx, 404, "not_found_error", message)
        if kind == "context_window_exceeded":
            message = fault_message(fault, "prompt is too long: 208656 tokens > 200000 maximum")
            return self.error(ctx, 400, "invalid_request_error", message)
        if kind == "wrong_shape":
            body = fault.body
            if body is None:
                body = {"id": ctx.ids.anthropic_message(), "type": "message", "model": ctx.model}
            return Rendered(200, self.headers(ctx), dump(body))
        message = fault_message(fault, "Invalid request.")
        return self.error(ctx, fault.status or 400, "invalid_request_error", message)

    def _rate_limited(self, fault: Fault, ctx: WireContext) -> Rendered:
        limit = ctx.rate.limit if ctx.rate else _FAULT_REQUEST_LIMIT
        message = (
            "This request would exceed the rate limit for your organization "
            f"(00000000-0000-4000-8000-00000000e1a7) of {limit} requests per minute. "
            "For details, refer to: https://docs.claude.com/en/api/rate-limits. "
            "You can see the response headers for current usage. "
            "Please reduce the prompt length or the maximum tokens requested, "
            "or try again later."
        )
        rendered = self.error(ctx, 429, "rate_limit_error", message)
        if ctx.rate is None:
            reset = fault.retry_after if fault.retry_after is not None else 1.0
            snapshot = RateSnapshot(limit=limit, remaining=0, reset_after=reset)
            rendered.headers.update(self.rate_headers(snapshot, ctx.now))
        rendered.headers.update(retry_headers(fault))
        return rendered

    def rate_headers(self, rate: RateSnapshot, now: float) -> Headers:
        reset = rfc3339(now + rate.reset_after)
        return {
            "anthropic-ratelimit-requests-limit": str(rate.limit),
            "anthropic-ratelimit-requests-remaining": str(rate.remaining),
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-tokens-limit": str(_TOKEN_LIMIT),
            "anthropic-ratelimit-tokens-remaining": str(_TOKEN_LIMIT),
            "anthropic-ratelimit-tokens-reset": rfc3339(int(now)),
        }

    def validate(self, body: dict[str, Any]) -> str | None:
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return f"{name}: Field required"
        marked = sum(1 for block in _prompt_blocks(body) if "cache_control" in block)
        if marked > _MAX_CACHE_POINTS:
            return (
                f"A maximum of {_MAX_CACHE_POINTS} blocks with cache_control may be provided. "
                f"Found {marked}."
            )
        return citations_problem(body)

    def check_headers(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        """The server tools the request's `anthropic-beta` flags do not enable."""
        return beta_problem(headers, body)

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        found: list[FoundPart] = []
        for index, message in enumerate(as_list(body.get("messages"))):
            for position, raw in enumerate(as_list(as_object(message).get("content"))):
                block = as_object(raw)
                where = f"messages.{index}.content.{position}"
                if block.get("type") == "tool_result":
                    for inner, item in enumerate(as_list(block.get("content"))):
                        spot = f"{where}.tool_result.content.{inner}"
                        found.extend(_part(as_object(item), spot, in_tool_result=True))
                else:
                    found.extend(_part(block, where, in_tool_result=False))
        return found

    def refuse_part(self, part: FoundPart, data: bytes | None) -> Fault | None:
        """Anthropic's words for a refused image or document (docs/testing.md)."""
        if part.encoded is None or part.plain:
            return None  # a URL (fetched by the API) or a text document
        where = f"{part.path}.{part.kind}.source.base64"
        if part.kind == "image" and part.media_type not in _IMAGE_TYPES:
            allowed = ", ".join(f"'{kind}'" for kind in _IMAGE_TYPES[:-1])
            return Fault.bad_request(
                f"{where}.media_type: Input should be {allowed} or 'image/webp'"
            )
        if part.kind == "document" and part.media_type != "application/pdf":
            return Fault.bad_request(f"{where}.media_type: Input should be 'application/pdf'")
        if data is None:
            return Fault.bad_request(f"{where}: invalid base64 data")
        size = len(part.encoded)
        if part.kind == "image" and size > _IMAGE_MAX:
            return Fault.bad_request(
                f"{where}: image exceeds 5 MB maximum: {size} bytes > {_IMAGE_MAX} bytes"
            )
        if part.kind == "image" and not looks_like(data, part.media_type):
            return Fault.bad_request(
                f"{where}.data: Image does not match the provided media type {part.media_type}"
            )
        return None

    def cache_prefixes(self, body: dict[str, Any]) -> tuple[CachePrefix, ...]:
        """A prefix ends at each block marked with `cache_control` (tools, then system,
        then the messages: the order Anthropic caches in)."""
        items: list[tuple[dict[str, Any], bool]] = []
        for block in _prompt_blocks(body):
            unmarked = {key: value for key, value in block.items() if key != "cache_control"}
            items.append((unmarked, "cache_control" in block))
        return prefixes(items)

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        """What the Messages API refuses in the conversation (`anthropic_history.py`)."""
        return history_problem(body, self.tool_names(body), ledger)

    def instructions(self, body: dict[str, Any]) -> str | None:
        system = body.get("system")
        return content_text(system) or None if system is not None else None

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        names: dict[str, str] = {}
        entries: list[HistoryEntry] = []
        for raw in as_list(body.get("messages")):
            message = as_object(raw)
            content = message.get("content")
            blocks = blocks_of(message) if isinstance(content, list) else [{"text": content}]
            if message.get("role") == "assistant":
                entries.extend(_assistant_entries(blocks, names))
                continue
            for block in blocks:
                if block.get("type", "text") == "text":
                    entries.append(HistoryEntry("user", as_str(block.get("text")) or ""))
                elif block.get("type") == "tool_result":
                    call_id = as_str(block.get("tool_use_id"))
                    name = names.get(call_id) if call_id is not None else None
                    text = content_text(block.get("content"))
                    failed = block.get("is_error") is True
                    entries.append(HistoryEntry("result", text, name, call_id, failed))
        return tuple(entries)

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for raw in as_list(body.get("messages")):
            for raw_block in as_list(as_object(raw).get("content")):
                block = as_object(raw_block)
                if block.get("type") == "tool_use":
                    call_id, name = as_str(block.get("id")), as_str(block.get("name"))
                    if call_id is not None and name is not None:
                        names[call_id] = name
                elif block.get("type") == "tool_result":
                    call_id = as_str(block.get("tool_use_id"))
                    name = names.get(call_id) if call_id is not None else None
                    failed = block.get("is_error") is True
                    results.append(ToolResultView(call_id, name, block.get("content"), failed))
        return tuple(results)

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        names = (as_str(as_object(tool).get("name")) for tool in as_list(body.get("tools")))
        return tuple(name for name in names if name is not None)

    # --- `POST /v1/messages/count_tokens` (token_counts.py)

    def token_count_model(self, path: str) -> str | None:
        return "" if path == "/v1/messages/count_tokens" else None

    def token_count_problem(self, body: dict[str, Any]) -> Fault | None:
        for key in body:
            if key not in _COUNTED:
                return Fault.bad_request(f"{key}: Extra inputs are not permitted")
        for key in ("model", "messages"):
            if key not in body:
                return Fault.bad_request(f"{key}: Field required")
        return None

    def counted_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def token_count_body(self, count: int) -> dict[str, Any]:
        return {"input_tokens": count}


def _assistant_entries(blocks: list[dict[str, Any]], names: dict[str, str]) -> list[HistoryEntry]:
    """An assistant message's text (its text blocks, one entry) and calls, in order."""
    entries: list[HistoryEntry] = []
    texts = [as_str(b.get("text")) or "" for b in blocks if b.get("type", "text") == "text"]
    for block in blocks:
        kind = block.get("type", "text")
        if kind == "text" and texts:
            entries.append(HistoryEntry("assistant", "".join(texts)))
            texts = []
        elif kind == "tool_use":
            call_id, name = as_str(block.get("id")), as_str(block.get("name"))
            if call_id is not None and name is not None:
                names[call_id] = name
            text = arguments_text(block.get("input"))
            entries.append(HistoryEntry("call", text, name, call_id))
    return entries


def _prompt_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block of the prompt in cache order (a message's blocks with its role)."""
    blocks = [as_object(tool) for tool in as_list(body.get("tools"))]
    system = body.get("system")
    if isinstance(system, str):
        blocks.append({"type": "text", "text": system})
    blocks += [as_object(block) for block in as_list(system)]
    for message in as_list(body.get("messages")):
        role = str(as_object(message).get("role"))
        content = as_object(message).get("content")
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content, "role": role})
            continue
        blocks += [{**as_object(block), "role": role} for block in as_list(content)]
    return blocks


def _part(block: dict[str, Any], path: str, *, in_tool_result: bool) -> list[FoundPart]:
    """An `image` or `document` block as a found part (none for any other block)."""
    kind = block.get("type")
    if kind not in ("image", "document"):
        return []
    source = as_object(block.get("source"))
    media_type = as_str(source.get("media_type"))
    if source.get("type") == "content":  # a custom-content document: text blocks, no media
        return []
    if source.get("type") == "url":
        url = as_str(source.get("url"))
        return [FoundPart(kind, path, None, url=url, in_tool_result=in_tool_result)]
    if source.get("type") == "text":  # a plain-text document: its text, as bytes
        text = (as_str(source.get("data")) or "").encode()
        encoded = base64.b64encode(text).decode()
        return [
            FoundPart("document", path, "text/plain", encoded, None, in_tool_result, plain=True)
        ]
    encoded = as_str(source.get("data")) or ""
    return [FoundPart(kind, path, media_type, encoded, None, in_tool_result)]


def _listed(citations: list[dict[str, Any]]) -> dict[str, Any]:
    """A text block's `citations` field: there only when the request asked for them."""
    return {"citations": citations} if citations else {}
