"""Tools the provider runs itself (web search, code execution, URL context) and what they
leave in an answer: the calls it made, and the citations that tie the answer to sources.

`WebSearch`, `CodeExecution` and `UrlContext` are asked for as values (a prompt's, a
section's or a call's `builtin_tools=`); each wire format maps them to its own tool, or
refuses one it does not offer with an `UnsupportedFeatureError` before anything is sent.
What the provider ran comes back as `BuiltinToolCall`s on the model turn (the queries and
sources, the code and its output), and its references as `Citation`s; both are neutral and
readable, while the provider's own blocks travel in the turn's native items, back to it
alone (docs/builtin-tools.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from .checks import kind_of
from .errors import InvalidArgumentError, UnsupportedFeatureError

__all__ = [
    "BuiltinTool",
    "BuiltinToolCall",
    "BuiltinToolKind",
    "Citation",
    "CodeExecution",
    "UrlContext",
    "UserLocation",
    "WebSearch",
    "WebSource",
    "builtin_tools_of",
    "merge_builtin_tools",
    "refuse_builtin",
]

BuiltinToolKind = Literal["web_search", "code_execution", "url_context"]


def _domains(value: object, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidArgumentError(
            f"WebSearch({name}=) takes a list of domains, got {kind_of(value)}", argument=name
        )
    domains = tuple(cast(Iterable[object], value))
    for domain in domains:
        if not isinstance(domain, str) or not domain.strip():
            raise InvalidArgumentError(
                f"WebSearch({name}=) holds domain names, got {domain!r}", argument=name
            )
    return cast(tuple[str, ...], domains)


@dataclass(frozen=True, slots=True)
class UserLocation:
    """Where the searching user is, roughly, so results fit it: a `city`, a `region`, a
    two-letter `country` code and an IANA `timezone`, each optional."""

    city: str | None = None
    region: str | None = None
    country: str | None = None
    timezone: str | None = None

    def __post_init__(self) -> None:
        for name in ("city", "region", "country", "timezone"):
            value: object = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidArgumentError(
                    f"UserLocation({name}=) takes a non-empty string or None, got {kind_of(value)}",
                    argument=name,
                )

    def fields(self) -> dict[str, str]:
        """The fields given, by name (what both Anthropic and OpenAI take)."""
        names = ("city", "region", "country", "timezone")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclass(frozen=True, slots=True)
class WebSearch:
    """The provider searches the web while it answers (OpenAI `web_search`, Anthropic
    `web_search`, Gemini `google_search`). `max_uses` caps the searches of one request,
    `allowed_domains` / `blocked_domains` limit where results come from, `user_location`
    localizes them; a wire that cannot honour one of them refuses it."""

    max_uses: int | None = None
    allowed_domains: Sequence[str] | None = None
    blocked_domains: Sequence[str] | None = None
    user_location: UserLocation | None = None

    kind: BuiltinToolKind = field(default="web_search", init=False, repr=False)

    def __post_init__(self) -> None:
        uses = cast(object, self.max_uses)
        if uses is not None and (isinstance(uses, bool) or not isinstance(uses, int) or uses < 1):
            raise InvalidArgumentError(
                f"WebSearch(max_uses=) takes a whole number from 1, got {uses!r}",
                argument="max_uses",
            )
        allowed = _domains(self.allowed_domains, "allowed_domains")
        blocked = _domains(self.blocked_domains, "blocked_domains")
        if allowed and blocked:
            raise InvalidArgumentError(
                "WebSearch takes allowed_domains or blocked_domains, not both",
                argument="blocked_domains",
            )
        object.__setattr__(self, "allowed_domains", allowed)
        object.__setattr__(self, "blocked_domains", blocked)
        location = cast(object, self.user_location)
        if location is not None and not isinstance(location, UserLocation):
            raise InvalidArgumentError(
                f"WebSearch(user_location=) takes a wink.UserLocation, got {kind_of(location)}",
                argument="user_location",
            )


@dataclass(frozen=True, slots=True)
class CodeExecution:
    """The provider runs code it writes in its own sandbox (OpenAI `code_interpreter`,
    Anthropic code execution, Gemini `code_execution`)."""

    kind: BuiltinToolKind = field(default="code_execution", init=False, repr=False)


@dataclass(frozen=True, slots=True)
class UrlContext:
    """The provider reads the pages at the URLs the prompt names (Gemini `url_context`,
    Anthropic `web_fetch`)."""

    kind: BuiltinToolKind = field(default="url_context", init=False, repr=False)


BuiltinTool = WebSearch | CodeExecution | UrlContext


def builtin_tools_of(value: object, argument: str = "builtin_tools") -> tuple[BuiltinTool, ...]:
    """`builtin_tools=` checked: a list of `WebSearch`, `CodeExecution`, `UrlContext`,
    each kind once."""
    if value is None:
        return ()
    if isinstance(value, str | bytes | WebSearch | CodeExecution | UrlContext) or not isinstance(
        value, Iterable
    ):
        raise InvalidArgumentError(
            f"{argument} takes a list of wink.WebSearch, wink.CodeExecution, wink.UrlContext, "
            f"got {kind_of(value)}",
            argument=argument,
        )
    tools: list[BuiltinTool] = []
    for item in cast(Iterable[object], value):
        if not isinstance(item, WebSearch | CodeExecution | UrlContext):
            raise InvalidArgumentError(
                f"{argument} holds wink.WebSearch, wink.CodeExecution or wink.UrlContext "
                f"values, got {kind_of(item)}",
                argument=argument,
            )
        if any(tool.kind == item.kind for tool in tools):
            raise InvalidArgumentError(f"{argument} asks for {item.kind} twice", argument=argument)
        tools.append(item)
    return tuple(tools)


def refuse_builtin(
    wire: str, tool: BuiltinTool, what: str | None = None
) -> UnsupportedFeatureError:
    """The error for a built-in tool (or one of its options, `what`) a wire does not offer."""
    asked = f"{type(tool).__name__}({what}=)" if what else type(tool).__name__
    return UnsupportedFeatureError(
        f"the {wire} wire format has no {asked}: it is not sent (docs/builtin-tools.md "
        "lists what each provider offers)",
        feature=tool.kind,
        provider=wire,
    )


@dataclass(frozen=True, slots=True)
class WebSource:
    """A page a web search found or a fetch read: its URL and, when given, its title."""

    url: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class BuiltinToolCall:
    """One run of a provider's built-in tool, as the model turn reports it.

    `tool` is which (`web_search`, `code_execution`, `url_context`); a search has its
    `queries` and the `sources` it found, a code run its `code` and `output` (stdout and
    result), a fetch its `sources`; `error` is the provider's word when the tool failed.
    `provider` names the wire that ran it (an adapter's `provider`); the provider's own
    blocks for it stay in the turn's native items, for it alone.
    """

    provider: str
    tool: BuiltinToolKind
    id: str | None = None
    queries: tuple[str, ...] = ()
    sources: tuple[WebSource, ...] = ()
    code: str | None = None
    output: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Citation:
    """A source the answer relies on, and the part of the answer it supports.

    The source is a web page (`url`, `title`) or a document of the request
    (`document_index`, counted from 0 over the request's documents, and `document_title`),
    with the cited place in it: `pages` (first and last page, from 1), `chars` (start and
    end character, end excluded) or `blocks` (start and end block of a document made of
    content blocks, from 0, end excluded). `cited_text` is the text cited, when the provider gives
    it; `span` the (start, end) characters of `response.text` it supports (end excluded),
    when known.
    """

    cited_text: str | None = None
    url: str | None = None
    title: str | None = None
    document_index: int | None = None
    document_title: str | None = None
    pages: tuple[int, int] | None = None
    chars: tuple[int, int] | None = None
    span: tuple[int, int] | None = None
    blocks: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields that are set, as JSON values (the transcript's format)."""
        out: dict[str, Any] = {}
        for name in self.__slots__:
            value: object = getattr(self, name)
            if isinstance(value, tuple):
                out[name] = list(cast(tuple[int, ...], value))
            elif value is not None:
                out[name] = value
        return out


def merge_builtin_tools(*groups: tuple[BuiltinTool, ...]) -> tuple[BuiltinTool, ...]:
    """The tools of every group, each kind once: a later group's (a section's over its
    prompt's, a call's over both) replaces an earlier one of the same kind in its place."""
    merged: dict[str, BuiltinTool] = {}
    for group in groups:
        for tool in group:
            merged[tool.kind] = tool
    return tuple(merged.values())
