"""Gemini's built-in tools and grounding: `wink.WebSearch` / `CodeExecution` / `UrlContext`
as `googleSearch`, `codeExecution` and `urlContext` tools, and what they leave in an
answer read back as neutral values (docs/builtin-tools.md).

The `executableCode` and `codeExecutionResult` parts are the code runs; a candidate's
`groundingMetadata` holds the search queries, the pages found (`groundingChunks`) and which
span of the answer each supports (`groundingSupports`, in UTF-8 bytes); its
`urlContextMetadata` the pages read. The parts themselves go back to Gemini verbatim in the
turn's native items.
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
    UrlContext,
    WebSearch,
    WebSource,
    refuse_builtin,
)
from ...core.transport.errors import MalformedResponse

__all__ = ["builtin_calls", "grounding_citations", "map_builtin_tools", "search_requests"]

_RETRIEVED = "URL_RETRIEVAL_STATUS_SUCCESS"


def map_builtin_tools(
    tools: Iterable[BuiltinTool], wire: str, *, exclude_domains: bool = False
) -> list[dict[str, Any]]:
    """One `Tool` object per built-in tool. Google Search takes no search cap, allow-list
    or user location, so those are refused; `blocked_domains` is Vertex's `excludeDomains`
    (`exclude_domains`), which the Gemini API lacks."""
    mapped: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, WebSearch):
            mapped.append({"googleSearch": _google_search(tool, wire, exclude_domains)})
        elif isinstance(tool, CodeExecution):
            mapped.append({"codeExecution": {}})
        elif isinstance(tool, UrlContext):  # pyright: ignore[reportUnnecessaryIsInstance]
            mapped.append({"urlContext": {}})
    return mapped


def _google_search(tool: WebSearch, wire: str, exclude_domains: bool) -> dict[str, Any]:
    for option in ("max_uses", "allowed_domains", "user_location"):
        if getattr(tool, option) is not None:
            raise refuse_builtin(wire, tool, option)
    if tool.blocked_domains is None:
        return {}
    if not exclude_domains:
        raise refuse_builtin(wire, tool, "blocked_domains")
    return {"excludeDomains": list(tool.blocked_domains)}


def _object(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def builtin_calls(
    parts: list[dict[str, Any]], candidate: dict[str, Any], provider: str
) -> tuple[BuiltinToolCall, ...]:
    """The code runs (each `executableCode` part with the `codeExecutionResult` after it),
    then the search (its queries and the pages found), then the pages read."""
    calls: list[BuiltinToolCall] = []
    for part in parts:
        code = part.get("executableCode")
        if code is not None:
            given = _object(code)
            calls.append(
                BuiltinToolCall(
                    provider,
                    "code_execution",
                    _text(given.get("id")),
                    code=_text(given.get("code")),
                )
            )
            continue
        result = part.get("codeExecutionResult")
        if result is None:
            continue
        given = _object(result)
        outcome, output = _text(given.get("outcome")), _text(given.get("output"))
        failed = outcome not in (None, "OUTCOME_OK")
        if calls and calls[-1].tool == "code_execution" and calls[-1].output is None:
            calls[-1] = replace(calls[-1], output=output or "", error=outcome if failed else None)
        else:  # a result without its code (a stream cut between them): still reported
            calls.append(
                BuiltinToolCall(
                    provider,
                    "code_execution",
                    _text(given.get("id")),
                    output=output or "",
                    error=outcome if failed else None,
                )
            )
    grounding = _object(candidate.get("groundingMetadata"))
    queries = _strings(grounding.get("webSearchQueries"), "webSearchQueries")
    if queries:
        sources = tuple(source for source in _sources(grounding) if source is not None)
        calls.append(BuiltinToolCall(provider, "web_search", queries=queries, sources=sources))
    calls.extend(_url_reads(candidate, provider))
    return tuple(calls)


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):  # pyright: ignore[reportUnknownVariableType]
        raise MalformedResponse(f"groundingMetadata.{name} is not a list of strings")
    return tuple(cast(list[str], value))


def _sources(grounding: dict[str, Any]) -> list[WebSource | None]:
    """Each grounding chunk's page, by position (None: a chunk that is no web page)."""
    chunks: Any = grounding.get("groundingChunks")
    if chunks is None:
        return []
    if not isinstance(chunks, list):
        raise MalformedResponse("groundingMetadata.groundingChunks is not a list")
    found: list[WebSource | None] = []
    for chunk in cast(list[Any], chunks):
        web = _object(_object(chunk).get("web"))
        uri = _text(web.get("uri"))
        found.append(WebSource(uri, _text(web.get("title"))) if uri is not None else None)
    return found


