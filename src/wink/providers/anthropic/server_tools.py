"""Anthropic's server tools and citations: `wink.WebSearch` / `CodeExecution` / `UrlContext`
as Messages API tools, and the `server_tool_use` blocks, their result blocks and the text
blocks' `citations` read back as neutral values (docs/builtin-tools.md).

The tools: `web_search_20250305`; `code_execution_20250825` under the beta flag
`code-execution-2025-08-25` (Claude runs `bash_code_execution` and
`text_editor_code_execution` with it); `web_fetch_20250910` under `web-fetch-2025-09-10`.
The blocks themselves go back to Claude verbatim in the turn's native items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, cast

from ...core.foundation.builtin import (
    BuiltinTool,
    BuiltinToolCall,
    BuiltinToolKind,
    Citation,
    CodeExecution,
    UrlContext,
    WebSearch,
    WebSource,
)
from ...core.transport.errors import MalformedResponse
from ...core.transport.http import EncodedRequest, HttpCalls

__all__ = [
    "BETA_HEADER",
    "BetaMergingCalls",
    "beta_headers",
    "builtin_calls",
    "citation_of",
    "map_builtin_tools",
    "text_citations",
]

BETA_HEADER = "anthropic-beta"
_CODE_EXECUTION = ("code_execution_20250825", "code-execution-2025-08-25")
_WEB_FETCH = ("web_fetch_20250910", "web-fetch-2025-09-10")
_WEB_SEARCH = "web_search_20250305"

# server_tool_use name -> the neutral kind
_KINDS: dict[str, BuiltinToolKind] = {
    "web_search": "web_search",
    "web_fetch": "url_context",
    "code_execution": "code_execution",
    "bash_code_execution": "code_execution",
    "text_editor_code_execution": "code_execution",
}


def map_builtin_tools(tools: Iterable[BuiltinTool]) -> tuple[list[dict[str, Any]], list[str]]:
    """(the tool definitions, the beta flags they need)."""
    mapped: list[dict[str, Any]] = []
    betas: list[str] = []
    for tool in tools:
        if isinstance(tool, WebSearch):
            mapped.append(_web_search(tool))
        elif isinstance(tool, CodeExecution):
            mapped.append({"type": _CODE_EXECUTION[0], "name": "code_execution"})
            betas.append(_CODE_EXECUTION[1])
        elif isinstance(tool, UrlContext):  # pyright: ignore[reportUnnecessaryIsInstance]
            mapped.append({"type": _WEB_FETCH[0], "name": "web_fetch"})
            betas.append(_WEB_FETCH[1])
    return mapped, betas


def beta_headers(tools: Iterable[BuiltinTool]) -> dict[str, str] | None:
    """The `anthropic-beta` header the tools need (None: none)."""
    betas = map_builtin_tools(tools)[1]
    return {BETA_HEADER: ",".join(betas)} if betas else None


class BetaMergingCalls:
    """The Messages HTTP calls, with a request's `anthropic-beta` flags added to the ones
    the client sends on every request (its `default_headers`) rather than replacing them:
    the SDK lets a request's header win over the client's, so a caller's own beta flag
    would silently go missing whenever a server tool needs another."""

    __slots__ = ("_calls",)

    def __init__(self, calls: HttpCalls) -> None:
        self._calls = calls

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return self._calls.post(client, _merged(client, wire), time_limit)

    async def post_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await self._calls.post_async(client, _merged(client, wire), time_limit)

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return self._calls.open_stream(client, _merged(client, wire), time_limit)

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await self._calls.open_stream_async(client, _merged(client, wire), time_limit)


def merge_betas(*values: str | None) -> str:
    """`anthropic-beta` values joined, comma-separated, each flag once, in order."""
    flags: dict[str, None] = {}
    for value in values:
        for flag in (value or "").split(","):
            if flag.strip():
                flags[flag.strip()] = None
    return ",".join(flags)


def _merged(client: Any, wire: EncodedRequest) -> EncodedRequest:
    """`wire` with its beta flags after the client's own (unchanged when it has none)."""
    wanted = (wire.headers or {}).get(BETA_HEADER)
    if wanted is None:
        return wire
    defaults: Mapping[str, object] = getattr(client, "default_headers", None) or {}
    own = defaults.get(BETA_HEADER)
    if not isinstance(own, str):  # none set (or the SDK's Omit)
        return wire
    headers = {**(wire.headers or {}), BETA_HEADER: merge_betas(own, wanted)}
    return EncodedRequest(wire.path, wire.content, headers)


