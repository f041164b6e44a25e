"""The Responses API's built-in tools and citations: `wink.WebSearch` / `CodeExecution` as
`web_search` / `code_interpreter` tools, and the `web_search_call` and
`code_interpreter_call` output items and the `url_citation` annotations of `output_text`
read back as neutral values (docs/builtin-tools.md).

The API has no field for a search's `max_uses` (its `max_tool_calls` caps every built-in
tool's calls together) and no URL context tool: those are refused before sending. The
domain lists go in the tool's `filters`. The sources a search found and the logs a code run
printed come back only when asked for (`include`), which the request does whenever it
offers the tool. The items themselves go back to the API verbatim in the turn's native
items.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, cast

from ...core.foundation.builtin import (
    BuiltinTool,
    BuiltinToolCall,
    Citation,
    CodeExecution,
    WebSearch,
    WebSource,
    refuse_builtin,
)
from ...core.transport.errors import MalformedResponse

__all__ = [
    "BUILTIN_ITEMS",
    "builtin_call",
    "map_builtin_tools",
    "text_citations",
    "titled",
    "url_citation",
    "web_searches",
]

WIRE = "OpenAI Responses"
BUILTIN_ITEMS = frozenset({"web_search_call", "code_interpreter_call"})
_SOURCES = "web_search_call.action.sources"
_LOGS = "code_interpreter_call.outputs"


def map_builtin_tools(tools: Iterable[BuiltinTool]) -> tuple[list[dict[str, Any]], list[str]]:
    """(the tool definitions, the `include` values that bring their results back)."""
    mapped: list[dict[str, Any]] = []
    include: list[str] = []
    for tool in tools:
        if isinstance(tool, WebSearch):
            mapped.append(_web_search(tool))
            include.append(_SOURCES)
        elif isinstance(tool, CodeExecution):
            mapped.append({"type": "code_interpreter", "container": {"type": "auto"}})
            include.append(_LOGS)
        else:
            raise refuse_builtin(WIRE, tool)
    return mapped, include


def _web_search(tool: WebSearch) -> dict[str, Any]:
    if tool.max_uses is not None:
        raise refuse_builtin(WIRE, tool, "max_uses")
    mapped: dict[str, Any] = {"type": "web_search"}
    if tool.allowed_domains:
        mapped["filters"] = {"allowed_domains": list(tool.allowed_domains)}
    if tool.blocked_domains:
        mapped["filters"] = {"blocked_domains": list(tool.blocked_domains)}
    if tool.user_location is not None:
        mapped["user_location"] = {"type": "approximate", **tool.user_location.fields()}
    return mapped


def _object(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def builtin_call(item: dict[str, Any], provider: str) -> BuiltinToolCall:
    """A `web_search_call` or `code_interpreter_call` item as one neutral call."""
    item_id = _text(item.get("id"))
    error = "failed" if item.get("status") == "failed" else None
    if item.get("type") == "web_search_call":
        action = _object(item.get("action"))
        queries = [_text(action.get("query"))]
        given = action.get("queries")
        if isinstance(given, list):
            queries.extend(_text(query) for query in cast(list[Any], given))
        urls = [_text(_object(source).get("url")) for source in _list(action.get("sources"))]
        urls.append(_text(action.get("url")))  # open_page, find_in_page
        return BuiltinToolCall(
            provider,
            "web_search",
            item_id,
            queries=tuple(dict.fromkeys(query for query in queries if query)),
            sources=tuple(WebSource(url) for url in dict.fromkeys(urls) if url),
            error=error,
        )
    logs = (_object(output) for output in _list(item.get("outputs")))
    printed = [text for output in logs if (text := _text(output.get("logs"))) is not None]
    return BuiltinToolCall(
        provider,
        "code_execution",
        item_id,
        code=_text(item.get("code")),
        output="".join(printed) if printed else None,
        error=error,
    )


def titled(
    calls: Iterable[BuiltinToolCall], citations: Iterable[Citation]
) -> tuple[BuiltinToolCall, ...]:
    """The calls with each source's title, where a citation of the same URL gives one (a
    search's sources are bare URLs on this wire)."""
    titles = {citation.url: citation.title for citation in citations if citation.title}
    return tuple(
        replace(
            call,
            sources=tuple(WebSource(s.url, s.title or titles.get(s.url)) for s in call.sources),
        )
        if call.sources
        else call
        for call in calls
    )


def _list(value: Any) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []


def web_searches(response: dict[str, Any], items: Iterable[dict[str, Any]]) -> int:
    """The searches of an answer: the billed count where the answer gives one
    (`tool_usage.web_search.num_requests`), else its `web_search_call` items whose action is
    a search (opening or reading a page is not one)."""
    billed = _object(_object(response.get("tool_usage")).get("web_search")).get("num_requests")
    if isinstance(billed, int) and not isinstance(billed, bool) and billed >= 0:
        return billed
    return sum(
        1
        for item in items
        if item.get("type") == "web_search_call"
        and _object(item.get("action")).get("type", "search") == "search"
    )


def text_citations(part: dict[str, Any], at: int) -> list[Citation]:
    """The `url_citation` annotations of one `output_text` part, their spans moved by `at`
    (where the part's text sits in the answer); other annotations (file citations, file
    paths) name no web source and are left to the raw answer."""
    given = part.get("annotations")
    if given is None:
        return []
    if not isinstance(given, list):
        raise MalformedResponse("an output_text part's annotations is not a list")
    citations: list[Citation] = []
    for entry in cast(list[Any], given):
        citation = url_citation(_object(entry), at)
        if citation is not None:
            citations.append(citation)
    return citations


def url_citation(annotation: dict[str, Any], at: int) -> Citation | None:
    """One `url_citation` annotation as a `Citation` (None: another kind)."""
    if annotation.get("type") != "url_citation":
        return None
    url, start, end = (
        annotation.get("url"),
        annotation.get("start_index"),
        annotation.get("end_index"),
    )
    if not isinstance(url, str) or not _index(start) or not _index(end):
        raise MalformedResponse("a url_citation annotation has no url, start_index or end_index")
    span = (at + cast(int, start), at + cast(int, end))
    return Citation(url=url, title=_text(annotation.get("title")), span=span)


def _index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
