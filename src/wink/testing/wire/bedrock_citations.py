"""Converse's document citations on the emulated wire (the Bedrock API reference's
`CitationsConfig`, `CitationsContentBlock` and `CitationsDelta`): when the request's
documents ask for citations (`citations: {enabled: true}`), the answer's text is a
`citationsContent` block citing each of them, a text document by characters
(`documentChar`, its first sentence quoted), any other by pages (`documentPage`); a
stream sends each citation as a `citation` delta before the block's text."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

from ..formats import as_list, as_object, as_str

__all__ = ["answer_block", "block_text"]


def _documents(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The request's document blocks in order, inside tool results too: `documentIndex`
    counts them over the whole request."""
    for message in as_list(body.get("messages")):
        for raw in as_list(as_object(message).get("content")):
            block = as_object(raw)
            result = block.get("toolResult")
            inner = as_list(as_object(result).get("content")) if isinstance(result, dict) else []
            for item in (block, *(as_object(entry) for entry in inner)):
                if "document" in item:
                    yield as_object(item["document"])


def answer_block(body: dict[str, Any], text: str) -> dict[str, Any]:
    """The answer's text block: a `citationsContent` block when documents ask for
    citations, else a plain `text` block."""
    citations = [
        _citation(index, document)
        for index, document in enumerate(_documents(body))
        if as_object(document.get("citations")).get("enabled") is True
    ]
    if not citations:
        return {"text": text}
    return {"citationsContent": {"content": [{"text": text}], "citations": citations}}


def _text_of(document: dict[str, Any]) -> str:
    source = as_object(document.get("source"))
    if isinstance(source.get("text"), str):
        return source["text"]
    try:
        return base64.b64decode(as_str(source.get("bytes")) or "").decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""


def _citation(index: int, document: dict[str, Any]) -> dict[str, Any]:
    title = as_str(document.get("name")) or ""
    if document.get("format") != "txt":
        place = {"documentIndex": index, "start": 1, "end": 2}
        return {"title": title, "sourceContent": [], "location": {"documentPage": place}}
    text = _text_of(document)
    first = text.split(". ")[0]
    quoted = first if first == text else first + ". "
    place = {"documentIndex": index, "start": 0, "end": len(quoted)}
    return {
        "title": title,
        "sourceContent": [{"text": quoted}],
        "location": {"documentChar": place},
    }


def block_text(block: dict[str, Any]) -> str | None:
    """The text of an answer's `text` or `citationsContent` block (None: another block)."""
    if "text" in block:
        return as_str(block.get("text")) or ""
    if "citationsContent" in block:
        pieces = as_list(as_object(block["citationsContent"]).get("content"))
        return "".join(as_str(as_object(piece).get("text")) or "" for piece in pieces)
    return None
