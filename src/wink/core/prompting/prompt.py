"""Prompts: markdown sections with tools, parameters, structured output and visibility.

A `Prompt` is a tree of `MarkdownSection`s. Rendering fills each section's
`string.Template` from the dataclass instances bound with `Prompt.bind`, turns the tree
into one markdown system prompt (a heading per section, deeper sections get deeper
headings) and collects the tools of every section shown.

Progressive disclosure: a section with a `summary` is shown as that summary — without
its children or any of their tools — until it is opened. Opening happens through the
session (`apply_visibility`) or the `overrides` argument of `render`; the model asks for
it with the built-in `open_sections` tool, whose handler raises
`VisibilityExpansionRequired` so the caller can apply the overrides and evaluate again.

Everything that can be checked without parameter values is checked when a prompt or
section is built (`PromptValidationError`); what needs them, when rendering
(`PromptRenderError`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING, Any, Generic, cast

from pydantic import TypeAdapter
from typing_extensions import TypeVar

from ..foundation.builtin import BuiltinTool, builtin_tools_of, merge_builtin_tools
from ..foundation.checks import kind_of
from ..foundation.content import Attachment, CachePoint, TextPart, UserPart, attachments_of
from ..foundation.errors import (
    InvalidArgumentError,
    PromptRenderError,
    PromptValidationError,
    VisibilityExpansionRequired,
)
from ..foundation.messages import OutputSpec
from ..foundation.results import ToolResult
from .functions import as_tool
from .resources import ResourceBinding, ResourceFactory, ResourceRegistry
from .sources import ToolSource
from .tools import Tool, ToolContext, inline_schema_refs, is_model_type
from .visibility import (
    SectionPath,
    Visibility,
    VisibilityOverrides,
    check_overrides,
    check_session,
)

OutputT = TypeVar("OutputT", default=None)  # a prompt without output_type gives None

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "OPEN_SECTIONS_TOOL",
    "MarkdownSection",
    "OpenSectionsParams",
    "Prompt",
    "RenderedPrompt",
    "parse_output",
    "parse_partial_output",
]

OPEN_SECTIONS_TOOL = "open_sections"

_SECTION_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_JSON_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)
_FENCE_OPENED = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n")
_MAX_HEADING_DEPTH = 6


def _dotted(path: SectionPath) -> str:
    return ".".join(path)


def _is(value: object, kind: type[Any]) -> bool:
    """`isinstance`, for checking what callers outside the type checker pass in."""
    return isinstance(value, kind)


def _is_dataclass_type(value: object) -> bool:
    return isinstance(value, type) and dataclasses.is_dataclass(value)


def _as_type(value: object) -> type[Any] | None:
    """`value` when it is a class, for error fields that name a type."""
    return value if isinstance(value, type) else None


# --- sections


def _placeholders(section_path: SectionPath, text: str, what: str) -> tuple[str, ...]:
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


def _listed(value: object, what: str, items: str, path: SectionPath) -> tuple[Any, ...]:
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


def _check_sections(sections: Sequence[object], parent: SectionPath) -> None:
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
        if not _is(self.key, str) or not _SECTION_KEY.fullmatch(self.key):
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
        listed = _listed(self.tools, "tools", "Tool", own_path)
        for tool in listed:
            if not _is(tool, Tool) and not callable(tool):
                raise PromptValidationError(
                    f"section tools must be Tool instances or functions, got {kind_of(tool)}",
                    section_path=own_path,
                )
        object.__setattr__(self, "tools", tuple(as_tool(tool) for tool in listed))
        try:
            builtin = builtin_tools_of(self.builtin_tools)
        except InvalidArgumentError as error:
            raise PromptValidationError(str(error), section_path=own_path) from None
        object.__setattr__(self, "builtin_tools", builtin)
        object.__setattr__(
            self, "children", _listed(self.children, "children", "MarkdownSection", own_path)
        )
        self._check_parts(own_path)
        servers = _listed(self.mcp_servers, "mcp_servers", "MCP servers", own_path)
        for server in servers:
            if not _is(server, ToolSource):
                raise PromptValidationError(
                    "mcp_servers takes MCP servers (wink.mcp.MCPServerStdio, "
                    f"wink.mcp.MCPServerHTTP), got {kind_of(server)}",
                    section_path=own_path,
                )
        object.__setattr__(self, "mcp_servers", servers)
        _check_sections(self.children, own_path)
        names = () if self.literal else _placeholders(own_path, self.template, "template")
        if self.summary is not None:
            names += _placeholders(own_path, self.summary, "summary")
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
                dataclass_type=_as_type(self.params),
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


def _walk(
    sections: Sequence[MarkdownSection], parent: SectionPath = ()
) -> Iterator[tuple[SectionPath, MarkdownSection]]:
    for section in sections:
        path = (*parent, section.key)
        yield path, section
        yield from _walk(section.children, path)


# --- the built-in open_sections tool


@dataclass(frozen=True)
class OpenSectionsParams:
    """Arguments of `open_sections`: dotted section paths, e.g. "guide.details"."""

    section_keys: list[str]


def _open_sections_tool(
    prompt: Prompt[Any], shown_full: frozenset[SectionPath], summarized: Sequence[SectionPath]
) -> Tool[Any, Any]:
    known = dict(_walk(prompt.sections))
    listing = ", ".join(_dotted(path) for path in summarized)

    def open_sections(params: OpenSectionsParams, *, context: ToolContext) -> ToolResult[None]:
        requested = [tuple(key.strip().split(".")) for key in params.section_keys]
        unknown = [repr(_dotted(path)) for path in requested if path not in known]
        if unknown or not requested:
            plural = "s" if len(unknown) > 1 else ""
            what = (
                f"unknown section{plural} {', '.join(unknown)}" if unknown else "no section given"
            )
            return ToolResult[None].error(
                f"{what}; summarized sections: {listing}", code="invalid_input"
            )
        overrides: dict[SectionPath, Visibility] = {}
        for path in requested:  # open the section and every summarized section above it
            for depth in range(1, len(path) + 1):
                prefix = path[:depth]
                if known[prefix].summary is not None and prefix not in shown_full:
                    overrides[prefix] = "full"
        if not overrides:
            return ToolResult[None].ok(None, message="those sections are already shown in full")
        raise VisibilityExpansionRequired(
            f"the model asked to open {', '.join(_dotted(p) for p in overrides)}",
            requested_overrides=overrides,
            section_path=next(iter(overrides)),
        )

    return Tool(
        name=OPEN_SECTIONS_TOOL,
        description=(
            "Show summarized sections of your instructions in full. Pass their dotted "
            f"keys; currently summarized: {listing}."
        ),
        handler=open_sections,
    )


# --- prompts


@dataclass(frozen=True)
class RenderedPrompt:
    """What one render produced: the prompt text, the tools to offer, the output.

    `parts` is the prompt as the user turn carries it: the text in pieces, each shown
    section's attachments after its text, and a `CachePoint` after each section with
    `cache=True`; a prompt with neither is its text alone.
    """

    text: str
    tools: tuple[Tool[Any, Any], ...]
    output: OutputSpec | None
    output_type: type[Any] | None
    sections_rendered: tuple[SectionPath, ...]
    sections_summarized: tuple[SectionPath, ...] = ()
    parts: tuple[UserPart, ...] = ()
    tool_sources: tuple[ToolSource, ...] = ()  # of the sections shown, each once
    instructions: str | None = None  # the system instructions, filled (None: none given)
    builtin_tools: tuple[BuiltinTool, ...] = ()  # the prompt's, then the sections shown


_Item = str | Attachment | CachePoint


@dataclass
class _Render:
    """Mutable accumulator for one render pass: text blocks, attachments and cache
    points in order (`items`), the tools, the sections shown."""

    visibility: Mapping[SectionPath, Visibility]
    values: Mapping[SectionPath, Mapping[str, str]]
    items: list[_Item] = field(default_factory=lambda: list[_Item]())
    tools: list[Tool[Any, Any]] = field(default_factory=lambda: list[Tool[Any, Any]]())
    builtin: list[BuiltinTool] = field(default_factory=lambda: list[BuiltinTool]())
    sources: dict[int, ToolSource] = field(default_factory=lambda: dict[int, ToolSource]())
    rendered: list[SectionPath] = field(default_factory=lambda: list[SectionPath]())
    summarized: list[SectionPath] = field(default_factory=lambda: list[SectionPath]())

    def text(self) -> str:
        return "\n\n".join(item for item in self.items if isinstance(item, str))

    def parts(self) -> tuple[UserPart, ...]:
        """The items with neighbouring text blocks joined into one `TextPart`."""
        parts: list[UserPart] = []
        texts: list[str] = []
        for item in self.items:
            if isinstance(item, str):
                texts.append(item)
                continue
            if texts:
                parts.append(TextPart("\n\n".join(texts)))
                texts = []
            parts.append(item)
        if texts:
            parts.append(TextPart("\n\n".join(texts)))
        return tuple(parts)


@dataclass(frozen=True)
class Prompt(Generic[OutputT]):
    """A named tree of sections, its bound parameters and resources, its output type.

    Immutable: `bind` returns a new prompt. `render` turns it into a `RenderedPrompt`.
    `Prompt[Report]` (an `output_type=Report` prompt) evaluates to a
    `PromptResponse[Report]`, so a type checker knows `response.output`.

    `instructions` are the system instructions, a template filled like a section's (each
    placeholder from the first bound dataclass with that field); each provider gets them
    in its own field (docs/prompts.md). `builtin_tools` are tools the provider runs itself
    (`wink.WebSearch`, `wink.CodeExecution`, `wink.UrlContext`; docs/builtin-tools.md).
    """

    name: str
    sections: Sequence[MarkdownSection]
    output_type: type[OutputT] | None = None
    instructions: str | None = field(default=None, kw_only=True)
    bound_params: tuple[object, ...] = field(default=(), kw_only=True)
    resources: ResourceRegistry = field(default_factory=ResourceRegistry, kw_only=True)
    builtin_tools: Sequence[BuiltinTool] = field(default=(), kw_only=True)
    output: OutputSpec | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _is(self.name, str) or not _PROMPT_NAME.fullmatch(self.name):
            raise PromptValidationError(
                f"prompt name {self.name!r} must be non-empty letters, digits, '_', '.' or '-'"
            )
        object.__setattr__(
            self, "sections", _listed(self.sections, "sections", "MarkdownSection", ())
        )
        _check_sections(self.sections, ())
        object.__setattr__(
            self,
            "bound_params",
            _listed(self.bound_params, "bound_params", "dataclass instances", ()),
        )
        if not _is(self.resources, ResourceRegistry):
            raise PromptValidationError(
                f"resources must be a ResourceRegistry, got {kind_of(self.resources)} "
                "(bind them with prompt.bind(resources={Protocol: factory}))"
            )
        if self.instructions is not None and not _is(self.instructions, str):
            raise PromptValidationError(
                f"instructions must be a string or None, got {kind_of(self.instructions)}"
            )
        if self.instructions is not None:
            _placeholders((), self.instructions, "instructions")
        self._check_tools()
        self._check_params()
        try:
            object.__setattr__(self, "builtin_tools", builtin_tools_of(self.builtin_tools))
        except InvalidArgumentError as error:
            raise PromptValidationError(str(error)) from None
        object.__setattr__(self, "output", self._output_spec())

    def _check_tools(self) -> None:
        owners: dict[str, SectionPath] = {}
        for path, section in _walk(self.sections):
            for tool in section.offered_tools:
                if tool.name == OPEN_SECTIONS_TOOL:
                    raise PromptValidationError(
                        f"the tool name {OPEN_SECTIONS_TOOL!r} is reserved for wink",
                        section_path=path,
                    )
                first = owners.get(tool.name)
                if first is not None:
                    where = "twice in" if first == path else f"in both {_dotted(first)} and"
                    raise PromptValidationError(
                        f"tool {tool.name!r} is offered {where} {_dotted(path)}",
                        section_path=path,
                    )
                owners[tool.name] = path

    def _check_params(self) -> None:
        seen: set[type[Any]] = set()
        for value in self.bound_params:
            if isinstance(value, type) or not dataclasses.is_dataclass(value):
                raise PromptValidationError(
                    f"bind takes dataclass instances, got {value!r}",
                    dataclass_type=value if isinstance(value, type) else type(value),
                )
            kind = type(value)
            if kind in seen:
                raise PromptValidationError(
                    f"an instance of {kind.__name__} is already bound to prompt {self.name!r}",
                    dataclass_type=kind,
                )
            seen.add(kind)

    def _output_spec(self) -> OutputSpec | None:
        kind = self.output_type
        if kind is None:
            return None
        if not is_model_type(kind):
            raise PromptValidationError(
                f"output_type must be a dataclass or a pydantic BaseModel, got {kind!r}",
                dataclass_type=_as_type(kind),
            )
        schema = inline_schema_refs(_type_adapter(kind).json_schema())
        return OutputSpec(name=kind.__name__, schema=schema)

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        instructions: str | None = None,
        tools: Sequence[Tool[Any, Any] | Callable[..., Any]] = (),
        output_type: type[OutputT] | None = None,
        name: str = "prompt",
    ) -> Prompt[OutputT]:
        """The prompt of `evaluate("...")`: `text` as one user turn, exactly as given (no
        heading, no template: `$` and braces are text), `instructions` as written, and
        `tools` (`Tool`s or functions) and `output_type` as a `Prompt` takes them."""
        if not _is(text, str):
            raise InvalidArgumentError(
                f"a prompt is a string or a wink Prompt, got {kind_of(text)}", argument="prompt"
            )
        if instructions is not None and not _is(instructions, str):
            raise InvalidArgumentError(
                f"instructions must be a string or None, got {kind_of(instructions)}",
                argument="instructions",
            )
        escaped = instructions.replace("$", "$$") if instructions is not None else None
        section = MarkdownSection(key="prompt", template=text, tools=tools, literal=True)
        return cls(name, [section], output_type, instructions=escaped)

    def bind(
        self,
        *params: object,
        resources: Mapping[type[Any], ResourceFactory | ResourceBinding] | None = None,
    ) -> Prompt[OutputT]:
        """A new prompt with `params` (dataclass instances) and `resources` bound as well.

        A second instance of an already bound dataclass type is a `PromptValidationError`;
        a protocol bound twice is a `DuplicateBindingError`.
        """
        registry = self.resources.merge(resources) if resources else self.resources
        return dataclasses.replace(
            self, bound_params=(*self.bound_params, *params), resources=registry
        )

    def render(
        self,
        *,
        session: Session | None = None,
        overrides: Mapping[SectionPath, Visibility] | None = None,
    ) -> RenderedPrompt:
        """Fill every shown section and collect its tools; see the module docstring.

        Overrides come from the session's `VisibilityOverrides` slice, then `overrides`
        (which wins). Every section's placeholders are checked, shown or not, so a
        missing parameter fails on the first render, not when the model opens a section.
        """
        visibility: dict[SectionPath, Visibility] = {}
        if session is not None:
            check_session(session, "get")
            state = session.get(VisibilityOverrides, None)
            if state is not None:
                visibility.update(state.overrides)
        visibility.update(check_overrides(overrides or {}))
        values = {path: self._values(path, section) for path, section in _walk(self.sections)}
        result = _Render(visibility, values)
        for section in self.sections:
            _render_section(result, section, (section.key,))
        tools = list(result.tools)
        if result.summarized:
            shown_full = frozenset(p for p in result.rendered if p not in result.summarized)
            tools.append(_open_sections_tool(self, shown_full, result.summarized))
        return RenderedPrompt(
            text=result.text(),
            tools=tuple(tools),
            output=self.output,
            output_type=self.output_type,
            sections_rendered=tuple(result.rendered),
            sections_summarized=tuple(result.summarized),
            parts=result.parts(),
            tool_sources=tuple(result.sources.values()),
            instructions=self._instructions(),
            builtin_tools=merge_builtin_tools(
                cast("tuple[BuiltinTool, ...]", self.builtin_tools), tuple(result.builtin)
            ),
        )

    @property
    def tool_sources(self) -> tuple[ToolSource, ...]:
        """The MCP servers of every section, shown or not, each once (an adapter closes
        those it connected: `ToolSource.release`)."""
        found = {id(s): s for _, section in _walk(self.sections) for s in section.mcp_servers}
        return tuple(found.values())

    def _instructions(self) -> str | None:
        """The instructions filled from the bound params; None when there are none."""
        if self.instructions is None:
            return None
        values: dict[str, str] = {}
        for name in _placeholders((), self.instructions, "instructions"):
            source = next((p for p in self.bound_params if _has_field(p, name)), None)
            if source is None:
                raise PromptRenderError(
                    f"no bound dataclass has a field for placeholder ${{{name}}} of the "
                    "instructions",
                    placeholder=name,
                )
            values[name] = str(getattr(source, name))
        text = _template(self.instructions).substitute(values)
        return text or None

    def _values(self, path: SectionPath, section: MarkdownSection) -> dict[str, str]:
        if section.params is not None:
            source = next((p for p in self.bound_params if isinstance(p, section.params)), None)
            if source is None:
                raise PromptRenderError(
                    f"section needs a bound {section.params.__name__}",
                    section_path=path,
                    dataclass_type=section.params,
                )
            return {name: str(getattr(source, name)) for name in section.placeholders}
        values: dict[str, str] = {}
        for name in section.placeholders:
            source = next((p for p in self.bound_params if _has_field(p, name)), None)
            if source is None:
                raise PromptRenderError(
                    f"no bound dataclass has a field for placeholder ${{{name}}}",
                    section_path=path,
                    placeholder=name,
                )
            values[name] = str(getattr(source, name))
        return values


def _has_field(value: object, name: str) -> bool:
    return dataclasses.is_dataclass(value) and any(
        f.name == name for f in dataclasses.fields(value)
    )


@functools.lru_cache(maxsize=1024)
def _template(body: str) -> Template:
    """A section's template, dedented and compiled once (not on every render)."""
    return Template(textwrap.dedent(body).strip())


