"""What the emulated model runs on the provider's side (a web search, a code run) and the
sources its text cites, independent of the wire format: each wire renders them in its own
shape (docs/testing.md): the OpenAI Responses and Anthropic wires render them; Gemini's
plays its own tools from the request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ..core.foundation.checks import a_string, a_whole_number, kind_of
from ..core.foundation.errors import InvalidArgumentError

__all__ = [
    "BuiltinRun",
    "EmulatedCitation",
    "EmulatedCodeRun",
    "EmulatedFetch",
    "EmulatedSearch",
    "builtin_runs",
]


@dataclass(frozen=True, slots=True)
class EmulatedSearch:
    """A web search the model runs before it answers: its `query` and the URLs it found."""

    query: str
    sources: Sequence[str] = ()

    def __post_init__(self) -> None:
        a_string(self.query, "EmulatedSearch(query=...)", "query")
        urls = _sequence(self.sources, "EmulatedSearch(sources=...)", "sources", "URLs")
        for url in urls:
            a_string(url, "EmulatedSearch(sources=...)", "sources")
        object.__setattr__(self, "sources", urls)


@dataclass(frozen=True, slots=True)
class EmulatedCodeRun:
    """Code the model runs in the provider's sandbox, and what it printed."""

    code: str
    output: str = ""

    def __post_init__(self) -> None:
        a_string(self.code, "EmulatedCodeRun(code=...)", "code")
        a_string(self.output, "EmulatedCodeRun(output=...)", "output", empty=True)


@dataclass(frozen=True, slots=True)
class EmulatedFetch:
    """A web page the model reads before it answers (Anthropic's web fetch): its `url`,
    `title` and the `text` found there."""

    url: str
    title: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        a_string(self.url, "EmulatedFetch(url=...)", "url")
        a_string(self.title, "EmulatedFetch(title=...)", "title", empty=True)
        a_string(self.text, "EmulatedFetch(text=...)", "text", empty=True)


@dataclass(frozen=True, slots=True)
class EmulatedCitation:
    """A web source that supports the characters `start` to `end` (excluded) of the turn's
    text."""

    url: str
    title: str
    start: int
    end: int

    def __post_init__(self) -> None:
        a_string(self.url, "EmulatedCitation(url=...)", "url")
        a_string(self.title, "EmulatedCitation(title=...)", "title", empty=True)
        start = a_whole_number(self.start, "EmulatedCitation(start=...)", "start", minimum=0)
        a_whole_number(self.end, "EmulatedCitation(end=...)", "end", minimum=start + 1)


BuiltinRun = EmulatedSearch | EmulatedCodeRun | EmulatedFetch


def _sequence(value: object, where: str, name: str, what: str) -> tuple[object, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidArgumentError(
            f"{where} takes a list of {what}, got {kind_of(value)}", argument=name
        )
    return tuple(cast(Sequence[object], value))


def builtin_runs(
    ran: Sequence[BuiltinRun], citations: Sequence[EmulatedCitation], text: str | None
) -> tuple[tuple[BuiltinRun, ...], tuple[EmulatedCitation, ...]]:
    """`ran=` and `citations=` of a `Turn` constructor, checked: each citation's span lies
    in the text."""
    runs = _sequence(
        ran, "Turn.text(ran=...)", "ran", "EmulatedSearch, EmulatedCodeRun, EmulatedFetch"
    )
    for run in runs:
        if not isinstance(run, EmulatedSearch | EmulatedCodeRun | EmulatedFetch):
            raise InvalidArgumentError(
                "ran= holds EmulatedSearch, EmulatedCodeRun or EmulatedFetch values, got "
                f"{kind_of(run)}",
                argument="ran",
            )
    cited = _sequence(citations, "Turn.text(citations=...)", "citations", "EmulatedCitation")
    length = len(text) if isinstance(text, str) else 0
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