def _web_search(tool: WebSearch) -> dict[str, Any]:
    mapped: dict[str, Any] = {"type": _WEB_SEARCH, "name": "web_search"}
    if tool.max_uses is not None:
        mapped["max_uses"] = tool.max_uses
    if tool.allowed_domains:
        mapped["allowed_domains"] = list(tool.allowed_domains)
    if tool.blocked_domains:
        mapped["blocked_domains"] = list(tool.blocked_domains)
    if tool.user_location is not None:
        mapped["user_location"] = {"type": "approximate", **tool.user_location.fields()}
    return mapped


def builtin_calls(blocks: Iterable[dict[str, Any]], provider: str) -> tuple[BuiltinToolCall, ...]:
    """Each `server_tool_use` block with its result block, as one call, in order."""
    calls: dict[str, BuiltinToolCall] = {}
    for block in blocks:
        kind = block.get("type")
        if kind == "server_tool_use":
            name, call_id = block.get("name"), block.get("id")
            if not isinstance(name, str) or not isinstance(call_id, str):
                raise MalformedResponse("a server_tool_use block has no id or name")
            tool = _KINDS.get(name)
            if tool is None:
                continue  # a server tool wink does not ask for: its blocks still echo back
            calls[call_id] = _call(provider, tool, call_id, _object(block.get("input")))
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            call = calls.get(str(block.get("tool_use_id")))
            if call is not None:
                calls[call.id or ""] = _with_result(call, block.get("content"))
    return tuple(calls.values())


def _object(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _call(
    provider: str, tool: BuiltinToolKind, call_id: str, given: dict[str, Any]
) -> BuiltinToolCall:
    if tool == "web_search":
        query = given.get("query")
        return BuiltinToolCall(
            provider, tool, call_id, queries=(query,) if isinstance(query, str) else ()
        )
    if tool == "url_context":
        url = given.get("url")
        sources = (WebSource(url),) if isinstance(url, str) else ()
        return BuiltinToolCall(provider, tool, call_id, sources=sources)
    code = next(
        (given[key] for key in ("code", "command", "file_text") if isinstance(given.get(key), str)),
        None,
    )
    return BuiltinToolCall(provider, tool, call_id, code=code)


def _with_result(call: BuiltinToolCall, content: Any) -> BuiltinToolCall:
    if isinstance(content, list):  # web search results
        found: list[WebSource] = []
        for item in cast(list[Any], content):
            result = _object(item)
            url = result.get("url")
            if isinstance(url, str):
                title = result.get("title")
                found.append(WebSource(url, title if isinstance(title, str) else None))
        return replace(call, sources=tuple(found))
    result = _object(content)
    error = result.get("error_code")
    if isinstance(error, str):
        return replace(call, error=error)
    if result.get("type") == "web_fetch_result":
        url = result.get("url")
        document = _object(result.get("content"))
        title = document.get("title")
        if isinstance(url, str):
            source = WebSource(url, title if isinstance(title, str) else None)
            return replace(call, sources=(source,))
        return call
    stdout, stderr = result.get("stdout"), result.get("stderr")
    output = "".join(part for part in (stdout, stderr) if isinstance(part, str))
    return replace(call, output=output)


def text_citations(block: dict[str, Any], span: tuple[int, int]) -> list[Citation]:
    """The citations of one text block, each supporting `span` (where the block's text
    sits in the answer)."""
    given = block.get("citations")
    if given is None:
        return []
    if not isinstance(given, list):
        raise MalformedResponse("a text block's citations is not a list")
    return [_citation(_object(item), span) for item in cast(list[Any], given)]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _range(item: dict[str, Any], start: str, end: str) -> tuple[int, int] | None:
    first, last = _number(item.get(start)), _number(item.get(end))
    return (first, last) if first is not None and last is not None else None


def citation_of(item: Any) -> Citation:
    """One citation object (a `citations_delta`'s), before the text it supports."""
    if not isinstance(item, dict):
        raise MalformedResponse("a citations_delta has no citation object")
    return _citation(cast(dict[str, Any], item), None)


def _citation(item: dict[str, Any], span: tuple[int, int] | None) -> Citation:
    kind = item.get("type")
    cited = _text(item.get("cited_text"))
    if kind in ("web_search_result_location", "search_result_location"):
        url = _text(item.get("url")) or _text(item.get("source"))
        return Citation(cited, url=url, title=_text(item.get("title")), span=span)
    return Citation(
        cited,
        document_index=_number(item.get("document_index")),
        document_title=_text(item.get("document_title")),
        pages=_range(item, "start_page_number", "end_page_number")
        if kind == "page_location"
        else None,
        chars=_range(item, "start_char_index", "end_char_index")
        if kind == "char_location"
        else None,
        span=span,
        blocks=_range(item, "start_block_index", "end_block_index")
        if kind == "content_block_location"
        else None,
    )
