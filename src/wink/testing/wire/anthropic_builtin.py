"""Anthropic's server tools on the emulated wire: the tool versions the Messages API takes
(a beta tool only under its `anthropic-beta` flag, refused in the API's words otherwise),
the `server_tool_use` blocks and result blocks a turn's `ran` renders to, the text blocks
its `citations` split the answer into (`web_search_result_location`), the billed
`usage.server_tool_use` counts, and the check that a continued conversation sends the
blocks back as they were given.

The shapes are the API's (recorded in tests/conformance/streams/anthropic/): a web search
is `server_tool_use` `web_search` + `web_search_tool_result` (its `web_search_result`
items: url, title, encrypted_content, page_age); `code_execution_20250825` runs the code as
`bash_code_execution` + `bash_code_execution_tool_result` (the older
`code_execution_20250522` as `code_execution` + `code_execution_tool_result`); a page read
is `web_fetch` + `web_fetch_tool_result`. A search past the tool's `max_uses` is no refusal:
its result is the error block `max_uses_exceeded`, and it is not billed.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from ..builtin import EmulatedCitation, EmulatedCodeRun, EmulatedFetch, EmulatedSearch
from ..formats import as_list, as_object, as_str
from ..thinking import ReasoningLedger, seal
from ..turns import ExpectationFailed, Turn
from .base import WireContext

__all__ = [
    "altered_server_block",
    "beta_problem",
    "builtin_blocks",
    "cited_text_blocks",
    "remember_server_blocks",
    "server_tool_usage",
]

# The server tool versions the API takes under no beta flag, and the flag each other needs
_GENERAL = (
    "bash_20250124",
    "custom",
    "text_editor_20250124",
    "text_editor_20250429",
    "text_editor_20250728",
    "web_search_20250305",
)
_BETAS = {
    "code_execution_20250522": "code-execution-2025-05-22",
    "code_execution_20250825": "code-execution-2025-08-25",
    "web_fetch_20250910": "web-fetch-2025-09-10",
}
_FAMILIES = ("web_search_", "code_execution_", "web_fetch_")
_CITED_TEXT_MAX = 150  # the API quotes up to 150 characters of the source
_MEMORY = "anthropic:server:"


def beta_problem(headers: Mapping[str, str], body: dict[str, Any]) -> str | None:
    """The 400 for a server tool the request's beta flags do not enable (a beta tool sent
    without its flag, or a version the API does not have), in the API's words."""
    flags = {flag.strip() for flag in headers.get("anthropic-beta", "").split(",")}
    taken = set(_GENERAL) | {kind for kind, flag in _BETAS.items() if flag in flags}
    for index, raw in enumerate(as_list(body.get("tools"))):
        kind = as_str(as_object(raw).get("type"))
        if kind is None or kind in taken or not kind.startswith(_FAMILIES):
            continue
        expected = ", ".join(f"'{name}'" for name in sorted(taken))
        return (
            f"tools.{index}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    return None


def _offered(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The request's server tools by family (`web_search`, `code_execution`,
    `web_fetch`)."""
    offered: dict[str, dict[str, Any]] = {}
    for raw in as_list(body.get("tools")):
        tool = as_object(raw)
        kind = as_str(tool.get("type")) or ""
        for family in _FAMILIES:
            if kind.startswith(family):
                offered[family.rstrip("_")] = tool
    return offered


def _titles(turn: Turn) -> dict[str, str]:
    return {citation.url: citation.title for citation in turn.citations}


def builtin_blocks(turn: Turn, ctx: WireContext) -> tuple[list[dict[str, Any]], int]:
    """The blocks of the server tools the turn ran, in order, and the searches billed; a
    tool the request does not offer is the test's mistake (Claude cannot run it)."""
    offered = _offered(ctx.body)
    blocks: list[dict[str, Any]] = []
    searches = 0
    for run in turn.ran:
        call_id = "srvtoolu_01" + ctx.ids.alnum(22)
        if isinstance(run, EmulatedSearch):
            tool = offered.get("web_search")
            if tool is None:
                raise ExpectationFailed("the turn runs a web search the request does not offer")
            limit = tool.get("max_uses")
            over = isinstance(limit, int) and searches >= limit
            searches += 0 if over else 1
            blocks.extend(_search(call_id, run, _titles(turn), over))
        elif isinstance(run, EmulatedCodeRun):
            tool = offered.get("code_execution")
            if tool is None:
                raise ExpectationFailed("the turn runs code the request does not offer")
            blocks.extend(_code(call_id, run, tool.get("type") == "code_execution_20250522"))
        else:
            if "web_fetch" not in offered:
                raise ExpectationFailed("the turn reads a page the request does not offer")
            blocks.extend(_fetch(call_id, run))
    return blocks, searches


def _use(call_id: str, name: str, given: dict[str, Any]) -> dict[str, Any]:
    return {"type": "server_tool_use", "id": call_id, "name": name, "input": given}


def _search(
    call_id: str, run: EmulatedSearch, titles: dict[str, str], over: bool
) -> list[dict[str, Any]]:
    content: Any
    if over:
        content = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    else:
        content = [
            {
                "type": "web_search_result",
                "title": titles.get(url, url),
                "url": url,
                "encrypted_content": seal(url),
                "page_age": None,
            }
            for url in run.sources
        ]
    result = {"type": "web_search_tool_result", "tool_use_id": call_id, "content": content}
    return [_use(call_id, "web_search", {"query": run.query}), result]


def _code(call_id: str, run: EmulatedCodeRun, legacy: bool) -> list[dict[str, Any]]:
    outcome: dict[str, Any] = {"stdout": run.output, "stderr": "", "return_code": 0, "content": []}
    if legacy:
        result = {"type": "code_execution_result", **outcome}
        return [
            _use(call_id, "code_execution", {"code": run.code}),
            {"type": "code_execution_tool_result", "tool_use_id": call_id, "content": result},
        ]
    result = {"type": "bash_code_execution_result", **outcome}
    return [
        _use(call_id, "bash_code_execution", {"command": run.code}),
        {"type": "bash_code_execution_tool_result", "tool_use_id": call_id, "content": result},
    ]


def _fetch(call_id: str, run: EmulatedFetch) -> list[dict[str, Any]]:
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": run.text},
        "title": run.title or None,
        "citations": None,
    }
    result = {
        "type": "web_fetch_result",
        "url": run.url,
        "retrieved_at": "2025-09-10T00:00:00.000000+00:00",
        "content": document,
    }
    return [
        _use(call_id, "web_fetch", {"url": run.url}),
        {"type": "web_fetch_tool_result", "tool_use_id": call_id, "content": result},
    ]


