"""`MarkdownSection`: one part of a prompt, checked when it is built (key, title,
template placeholders, tools, attachments, children, params); and the checks `Prompt`
runs on its own fields the same way (`listed`, `template_names`, `check_sections`).

Everything that can be checked without parameter values is checked here
(`PromptValidationError`); rendering is `prompt.py`'s.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any, cast

from ..foundation.builtin import BuiltinTool, builtin_tools_of
from ..foundation.checks import kind_of
from ..foundation.content import Attachment, attachments_of
from ..foundation.errors import InvalidArgumentError, PromptValidationError
from .functions import as_tool
from .sources import ToolSource
from .tools import Tool
from .visibility import SectionPath

__all__ = ["MarkdownSection"]

_SECTION_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def dotted(path: SectionPath) -> str:
    return ".".join(path)


def is_a(value: object, kind: type[Any]) -> bool:
    """`isinstance`, for checking what callers outside the type checker pass in."""
    return isinstance(value, kind)


def _is_dataclass_type(value: object) -> bool:
    return isinstance(value, type) and dataclasses.is_dataclass(value)


def as_type(value: object) -> type[Any] | None:
    """`value` when it is a class, for error fields that name a type."""
    return value if isinstance(value, type) else None


def template_names(section_path: SectionPath, text: str, what: str) -> tuple[str, ...]:
    """The placeholder names of a template, or an error pointing at the stray `$`."""
    template = Template(text)
    if template.is_valid():
        return tuple(template.get_identifiers())
    invalid = next(m for m in Template.pattern.finditer(text) if m.group("invalid") is not None)
    offset = invalid.start()
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    raise PromptValidationError(
        f"malformed placeholder in the {what} at line {line}, column {column}: "
        "write ${name} for a value and $$ for a literal '$'",
        section_path=section_path,
    )


def listed(value: object, what: str, items: str, path: SectionPath) -> tuple[Any, ...]:
    """A list (any iterable) of `items` as a tuple. A str is refused by name, not read
    as its characters ("got 'H'"), and so is anything else that is not a collection."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        given = kind_of(cast(object, value))
        raise PromptValidationError(
            f"{what} must be a list of {items}, got {given}", section_path=path
        )
    return tuple(cast(Iterable[Any], value))


def _text(value: object, what: str, path: SectionPath) -> None:
    if not isinstance(value, str):
        raise PromptValidationError(
            f"section {what} must be a string, got {kind_of(value)}", section_path=path
        )


def check_sections(sections: Sequence[object], parent: SectionPath) -> None:
    """Children (or a prompt's sections) are sections, with keys unique among siblings."""
    seen: set[str] = set()
    for section in sections:
        if not isinstance(section, MarkdownSection):
            raise PromptValidationError(
                f"sections must be MarkdownSection instances, got {kind_of(section)}",
                section_path=parent,
            )
        if section.key in seen:
            raise PromptValidationError(
                f"two sections share the key {section.key!r}", section_path=(*parent, section.key)
            )
        seen.add(section.key)