def _render_section(state: _Render, section: MarkdownSection, path: SectionPath) -> None:
    depth = min(len(path) + 1, _MAX_HEADING_DEPTH)
    values = state.values[path]
    summarized = section.summary is not None and state.visibility.get(path) != "full"
    if section.literal and not summarized:
        text = section.template
    else:
        body = section.summary if summarized and section.summary is not None else section.template
        text = _template(body).substitute(values)
    if section.title is None:
        if text:
            state.items.append(text)
    else:
        heading = f"{'#' * depth} {section.title}"
        state.items.append(f"{heading}\n\n{text}" if text else heading)
    state.rendered.append(path)
    if summarized:
        state.summarized.append(path)
        state.items.append(
            f"_This section is summarized. Call `{OPEN_SECTIONS_TOOL}` with "
            f'section_keys=["{_dotted(path)}"] to read it in full._'
        )
    else:
        state.tools.extend(section.offered_tools)
        state.builtin.extend(cast("tuple[BuiltinTool, ...]", section.builtin_tools))
        for server in section.mcp_servers:
            state.sources.setdefault(id(server), server)
        state.items.extend(section.attachments)
        for child in section.children:
            _render_section(state, child, (*path, child.key))
    if section.cache:
        state.items.append(CachePoint())


# --- structured output


@functools.lru_cache(maxsize=256)
def _type_adapter(output_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(output_type)


def parse_output(output_type: Any, text: str) -> Any:
    """Validate the model's final text as `output_type`, tolerating a ```json fence.

    Raises pydantic's `ValidationError` (a `ValueError`) when the text is not valid JSON
    for the type; the loop turns that into `PromptEvaluationError(phase="response")`.
    """
    fenced = _JSON_FENCE.match(text)
    payload = fenced.group(1) if fenced else text
    return _type_adapter(output_type).validate_json(payload)


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
        adapter = _type_adapter(output_type)
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
