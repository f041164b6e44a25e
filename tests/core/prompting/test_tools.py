"""Building a Tool: the handler's signature is checked, its annotations resolved, at once.

This module has `from __future__ import annotations` on purpose: every annotation below is
a string, so tools defined inside functions must resolve their local names.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from wink import PromptValidationError, Session, Tool, ToolContext, ToolResult
from wink.core.agent.executor import ToolExecutor
from wink.core.foundation.messages import ToolCall
from wink.core.prompting.resources import ResourceRegistry


@dataclass(frozen=True)
class Query:
    text: str


def good(params: Query, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(params.text.upper())


def run_tool(tool: Tool[Any, Any], arguments: dict[str, Any]) -> ToolResult[Any]:
    executor = ToolExecutor(
        {tool.name: tool},
        session=Session(),
        resources=ResourceRegistry.of({}).open_scope(),
        prompt_name="p",
    )
    [execution] = asyncio.run(executor.execute([ToolCall("1", tool.name, arguments)]))
    return execution.result


# --- the call shape: handler(params, *, context)


def extra_required(params: Query, limit: int, *, context: ToolContext) -> ToolResult[str]:
    raise AssertionError("never called")


def extra_keyword(params: Query, *, context: ToolContext, user: str) -> ToolResult[str]:
    raise AssertionError("never called")


def no_params(*, context: ToolContext) -> ToolResult[str]:
    raise AssertionError("never called")


def no_context(params: Query) -> ToolResult[str]:
    raise AssertionError("never called")


def positional_only_context(params: Query, context: ToolContext, /) -> ToolResult[str]:
    raise AssertionError("never called")


def context_first(context: ToolContext, *, params: Query) -> ToolResult[str]:
    raise AssertionError("never called")


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (extra_required, "required parameter 'limit' would get no value"),
        (extra_keyword, "required parameter 'user' would get no value"),
        (no_params, "no positional parameter to receive the params"),
        (no_context, "does not accept 'context' as a keyword argument"),
        (positional_only_context, "does not accept 'context' as a keyword argument"),
        (context_first, "its first parameter is 'context'"),
    ],
)
def test_a_handler_that_cannot_be_called_fails_at_construction(handler: Any, problem: str) -> None:
    with pytest.raises(PromptValidationError) as info:
        Tool(name="broken", description="d", handler=handler)
    message = str(info.value)
    assert message.startswith("tool 'broken': the handler must be callable as ")
    assert "handler(params, *, context)" in message
    assert problem in message


def test_a_handler_that_is_not_callable() -> None:
    with pytest.raises(PromptValidationError, match="'broken': the handler 3 is not callable"):
        Tool(name="broken", description="d", handler=3)  # type: ignore[arg-type]


def with_defaults(
    params: Query, context: ToolContext, limit: int = 3, **extra: Any
) -> ToolResult[str]:
    return ToolResult.ok(f"{params.text}:{limit}:{context.tool_name}")


def kwargs_only(params: Query, **options: Any) -> ToolResult[str]:
    return ToolResult.ok(f"{params.text}:{sorted(options)}")


class Searcher:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def search(self, params: Query, *, context: ToolContext) -> ToolResult[str]:
        return ToolResult.ok(self.prefix + params.text)

    async def __call__(self, params: Query, *, context: ToolContext) -> ToolResult[str]:
        return ToolResult.ok(self.prefix.upper() + params.text)


def tagged(tag: str, params: Query, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(f"{tag}{params.text}")


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (good, "HI"),
        (with_defaults, "hi:3:t"),
        (kwargs_only, "hi:['context']"),
        (Searcher("s:").search, "s:hi"),
        (Searcher("s:"), "S:hi"),
        (functools.partial(tagged, "#"), "#hi"),
    ],
)
def test_handlers_callable_as_params_and_context_are_accepted(handler: Any, expected: str) -> None:
    tool = Tool(name="t", description="d", handler=handler)
    assert tool.params_type is Query
    assert run_tool(tool, {"text": "hi"}).value == expected


def test_the_params_annotation_must_be_a_dataclass() -> None:
    def handler(params: dict[str, Any], *, context: ToolContext) -> ToolResult[str]:
        raise AssertionError("never called")

    with pytest.raises(PromptValidationError, match="first parameter must be annotated with a"):
        Tool(name="t", description="d", handler=handler)


# --- annotations of tools defined inside functions


def test_a_tool_defined_inside_a_function() -> None:
    @dataclass(frozen=True)
    class Params:
        count: int

    @dataclass(frozen=True)
    class Counted:
        total: int

    def count(params: Params, *, context: ToolContext) -> ToolResult[Counted]:
        return ToolResult.ok(Counted(params.count * 2))

    tool = Tool(name="count", description="Counts", handler=count)
    assert tool.params_type is Params
    assert tool.result_type is Counted
    assert tool.parameters_schema["required"] == ["count"]
    assert run_tool(tool, {"count": 4}).value == Counted(8)


def make_count_tool(factor: int) -> Tool[Any, Any]:
    @dataclass(frozen=True)
    class Params:
        count: int

    async def count(params: Params, *, context: ToolContext) -> ToolResult[int]:
        return ToolResult.ok(params.count * factor)

    return Tool(name="count", description="Counts", handler=count)


def test_a_factory_that_builds_and_returns_a_tool() -> None:
    tool = make_count_tool(3)
    assert tool.params_type.__name__ == "Params"
    assert tool.params_type.__qualname__ == "make_count_tool.<locals>.Params"
    assert tool.result_type is int
    assert run_tool(tool, {"count": 2}).value == 6


def make_handler() -> tuple[Any, type[Any]]:
    """A handler whose local names are out of reach of a later `Tool(...)`."""

    @dataclass(frozen=True)
    class Params:
        word: str

    def echo(params: Params, *, context: ToolContext) -> ToolResult[str]:
        return ToolResult.ok(params.word)

    return echo, Params


def test_an_unreachable_local_annotation_names_the_way_out() -> None:
    handler, _ = make_handler()
    with pytest.raises(PromptValidationError) as info:
        Tool(name="echo", description="d", handler=handler)
    message = str(info.value)
    assert "tool 'echo': cannot read the handler's annotation 'Params'" in message
    assert "name 'Params' is not defined" in message
    assert "pass params_type=..." in message


def test_params_type_given_explicitly() -> None:
    handler, params = make_handler()
    tool = Tool(name="echo", description="d", handler=handler, params_type=params)
    assert tool.params_type is params
    assert run_tool(tool, {"word": "hey"}).value == "hey"


def test_a_name_the_handler_closes_over_resolves() -> None:
    def make() -> Any:
        @dataclass(frozen=True)
        class Params:
            word: str

        def echo(params: Params, *, context: ToolContext) -> ToolResult[str]:
            assert isinstance(params, Params)  # the body names it: a closure cell
            return ToolResult.ok(params.word)

        return echo

    assert Tool(name="echo", description="d", handler=make()).params_type.__name__ == "Params"


def test_params_type_must_match_the_annotation() -> None:
    @dataclass(frozen=True)
    class Other:
        text: str

    with pytest.raises(PromptValidationError, match=r"params_type=Other does not match .* Query"):
        Tool(name="t", description="d", handler=good, params_type=Other)


def test_params_type_must_be_a_dataclass() -> None:
    handler, _ = make_handler()
    with pytest.raises(
        PromptValidationError, match="params_type must be a dataclass or a pydantic BaseModel, got"
    ):
        Tool(name="t", description="d", handler=handler, params_type=dict)


def test_a_local_of_the_caller_does_not_shadow_what_a_module_level_handler_names() -> None:
    Query = int  # noqa: F841  # named like the global the handler's annotation means
    tool = Tool(name="t", description="d", handler=good)
    assert tool.params_type is globals()["Query"]


def test_without_frame_access_only_globals_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Params:
        word: str

    def echo(params: Params, *, context: ToolContext) -> ToolResult[str]:
        raise AssertionError("never called")

    monkeypatch.delattr(sys, "_getframe")
    try:
        with pytest.raises(PromptValidationError, match="name 'Params' is not defined"):
            Tool(name="echo", description="d", handler=echo)
        assert Tool(name="ok", description="d", handler=good).params_type is Query
    finally:
        monkeypatch.undo()


def test_params_type_may_restate_or_narrow_the_annotation() -> None:
    @dataclass(frozen=True)
    class Narrower(Query):
        limit: int = 1

    assert Tool(name="t", description="d", handler=good, params_type=Query).params_type is Query
    assert Tool(name="t", description="d", handler=good, params_type=Narrower).params_type is (
        Narrower
    )


def test_only_the_params_and_return_annotations_are_read() -> None:
    # e.g. ToolContext imported under TYPE_CHECKING only: wink never needs that annotation
    def handler(params: Query, *, context: OnlyForTypeCheckers) -> ToolResult[str]:  # noqa: F821
        return ToolResult.ok(params.text)

    assert Tool(name="t", description="d", handler=handler).params_type is Query


def test_dataclasses_replace_builds_a_checked_copy() -> None:
    tool = Tool(name="t", description="d", handler=good)
    renamed = dataclasses.replace(tool, name="renamed")
    assert (renamed.name, renamed.params_type, renamed.result_type) == ("renamed", Query, str)
    with pytest.raises(PromptValidationError, match="does not accept 'context'"):
        dataclasses.replace(tool, handler=no_context)
