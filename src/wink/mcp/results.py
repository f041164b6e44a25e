"""What an MCP server says, in wink's terms: its tools' names as providers can take them,
its results as `ToolResult`s, its failures as text that names no secret.

Pure functions over the SDK's result objects (its types are named for the type checker
only: `wink.mcp` imports the SDK when a server connects).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..core.foundation.results import ToolResult

if TYPE_CHECKING:
    import mcp.types

__all__ = [
    "Redactor",
    "describe_error",
    "name_problem",
    "offered_name",
    "redactor",
    "schema_of",
    "to_tool_result",
]

Redactor = Callable[[str], str]
"""Masks a server's secrets (env values, header values) in a text."""

MASK = "***"
_MIN_SECRET = 4  # shorter values ("1", "en") are not secrets, and masking them would garble text
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # what OpenAI, Anthropic and Gemini all take
_NO_OUTPUT = "(the tool returned no content)"


def redactor(values: Iterable[str]) -> Redactor:
    """A function masking each of `values` (and each word of one, so that the token of
    "Bearer <token>" is masked on its own too) wherever it appears."""
    secrets: set[str] = set()
    for value in values:
        secrets.add(value.strip())
        secrets.update(value.split())
    ordered = sorted((s for s in secrets if len(s) >= _MIN_SECRET), key=len, reverse=True)
    if not ordered:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(secret) for secret in ordered))
    return lambda text: pattern.sub(MASK, text)


def describe_error(error: BaseException) -> str:
    """`Type: message` of the exception that says what went wrong, taken out of the
    exception groups the SDK's task groups raise (a cancellation is the least telling)."""
    leaves = list(_leaves(error))
    chosen = next((leaf for leaf in leaves if isinstance(leaf, Exception)), None)
    chosen = chosen or (leaves[0] if leaves else error)
    text = str(chosen).strip()
    return f"{type(chosen).__name__}: {text}" if text else type(chosen).__name__


def _leaves(error: BaseException) -> Iterable[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", error)
        for inner in group.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def offered_name(name: str, prefix: str | None) -> str:
    """The name the model knows a server's tool by: `prefix_name`, with each character
    providers refuse (MCP allows `.` and `/`) replaced by `_`."""
    safe = _UNSAFE.sub("_", name)
    offered = f"{prefix}_{safe}" if prefix else safe
    if not re.match(r"[A-Za-z_]", offered):
        offered = f"_{offered}"
    return offered


def name_problem(offered: str) -> str | None:
    """Why a (made safe) name still cannot be offered, or None."""
    if len(offered) > _MAX_NAME:
        return f"longer than the {_MAX_NAME} characters providers take"
    return None


def to_tool_result(result: mcp.types.CallToolResult, redact: Redactor) -> ToolResult[Any]:
    """An MCP `CallToolResult` as the `ToolResult` the model reads.

    The model reads the content blocks as text (the spec has a tool that returns
    structured content also send it as text); `value` is the structured content when
    there is some, else that text. A result with `isError` is a failed result with the
    tool's own words, masked of the server's secrets.
    """
    text = "\n".join(_block_text(block) for block in result.content)
    structured = result.structured_content
    if result.is_error:
        return ToolResult.error(redact(text) or "the tool reported an error without a message")
    if not text and structured is None:
        return ToolResult(message=_NO_OUTPUT, value=None)
    if not text:  # structured content alone: the model reads it as JSON
        return ToolResult(message="", value=structured)
    value = structured if structured is not None else text
    return ToolResult(message=text, value=value, exclude_value_from_context=True)


def _block_text(block: mcp.types.ContentBlock) -> str:
    """One content block as text. Images and audio cannot go back to a model in a tool
    result yet: a note says what was there."""
    match block.type:
        case "text":
            return block.text
        case "image" | "audio":
            return _binary_note(block.type, block.mime_type, block.data)
        case "resource_link":
            title = block.title or block.name
            return f"[resource {block.uri}{f': {title}' if title else ''}]"
        case "resource":
            contents = block.resource
            text = getattr(contents, "text", None)
            if isinstance(text, str):
                return f"[resource {contents.uri}]\n{text}"
            blob = getattr(contents, "blob", "")
            return _binary_note(f"resource {contents.uri}", contents.mime_type, str(blob))


def _binary_note(what: str, mime_type: str | None, data: str) -> str:
    size = len(data.rstrip("=")) * 3 // 4  # base64: 4 characters for 3 bytes
    kind = f", {mime_type}" if mime_type else ""
    return (
        f"[{what}{kind}, about {size} bytes: not shown, wink does not pass images or audio "
        "from a tool to the model yet]"
    )


def schema_of(tool: mcp.types.Tool) -> Mapping[str, Any]:
    """A listed tool's input schema without the keys that only say which dialect it is
    (`$schema`, `$id`: not every provider takes them), an object schema at least."""
    schema = tool.input_schema
    cleaned = {key: value for key, value in schema.items() if key not in ("$schema", "$id")}
    cleaned.setdefault("type", "object")
    return cleaned
