"""What an MCP server says, in wink's terms: its tools' names as providers can take them,
its results as `ToolResult`s, its failures as text that names no secret.

Pure functions over the SDK's result objects (its types are named for the type checker
only: `wink.mcp` imports the SDK when a server connects).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..core.foundation.content import Attachment, Document, Image
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

    The model reads the text blocks (the spec has a tool that returns structured content
    also send it as text); `value` is the structured content when there is some, else
    that text. Images, and PDFs embedded as resources, go to the model as parts
    (`attachments`); what cannot (audio, other binary content, bytes that are not what
    they claim) is a note saying what was there. A result with `isError` is a failed
    result in the tool's own words, masked of the server's secrets.
    """
    if result.is_error:
        text = "\n".join(_block_text(block) for block in result.content)
        return ToolResult.error(redact(text) or "the tool reported an error without a message")
    texts: list[str] = []
    parts: list[Attachment] = []
    for block in result.content:
        part = _part(block)
        if isinstance(part, Image | Document):
            parts.append(part)
        else:
            texts.append(_block_text(block, part))
    text = "\n".join(texts)
    structured = result.structured_content
    if not text and parts:
        text = f"The tool returned {', '.join(part.describe() for part in parts)}."
    if not text and structured is None:
        return ToolResult(message=_NO_OUTPUT, value=None)
    if not text:  # structured content alone: the model reads it as JSON
        return ToolResult(message="", value=structured)
    value = structured if structured is not None else text
    return ToolResult(message=text, value=value, exclude_value_from_context=True, attachments=parts)


def _part(block: mcp.types.ContentBlock) -> Attachment | str | None:
    """The block as a part the model can see (an image, a PDF), why it cannot be one, or
    None for a block that is not binary content."""
    if block.type == "image":
        media_type, data, kind = block.mime_type, block.data, Image
    elif block.type == "resource" and isinstance(getattr(block.resource, "blob", None), str):
        media_type = block.resource.mime_type or ""
        data = str(getattr(block.resource, "blob", ""))
        kind = Image if media_type.startswith("image/") else Document
        if kind is Document and media_type != "application/pdf":
            return "binary content"
    elif block.type == "audio":
        return "audio from a tool is not passed to the model"
    else:
        return None
    try:
        return kind(media_type, data=base64.b64decode(data, validate=True))
    except (ValueError, TypeError) as error:  # bad base64, bytes that are not the type
        return f"it could not be read as {media_type or 'a known type'} ({error})"


def _block_text(block: mcp.types.ContentBlock, why: Attachment | str | None = None) -> str:
    """One content block as text; binary content the model does not get as a part is a
    note saying what was there, and `why` it is not shown."""
    reason = why if isinstance(why, str) else "in an error result"
    match block.type:
        case "text":
            return block.text
        case "image" | "audio":
            return _binary_note(block.type, block.mime_type, block.data, reason)
        case "resource_link":
            title = block.title or block.name
            return f"[resource {block.uri}{f': {title}' if title else ''}]"
        case "resource":
            contents = block.resource
            text = getattr(contents, "text", None)
            if isinstance(text, str):
                return f"[resource {contents.uri}]\n{text}"
            blob = str(getattr(contents, "blob", ""))
            return _binary_note(f"resource {contents.uri}", contents.mime_type, blob, reason)


def _binary_note(what: str, mime_type: str | None, data: str, reason: str) -> str:
    size = len(data.rstrip("=")) * 3 // 4  # base64: 4 characters for 3 bytes
    kind = f", {mime_type}" if mime_type else ""
    return f"[{what}{kind}, about {size} bytes, not shown: {reason}]"


def schema_of(tool: mcp.types.Tool) -> Mapping[str, Any]:
    """A listed tool's input schema without the keys that only say which dialect it is
    (`$schema`, `$id`: not every provider takes them), an object schema at least."""
    schema = tool.input_schema
    cleaned = {key: value for key, value in schema.items() if key not in ("$schema", "$id")}
    cleaned.setdefault("type", "object")
    return cleaned