@dataclass(frozen=True)
class MarkdownSection:
    """One part of a prompt: a template, the tools it offers, optional children.

    Its `title` is its heading; a section without one has none (its text alone).
    `literal=True` takes `template` as written, never as a template (`$` and braces
    are text: what a user typed), and sends it exactly, unstripped. `tools` are `Tool`s
    or plain functions (`wink.tool`, docs/tools.md).

    `template` (and `summary`) use `string.Template` placeholders: `${name}`, with `$$`
    for a literal dollar. Values come from `params` (a dataclass type) when given —
    every placeholder must then be one of its fields — otherwise from the first bound
    dataclass instance that has a field of that name. With a `summary`, the section is
    shown summarized (no children, no tools, no attachments) until opened.

    `attachments` (images, documents, audio) follow the section's text in the user turn
    (docs/multimodal.md). `cache=True` caches the prompt up to and including this
    section and its children, where the provider lets the caller choose
    (docs/caching.md). `mcp_servers` offers the tools of MCP servers
    (`wink.mcp.MCPServerStdio`, `wink.mcp.MCPServerHTTP`; any `ToolSource`) beside
    `tools`, listed when an evaluation starts.
    """

    key: str
    title: str | None = None
    template: str = ""
    tools: Sequence[Tool[Any, Any] | Callable[..., Any]] = ()
    summary: str | None = None
    children: Sequence[MarkdownSection] = ()
    params: type[Any] | None = None
    attachments: Sequence[Attachment] = ()
    cache: bool = False
    mcp_servers: Sequence[ToolSource] = ()
    literal: bool = False
    builtin_tools: Sequence[BuiltinTool] = ()
    placeholders: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        own_path = (self.key,)
        if not is_a(self.key, str) or not _SECTION_KEY.fullmatch(self.key):
            raise PromptValidationError(
                f"section key {self.key!r} must be lowercase letters, digits, '_' or '-', "
                "starting with a letter or digit",
                section_path=own_path,
            )
        if self.title is not None:
            _text(self.title, "title", own_path)
            if not self.title.strip() or "\n" in self.title:
                raise PromptValidationError(
                    "section title must be one non-empty line (or None: no heading)",
                    section_path=own_path,
                )
        _text(self.template, "template", own_path)
        if self.summary is not None:
            _text(self.summary, "summary", own_path)
        if not isinstance(cast(object, self.literal), bool):
            raise PromptValidationError(
                f"section literal must be True or False, got {kind_of(self.literal)}",
                section_path=own_path,
            )
        given = listed(self.tools, "tools", "Tool", own_path)
        for tool in given:
            if not is_a(tool, Tool) and not callable(tool):
                raise PromptValidationError(
                    f"section tools must be Tool instances or functions, got {kind_of(tool)}",
                    section_path=own_path,
                )
        object.__setattr__(self, "tools", tuple(as_tool(tool) for tool in given))
        try:
            builtin = builtin_tools_of(self.builtin_tools)
        except InvalidArgumentError as error:
            raise PromptValidationError(str(error), section_path=own_path) from None
        object.__setattr__(self, "builtin_tools", builtin)
        object.__setattr__(
            self, "children", listed(self.children, "children", "MarkdownSection", own_path)
        )
        self._check_parts(own_path)
        servers = listed(self.mcp_servers, "mcp_servers", "MCP servers", own_path)
        for server in servers:
            if not is_a(server, ToolSource):
                raise PromptValidationError(
                    "mcp_servers takes MCP servers (wink.mcp.MCPServerStdio, "
                    f"wink.mcp.MCPServerHTTP), got {kind_of(server)}",
                    section_path=own_path,
                )
        object.__setattr__(self, "mcp_servers", servers)
        check_sections(self.children, own_path)
        names = () if self.literal else template_names(own_path, self.template, "template")
        if self.summary is not None:
            names += template_names(own_path, self.summary, "summary")
        names = tuple(dict.fromkeys(names))
        self._check_params(own_path, names)
        object.__setattr__(self, "placeholders", names)

    @property
    def offered_tools(self) -> tuple[Tool[Any, Any], ...]:
        """`tools`, each a `Tool` (functions were made into theirs when built)."""
        return cast(tuple[Tool[Any, Any], ...], self.tools)

    def _check_parts(self, own_path: SectionPath) -> None:
        try:
            parts = attachments_of(self.attachments, "attachments", "section attachments")
        except InvalidArgumentError as error:
            raise PromptValidationError(str(error), section_path=own_path) from None
        object.__setattr__(self, "attachments", parts)
        if not isinstance(cast(object, self.cache), bool):
            raise PromptValidationError(
                f"section cache must be True or False, got {kind_of(self.cache)}",
                section_path=own_path,
            )

    def _check_params(self, own_path: SectionPath, names: tuple[str, ...]) -> None:
        if self.params is None:
            return
        if not _is_dataclass_type(self.params):
            raise PromptValidationError(
                f"section params must be a dataclass type, got {self.params!r}",
                section_path=own_path,
                dataclass_type=as_type(self.params),
            )
        fields = {f.name for f in dataclasses.fields(self.params)}
        for name in names:
            if name not in fields:
                raise PromptValidationError(
                    f"placeholder ${{{name}}} is not a field of {self.params.__name__}",
                    section_path=own_path,
                    placeholder=name,
                    dataclass_type=self.params,
                )


def walk(
    sections: Sequence[MarkdownSection], parent: SectionPath = ()
) -> Iterator[tuple[SectionPath, MarkdownSection]]:
    for section in sections:
        path = (*parent, section.key)
        yield path, section
        yield from walk(section.children, path)
