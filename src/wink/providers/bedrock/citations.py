"""Converse's document citations (the Bedrock API reference's `CitationsConfig`,
`CitationsContentBlock`, `Citation`, `CitationLocation` and `CitationsDelta`): a document
block asks for them with `citations: {enabled: true}`; the answer's cited text is a
`citationsContent` block (`content`: the generated text pieces, `citations`: each with the
document's `title`, the quoted `sourceContent` and a `location` of `documentChar`,
`documentPage` or `documentChunk`, each a `documentIndex` with `start` and `end`); a stream
sends each citation as a `citation` delta beside the block's `text` deltas."""

from __future__ import annotations

from typing import Any, cast

from ...core.foundation.builtin import Citation
from ...core.transport.errors import MalformedResponse

__all__ = ["cited_block", "cited_text", "citation_of"]

# location kind -> the Citation field its range fills
_PLACES = {"documentChar": "chars", "documentPage": "pages", "documentChunk": "blocks"}


def cited_text(block: dict[str, Any]) -> str:
    """The generated text of a `citationsContent` block."""
    content = _object(block.get("citationsContent")).get("content")
    if not isinstance(content, list):
        raise MalformedResponse("a citationsContent block has no content list")
    texts = [_object(piece).get("text") for piece in cast(list[Any], content)]
    return "".join(text for text in texts if isinstance(text, str))


def cited_block(block: dict[str, Any], span: tuple[int, int]) -> list[Citation]:
    """The citations of a `citationsContent` block, each supporting `span` (where its text
    sits in the answer)."""
    given: Any = _object(block.get("citationsContent")).get("citations", [])
    if not isinstance(given, list):
        raise MalformedResponse("a citationsContent block's citations is not a list")
    return [_citation(_object(item), span) for item in cast(list[Any], given)]


def citation_of(item: Any) -> Citation:
    """A streamed `citation` delta, before the text it supports."""
    if not isinstance(item, dict):
        raise MalformedResponse("a citation delta is not an object")
    return _citation(cast(dict[str, Any], item), None)


def _object(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _citation(item: dict[str, Any], span: tuple[int, int] | None) -> Citation:
    quoted = [_object(piece).get("text") for piece in item.get("sourceContent") or ()]
    cited = "".join(text for text in quoted if isinstance(text, str)) or None
    title = item.get("title")
    location = _object(item.get("location"))
    found: dict[str, Any] = {}
    for kind, field in _PLACES.items():
        place = _object(location.get(kind))
        if place:
            index, start, end = (place.get(key) for key in ("documentIndex", "start", "end"))
            found["document_index"] = index if isinstance(index, int) else None
            if isinstance(start, int) and isinstance(end, int):
                found[field] = (start, end)
    web = _object(location.get("web"))
    url = web.get("url")
    return Citation(
        cited,
        url=url if isinstance(url, str) else None,
        title=title if isinstance(title, str) and isinstance(url, str) else None,
        document_title=title if isinstance(title, str) and not isinstance(url, str) else None,
        span=span,
        **found,
    )