def _url_reads(candidate: dict[str, Any], provider: str) -> list[BuiltinToolCall]:
    """`urlContextMetadata.urlMetadata`: one read for each URL, its status an error when
    the page could not be read."""
    metadata = _object(candidate.get("urlContextMetadata"))
    reads: list[BuiltinToolCall] = []
    for item in cast(list[Any], metadata.get("urlMetadata") or []):
        entry = _object(item)
        url = _text(entry.get("retrievedUrl"))
        if url is None:
            continue
        status = _text(entry.get("urlRetrievalStatus"))
        error = status if status not in (None, _RETRIEVED) else None
        reads.append(
            BuiltinToolCall(provider, "url_context", sources=(WebSource(url),), error=error)
        )
    return reads


def grounding_citations(text: str | None, candidate: dict[str, Any]) -> tuple[Citation, ...]:
    """One citation for each page a `groundingSupports` entry names, with the span of
    `text` it supports. Gemini counts the segment in UTF-8 bytes: the span is converted to
    characters, and checked against the segment's text (found in the answer when the bytes
    disagree, as after parts were joined)."""
    grounding = _object(candidate.get("groundingMetadata"))
    supports = grounding.get("groundingSupports")
    if not supports:
        return ()
    if not isinstance(supports, list):
        raise MalformedResponse("groundingMetadata.groundingSupports is not a list")
    sources = _sources(grounding)
    answer = text or ""
    encoded = answer.encode()
    citations: list[Citation] = []
    for item in cast(list[Any], supports):
        support = _object(item)
        span = _span(answer, encoded, _object(support.get("segment")))
        for index in cast(list[Any], support.get("groundingChunkIndices") or []):
            if not isinstance(index, int) or not 0 <= index < len(sources):
                raise MalformedResponse(f"a grounding support names no chunk {index!r}")
            source = sources[index]
            if source is not None:
                citations.append(Citation(url=source.url, title=source.title, span=span))
    return tuple(citations)


def _span(answer: str, encoded: bytes, segment: dict[str, Any]) -> tuple[int, int] | None:
    """The segment's (start, end) characters of the answer (end excluded), or None."""
    start, end = segment.get("startIndex", 0), segment.get("endIndex")
    said = _text(segment.get("text"))
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(encoded):
        try:
            before = encoded[:start].decode()
            piece = encoded[start:end].decode()
        except UnicodeDecodeError:
            before = piece = None
        if piece is not None and before is not None and (said is None or piece == said):
            return len(before), len(before) + len(piece)
    if said:
        at = answer.find(said)
        if at >= 0:
            return at, at + len(said)
    return None


def search_requests(candidate: dict[str, Any], model: str | None) -> int:
    """What Google bills for the searches of one answer: a grounded prompt for Gemini 2
    models (one, however many queries), each query for Gemini 3 models."""
    queries = _strings(
        _object(candidate.get("groundingMetadata")).get("webSearchQueries"), "webSearchQueries"
    )
    if not queries:
        return 0
    name = (model or "").removeprefix("models/")
    return len(queries) if name.startswith("gemini-3") else 1
