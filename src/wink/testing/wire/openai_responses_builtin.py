"""The Responses API's built-in tools on the emulated wire: the `web_search` and
`code_interpreter` tools a request may offer (and the 400s for the ones it may not), the
`web_search_call` / `code_interpreter_call` items a turn's `ran` renders to, the
`url_citation` annotations of its `citations`, and the stream events of both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..builtin import EmulatedCitation, EmulatedCodeRun, EmulatedFetch, EmulatedSearch
from ..faults import Fault
from ..formats import as_list, as_object, as_str
from ..turns import ExpectationFailed, Turn
from .base import WireContext

__all__ = [
    "BUILTIN_ITEMS",
    "annotation_events",
    "url_annotations",
    "builtin_items",
    "item_events",
    "tools_refusal",
]

BUILTIN_ITEMS = frozenset({"web_search_call", "code_interpreter_call"})
# The tool types the API takes (the openai SDK's `ToolParam`), in the order it lists them
_TOOL_TYPES = (
    "function",
    "file_search",
    "computer",
    "computer_use_preview",
    "web_search",
    "web_search_2025_08_26",
    "mcp",
    "code_interpreter",
    "programmatic_tool_calling",
    "image_generation",
    "local_shell",
    "shell",
    "custom",
    "namespace",
    "tool_search",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "apply_patch",
)
_WEB_SEARCH_KEYS = frozenset(
    {"type", "filters", "user_location", "search_context_size", "external_web_access"}
)
_LOCATION_KEYS = frozenset({"type", "city", "region", "country", "timezone"})
_SEARCH_TYPES = ("web_search", "web_search_2025_08_26")

Emit = Callable[..., None]


def tools_refusal(body: dict[str, Any]) -> Fault | None:
    """The 400 for a tool of a type the API does not have, a `web_search` field it does not
    take (`max_uses` is Anthropic's), or a `code_interpreter` with no
    container."""
    for index, raw in enumerate(as_list(body.get("tools"))):
        tool = as_object(raw)
        kind = as_str(tool.get("type"))
        where = f"tools[{index}]"
        if kind not in _TOOL_TYPES:
            supported = ", ".join(f"'{name}'" for name in _TOOL_TYPES)
            return Fault.bad_request(
                f"Invalid value: '{kind}'. Supported values are: {supported}.",
                param=f"{where}.type",
                code="invalid_value",
            )
        if kind in _SEARCH_TYPES:
            unknown = _unknown(tool, _WEB_SEARCH_KEYS, where)
            unknown = unknown or _unknown(
                as_object(tool.get("filters")),
                frozenset({"allowed_domains", "blocked_domains"}),
                f"{where}.filters",
            )
            location = as_object(tool.get("user_location"))
            unknown = unknown or _unknown(location, _LOCATION_KEYS, f"{where}.user_location")
            if unknown is not None:
                return unknown
        if kind == "code_interpreter" and "container" not in tool:
            return Fault.bad_request(
                f"Missing required parameter: '{where}.container'.",
                param=f"{where}.container",
                code="missing_required_parameter",
            )
    return None


def _unknown(given: dict[str, Any], known: frozenset[str], where: str) -> Fault | None:
    extra = next((key for key in given if key not in known), None)
    if extra is None:
        return None
    return Fault.bad_request(
        f"Unknown parameter: '{where}.{extra}'.", param=f"{where}.{extra}", code="unknown_parameter"
    )


def builtin_items(turn: Turn, ctx: WireContext) -> list[dict[str, Any]]:
    """The output items of the tools the turn ran, before its message; a tool the request
    does not offer is the test's mistake (the model cannot run it)."""
    offered = {as_str(as_object(tool).get("type")) for tool in as_list(ctx.body.get("tools"))}
    include = as_list(ctx.body.get("include"))
    items: list[dict[str, Any]] = []
    for run in turn.ran:
        if isinstance(run, EmulatedSearch):
            if not offered & set(_SEARCH_TYPES):
                raise ExpectationFailed("the turn runs a web search the request does not offer")
            action: dict[str, Any] = {"type": "search", "query": run.query}
            if "web_search_call.action.sources" in include:
                action["sources"] = [{"type": "url", "url": url} for url in run.sources]
            item_id = ctx.ids.response_item("ws")
            items.append(
                {"id": item_id, "type": "web_search_call", "status": "completed", "action": action}
            )
        elif isinstance(run, EmulatedFetch):
            raise ExpectationFailed("the turn reads a page: the Responses API has no such tool")
        else:
            if "code_interpreter" not in offered:
                raise ExpectationFailed("the turn runs code the request does not offer")
            items.append(_code_item(run, ctx, "code_interpreter_call.outputs" in include))
    return items


def _code_item(run: EmulatedCodeRun, ctx: WireContext, outputs: bool) -> dict[str, Any]:
    return {
        "id": ctx.ids.response_item("ci"),
        "type": "code_interpreter_call",
        "status": "completed",
        "code": run.code,
        "container_id": ctx.ids.response_item("cntr"),
        "outputs": [{"type": "logs", "logs": run.output}] if outputs else None,
    }


def url_annotations(citations: tuple[EmulatedCitation, ...]) -> list[dict[str, Any]]:
    """The `url_citation` annotations of the turn's `output_text`."""
    return [
        {
            "type": "url_citation",
            "start_index": citation.start,
            "end_index": citation.end,
            "url": citation.url,
            "title": citation.title,
        }
        for citation in citations
    ]


# --- stream events (called from the Responses stream renderer)


def item_events(emit: Emit, index: int, item: dict[str, Any], size: int) -> None:
    """A built-in tool's item as the API streams it: added in progress, its progress
    events (a code run's code in `size`-character deltas), done whole."""
    item_id, kind = item["id"], item["type"]
    where = {"item_id": item_id, "output_index": index}
    if kind == "web_search_call":
        emit(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress"}
        )
        for step in ("in_progress", "searching", "completed"):
            emit(f"response.web_search_call.{step}", **where)
    else:
        opening = {**item, "status": "in_progress", "code": "", "outputs": None}
        emit("response.output_item.added", output_index=index, item=opening)
        emit("response.code_interpreter_call.in_progress", **where)
        code = item["code"] or ""
        for start in range(0, len(code), size):
            emit(
                "response.code_interpreter_call_code.delta",
                **where,
                delta=code[start : start + size],
            )
        emit("response.code_interpreter_call_code.done", **where, code=code)
        emit("response.code_interpreter_call.interpreting", **where)
        emit("response.code_interpreter_call.completed", **where)
    emit("response.output_item.done", output_index=index, item=item)


def annotation_events(emit: Emit, where: dict[str, Any], part: dict[str, Any]) -> None:
    """An `output_text` part's annotations, one `annotation.added` event each, after its
    text deltas."""
    for position, annotation in enumerate(part.get("annotations") or ()):
        emit(
            "response.output_text.annotation.added",
            **where,
            annotation_index=position,
            annotation=annotation,
        )
