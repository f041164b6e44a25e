"""What the emulated model runs on the provider's side (a web search, a code run) and the
sources its text cites, independent of the wire format: each wire renders them in its own
shape (docs/testing.md). Today the OpenAI Responses wire does; the others answer the turn's
text and calls without them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ..core.foundation.checks import kind_of
from ..core.foundation.errors import InvalidArgumentError

__all__ = ["BuiltinRun", "EmulatedCitation", "EmulatedCodeRun", "EmulatedSearch", "builtin_runs"]


@dataclass(frozen=True, slots=True)
class EmulatedSearch:
    """A web search the model runs before it answers: its `query` and the URLs it found."""

    query: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EmulatedCodeRun:
    """Code the model runs in the provider's sandbox, and what it printed."""

    code: str
    output: str = ""


@dataclass(frozen=True, slots=True)
class EmulatedCitation:
    """A web source that supports the characters `start` to `end` (excluded) of the turn's
    text."""

    url: str
    title: str
    start: int
    end: int


BuiltinRun = EmulatedSearch | EmulatedCodeRun


def builtin_runs(
    ran: Sequence[BuiltinRun], citations: Sequence[EmulatedCitation], text: str | None
) -> tuple[tuple[BuiltinRun, ...], tuple[EmulatedCitation, ...]]:
    """`ran=` and `citations=` of a `Turn` constructor, checked: each citation's span lies
    in the text."""
    runs = tuple(cast(Sequence[object], ran))
    for run in runs:
        if not isinstance(run, EmulatedSearch | EmulatedCodeRun):
            raise InvalidArgumentError(
                f"ran= holds EmulatedSearch or EmulatedCodeRun values, got {kind_of(run)}",
                argument="ran",
            )
    cited = tuple(cast(Sequence[object], citations))
    length = len(text or "")
    for citation in cited:
        if not isinstance(citation, EmulatedCitation):
            raise InvalidArgumentError(
                f"citations= holds EmulatedCitation values, got {kind_of(citation)}",
                argument="citations",
            )
        if not 0 <= citation.start < citation.end <= length:
            raise InvalidArgumentError(
                f"an EmulatedCitation spans {citation.start}..{citation.end}, outside the "
                f"turn's text of {length} characters",
                argument="citations",
            )
    return cast(tuple[BuiltinRun, ...], runs), cast(tuple[EmulatedCitation, ...], cited)
