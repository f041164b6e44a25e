"""Tool sources: tools that live outside this process (an MCP server), offered beside a
section's own.

The prompting layer owns the protocol (`ToolSource`) and never imports what implements
it: `wink.mcp`'s servers do, at the face of the package. A section lists its sources
(`MarkdownSection(mcp_servers=[...])`); rendering collects those of the sections shown;
the loop asks each for its tools once per evaluation (`offered_tools`), which is when a
server that was never started is connected and one that died is restarted.

A source's tools are `SourceTool`s: a `Tool` whose parameters are the JSON schema the
source gave (its `$ref`s written out, so every provider's schema rules take it), whose
params are the model's arguments as a dict, and whose handler asks the source. The
source turns every failure of the call into a failed `ToolResult`; it never raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from ..foundation.errors import ConfigurationError, DeadlineExceededError
from ..foundation.limits import Deadline
from ..foundation.results import ToolResult
from .tools import Tool, ToolContext, inline_schema_refs, validate_tool_name

__all__ = ["SourceCall", "SourceTool", "ToolSource", "offered_tools"]

SourceCall = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult[Any]]]
"""How a `SourceTool` runs: the source's call with the model's arguments; it returns a
failed `ToolResult` for every failure (it does not raise)."""


@runtime_checkable
class ToolSource(Protocol):
    """Tools offered from outside the process: what `MarkdownSection(mcp_servers=[...])`
    takes (`wink.mcp.MCPServerStdio`, `wink.mcp.MCPServerHTTP`).

    `name` names the source in `ToolInvoked.source` and on the tool's span.
    `list_tools()` is awaited once per evaluation: it connects on first use (or after
    the source died), and raises `ToolSourceError` when it cannot. An adapter whose
    evaluations used a source calls `release()` (or `release_async()`) when it closes:
    the source then closes unless its owner opened it (`with server:`).
    """

    @property
    def name(self) -> str: ...

    async def list_tools(self) -> Sequence[Tool[Any, Any]]: ...

    def release(self) -> None: ...

    async def release_async(self) -> None: ...


@dataclass(frozen=True, eq=False, init=False)
class SourceTool(Tool[dict[str, Any], Any]):
    """A tool of a `ToolSource`: a JSON schema for its parameters, the source's call for
    a handler. `source` is the source's name; `remote_name` the tool's name there (the
    model may know it by another: a prefix, characters providers refuse)."""

    input_schema: Mapping[str, Any] = field(default_factory=dict[str, Any], kw_only=True)
    remote_name: str = field(default="", kw_only=True)
    source_name: str = field(default="", kw_only=True)

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        call: SourceCall,
        *,
        source: str,
        remote_name: str | None = None,
    ) -> None:
        validate_tool_name(name)

        async def handler(params: dict[str, Any], *, context: ToolContext) -> ToolResult[Any]:
            return await call(params, context)

        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "description", description.strip() or f"The tool {name} of {source}.")
        set_field(self, "handler", handler)
        set_field(self, "params_type", dict)
        set_field(self, "graceful", None)
        set_field(self, "result_type", Any)
        set_field(self, "is_async", True)
        set_field(self, "input_schema", dict(input_schema))
        set_field(self, "remote_name", remote_name if remote_name is not None else name)
        set_field(self, "source_name", source)

    @property
    def source(self) -> str | None:
        return self.source_name

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        """The source's schema with its references written out (Gemini takes none)."""
        return inline_schema_refs(self.input_schema)


async def offered_tools(
    tools: Sequence[Tool[Any, Any]],
    sources: Sequence[ToolSource],
    *,
    deadline: Deadline | None = None,
    prompt_name: str = "",
) -> tuple[Tool[Any, Any], ...]:
    """`tools` and the tools of every source, listed concurrently within the deadline.

    Two tools under one name are a `ConfigurationError` naming both owners: a source's
    tools are told apart by a prefix on the source (`prefix=`), or filtered.
    """
    if not sources:
        return tuple(tools)
    if deadline is not None:
        deadline.check(prompt_name=prompt_name, step="listing the tools of its MCP servers")
    listing = asyncio.gather(*(source.list_tools() for source in sources))
    if deadline is None:
        lists = await listing
    else:
        scope = asyncio.timeout(deadline.remaining())
        try:
            async with scope:
                lists = await listing
        except TimeoutError:
            if not scope.expired():
                raise
            raise DeadlineExceededError(
                "deadline passed while listing the tools of its MCP servers",
                prompt_name=prompt_name,
            ) from None
    owners: dict[str, str] = {tool.name: "this prompt's own tools" for tool in tools}
    offered = list(tools)
    for source, listed in zip(sources, lists, strict=True):
        for tool in listed:
            first = owners.get(tool.name)
            if first is not None:
                raise ConfigurationError(
                    f"two tools are named {tool.name!r}: one of {first}, one of {source!r}; "
                    "give the server a prefix= to tell them apart, or filter one out"
                )
            owners[tool.name] = repr(source)
            offered.append(tool)
    return tuple(offered)
