"""Anthropic's document citations on the wire: what the API refuses of `citations`
(documents with and without them in one request; citations on an image), and what it
answers when asked: each text answer cites the request's cited documents, in the place
type that fits the source (`char_location` for plain text, `page_location` for a PDF,
`content_block_location` for a custom-content document), whole or streamed
(`citations_delta` events before the text, as the API streams them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..formats import as_list, as_object, as_str

__all__ = ["answer_citations", "citations_problem", "stream_text_start"]


def _documents(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every image and document block of the request, with its path, in order (inside
    tool results too): `document_index` counts the documents over all messages."""
    for m, message in enumerate(as_list(body.get("messages"))):
        for b, block in enumerate(as_list(as_object(message).get("content"))):
            block = as_object(block)
            path = f"messages.{m}.content.{b}"
            if block.get("type") == "tool_result":
                for i, inner in enumerate(as_list(block.get("content"))):
                    yield f"{path}.tool_result.content.{i}", as_object(inner)
            else:
                yield path, block


def _enabled(block: dict[str, Any]) -> bool:
    return as_object(block.get("citations")).get("enabled") is True


def citations_problem(body: dict[str, Any]) -> str | None:
    """The API's refusal of the request's `citations` settings (None: it takes them)."""
    documents: list[dict[str, Any]] = []
    for path, block in _documents(body):
        if block.get("type") == "image" and "citations" in block:
            return f"{path}.image.citations: Extra inputs are not permitted"
        if block.get("type") == "document":
            documents.append(block)
    cited = sum(1 for block in documents if _enabled(block))
    if 0 < cited < len(documents):
        return (
            "Citations must be enabled on all documents or on none of them: this request "
            f"enables them on {cited} of its {len(documents)} documents"
        )
    return None


def answer_citations(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The citations an answer to `body` carries: one per cited document (none when it
    asked for none)."""
    documents = [block for _, block in _documents(body) if block.get("type") == "document"]
    return [_citation(index, block) for index, block in enumerate(documents) if _enabled(block)]


def _citation(index: int, block: dict[str, Any]) -> dict[str, Any]:
    source = as_object(block.get("source"))
    place: dict[str, Any] = {
        "cited_text": "",
        "document_index": index,
        "document_title": as_str(block.get("title")),
    }
    if source.get("type") == "text":
        text = as_str(source.get("data")) or ""
        first = text.split(". ")[0]
        cited = first if first == text else first + ". "
        return {
            "type": "char_location",
            **place,
            "cited_text": cited,
            "start_char_index": 0,
            "end_char_index": len(cited),
        }
    if source.get("type") == "content":
        chunks = as_list(source.get("content"))
        cited = as_str(as_object(chunks[0]).get("text")) if chunks else None
        return {
            "type": "content_block_location",
            **place,
            "cited_text": cited or "",
            "start_block_index": 0,
            "end_block_index": 1,
        }
    return {"type": "page_location", **place, "start_page_number": 1, "end_page_number": 2}


def stream_text_start(
    block: dict[str, Any],
    start: Callable[[dict[str, Any]], None],
    delta: Callable[..., None],
) -> None:
    """A text block's `content_block_start`, and its citations as `citations_delta`
    events (a cited block starts with an empty `citations` list, as the API's does)."""
    citations = as_list(block.get("citations"))
    if not citations:
        start({"type": "text", "text": ""})
        return
    start({"citations": [], "type": "text", "text": ""})
    for citation in citations:
        delta(type="citations_delta", citation=citation)