def cited_text_blocks(text: str, citations: tuple[EmulatedCitation, ...]) -> list[dict[str, Any]]:
    """The answer's text as the API writes a cited answer: one text block for each run of
    text cited by the same sources, each cited block with its `citations`."""
    if not citations:
        return [{"type": "text", "text": text}]
    cuts = sorted({0, len(text), *(c.start for c in citations), *(c.end for c in citations)})
    blocks: list[dict[str, Any]] = []
    for start, end in pairwise(cuts):
        piece = text[start:end]
        covering = [c for c in citations if c.start <= start and end <= c.end]
        if not covering:
            blocks.append({"type": "text", "text": piece})
            continue
        cited = [_location(c, text) for c in covering]
        blocks.append({"citations": cited, "type": "text", "text": piece})
    return blocks


def _location(citation: EmulatedCitation, text: str) -> dict[str, Any]:
    quoted = text[citation.start : citation.end][:_CITED_TEXT_MAX]
    return {
        "type": "web_search_result_location",
        "cited_text": quoted,
        "url": citation.url,
        "title": citation.title,
        "encrypted_index": seal(f"{citation.url} {quoted}"),
    }


def server_tool_usage(turn: Turn, searches: int) -> dict[str, int]:
    """`usage.server_tool_use`: the searches and page reads billed."""
    fetches = sum(1 for run in turn.ran if isinstance(run, EmulatedFetch))
    return {"web_search_requests": searches, "web_fetch_requests": fetches}


# --- a continued conversation sends the blocks back unchanged


def remember_server_blocks(ledger: ReasoningLedger, blocks: list[dict[str, Any]]) -> None:
    """Each server tool call with its result block, as sent."""
    for use, result in zip(blocks[::2], blocks[1::2], strict=False):
        ledger.remember(_MEMORY + str(use["id"]), (use, result))


def altered_server_block(
    index: int, blocks: list[dict[str, Any]], ledger: ReasoningLedger
) -> str | None:
    """Why an assistant message's server tool call or result is not as the emulator sent
    it (its result left out, or either changed: the API checks the encrypted content it
    gave), else None."""
    for position, block in enumerate(blocks):
        if block.get("type") != "server_tool_use":
            continue
        sent = ledger.recall(_MEMORY + str(block.get("id")))
        if sent is None:
            continue
        use, result = sent
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        if block != use or following != result:
            return (
                f"messages.{index}.content.{position}: a `server_tool_use` block and its "
                "result must be sent back as the API returned them (wink emulator)"
            )
    return None
