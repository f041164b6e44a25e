"""Structured output read from the model's text: whole (`parse_output`) or as it streams
(`parse_partial_output`), a ```json fence tolerated either way."""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import TypeAdapter

__all__ = ["parse_output", "parse_partial_output", "type_adapter"]

_JSON_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)
_FENCE_OPENED = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n")


@functools.lru_cache(maxsize=256)
def type_adapter(output_type: Any) -> TypeAdapter[Any]:
    """One adapter per output type (building one is slow)."""
    return TypeAdapter(output_type)


def parse_output(output_type: Any, text: str) -> Any:
    """Validate the model's final text as `output_type`, tolerating a ```json fence.

    Raises pydantic's `ValidationError` (a `ValueError`) when the text is not valid JSON
    for the type; the loop turns that into `PromptEvaluationError(phase="response")`.
    """
    fenced = _JSON_FENCE.match(text)
    payload = fenced.group(1) if fenced else text
    return type_adapter(output_type).validate_json(payload)


def parse_partial_output(output_type: Any, text: str) -> tuple[bool, Any]:
    """`parse_output` of an answer still arriving: (True, the output so far), validated
    with pydantic's partial JSON parsing (`experimental_allow_partial="trailing-strings"`:
    the last field, list item or string may be cut short); (False, None) while the text
    does not validate yet, or ends in a number that may still grow (`1` of `12`)."""
    opened = _FENCE_OPENED.match(text)
    payload = text[opened.end() :].split("```", 1)[0].rstrip("`") if opened else text
    if _open_number(payload):
        return False, None
    try:
        adapter = type_adapter(output_type)
        return True, adapter.validate_json(payload, experimental_allow_partial="trailing-strings")
    except ValueError:  # pydantic's ValidationError
        return False, None


def _open_number(text: str) -> bool:
    """Whether `text` ends in a number outside a string (one more digit may follow)."""
    if not text or text[-1] not in "0123456789.-+eE":
        return False
    inside = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and inside:
            escaped = True
        elif char == '"':
            inside = not inside
    return not inside
