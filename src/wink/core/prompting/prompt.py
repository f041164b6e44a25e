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
(`PromptRenderError`). Sections and their checks are `sections.py`'s; reading the
structured output from the answer, `outputs.py`'s (both re-exported here, where they
were first imported from).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING, Any, Generic, cast

from typing_extensions import TypeVar

from ..foundation.builtin import BuiltinTool, builtin_tools_of, merge_builtin_tools
from ..foundation.checks import kind_of
from ..foundation.content import Attachment, CachePoint, TextPart, UserPart
from ..foundation.errors import (
    InvalidArgumentError,
    PromptRenderError,
    PromptValidationError,
    VisibilityExpansionRequired,
)
from ..foundation.messages import OutputSpec
from ..foundation.results import ToolResult
from .outputs import parse_output, parse_partial_output, type_adapter
from .resources import ResourceBinding, ResourceFactory, ResourceRegistry
from .sections import (
    MarkdownSection,
    as_type,
    check_sections,
    dotted,
    is_a,
    listed,
    template_names,
    walk,
)
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

_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_MAX_HEADING_DEPTH = 6


# --- the built-in open_sections tool


@dataclass(frozen=True)
class OpenSectionsParams:
    """Arguments of `open_sections`: dotted section paths, e.g. "guide.details"."""

    section_keys: list[str]


def _open_sections_tool(
    prompt: Prompt[Any], shown_full: frozenset[SectionPath], summarized: Sequence[SectionPath]
) -> Tool[Any, Any]:
    known = dict(walk(prompt.sections))
    listing = ", ".join(dotted(path) for path in summarized)

    def open_sections(params: OpenSectionsParams, *, context: ToolContext) -> ToolResult[None]:
        requested = [tuple(key.strip().split(".")) for key in params.section_keys]
        unknown = [repr(dotted(path)) for path in requested if path not in known]
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
            f"the model asked to open {', '.join(dotted(p) for p in overrides)}",
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
        if not is_a(self.name, str) or not _PROMPT_NAME.fullmatch(self.name):
            raise PromptValidationError(
                f"prompt name {self.name!r} must be non-empty letters, digits, '_', '.' or '-'"
            )
        object.__setattr__(
            self, "sections", listed(self.sections, "sections", "MarkdownSection", ())
        )
        check_sections(self.sections, ())
        object.__setattr__(
            self,
            "bound_params",
            listed(self.bound_params, "bound_params", "dataclass instances", ()),
        )
        if not is_a(self.resources, ResourceRegistry):
            raise PromptValidationError(
                f"resources must be a ResourceRegistry, got {kind_of(self.resources)} "
                "(bind them with prompt.bind(resources={Protocol: factory}))"
            )
        if self.instructions is not None and not is_a(self.instructions, str):
            raise PromptValidationError(
                f"instructions must be a string or None, got {kind_of(self.instructions)}"
            )
        if self.instructions is not None:
            template_names((), self.instructions, "instructions")
        self._check_tools()
        self._check_params()
        try:
            object.__setattr__(self, "builtin_tools", builtin_tools_of(self.builtin_tools))
        except InvalidArgumentError as error:
            raise PromptValidationError(str(error)) from None
        object.__setattr__(self, "output", self._output_spec())

    def _check_tools(self) -> None:
        owners: dict[str, SectionPath] = {}
        for path, section in walk(self.sections):
            for tool in section.offered_tools:
                if tool.name == OPEN_SECTIONS_TOOL:
                    raise PromptValidationError(
                        f"the tool name {OPEN_SECTIONS_TOOL!r} is reserved for wink",
                        section_path=path,
                    )
                first = owners.get(tool.name)
                if first is not None:
                    where = "twice in" if first == path else f"in both {dotted(first)} and"
                    raise PromptValidationError(
                        f"tool {tool.name!r} is offered {where} {dotted(path)}",
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
                dataclass_type=as_type(kind),
            )
        schema = inline_schema_refs(type_adapter(kind).json_schema())
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
        if not is_a(text, str):
            raise InvalidArgumentError(
                f"a prompt is a string or a wink Prompt, got {kind_of(text)}", argument="prompt"
            )
        if instructions is not None and not is_a(instructions, str):
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
        values = {path: self._values(path, section) for path, section in walk(self.sections)}
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
        found = {id(s): s for _, section in walk(self.sections) for s in section.mcp_servers}
        return tuple(found.values())

    def _instructions(self) -> str | None:
        """The instructions filled from the bound params; None when there are none."""
        if self.instructions is None:
            return None
        values: dict[str, str] = {}
        for name in template_names((), self.instructions, "instructions"):
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
            f'section_keys=["{dotted(path)}"] to read it in full._'
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
