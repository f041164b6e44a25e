"""The executor: every tool failure becomes a ToolResult; only infrastructure raises."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wink import (
    DeadlineExceededError,
    PromptEvaluationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    ToolValidationError,
)
from wink.core.executor import ToolExecutor, render_tool_result
from wink.core.limits import Deadline
from wink.core.messages import ToolCall
from wink.core.resources import ResourceRegistry


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class AddParams:
    a: int
    b: int


@dataclass(frozen=True)
class Sum:
    value: int


def add(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    context.session.dispatch(Note(f"add {params.a} {params.b}"))
    return ToolResult.ok(Sum(params.a + params.b), message="sum")


def refuse(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    context.session.dispatch(Note("refuse ran"))
    return ToolResult.error("negative numbers are not allowed", code="invalid_input")


def explode(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    context.session.dispatch(Note("explode ran"))
    raise KeyError("missing")


async def slow_add(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    await asyncio.sleep(0.01)
    context.session.dispatch(Note("slow"))
    return ToolResult.ok(Sum(params.a + params.b))


def wrong_type(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    return "not a result"  # type: ignore[return-value]


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(name="add", description="Add two ints", handler=add),
        Tool(name="refuse", description="Always refuses", handler=refuse),
        Tool(name="explode", description="Always raises", handler=explode),
        Tool(name="slow_add", description="Add, slowly", handler=slow_add),
        Tool(name="wrong_type", description="Returns a non-result", handler=wrong_type),
        Tool(name="strict", description="Raises, not graceful", handler=explode, graceful=False),
    )
}


def make_executor(session: Session, **options: Any) -> ToolExecutor:
    scope = ResourceRegistry.of({}).open_scope()
    return ToolExecutor(
        TOOLS, session=session, resources=scope, prompt_name="p", adapter="test", **options
    )


def run(session: Session, *calls: ToolCall, **options: Any) -> list[Any]:
    return asyncio.run(make_executor(session, **options).execute(list(calls)))


def test_success_returns_value_and_records_event() -> None:
    session = Session()
    [execution] = run(session, ToolCall("1", "add", '{"a": 2, "b": 3}'))
    assert execution.result == ToolResult.ok(Sum(5), message="sum")
    assert execution.params == AddParams(2, 3)
    assert render_tool_result(execution.result) == 'sum\n{"value": 5}'
    [event] = session[ToolInvoked]
    assert (event.name, event.call_id, event.adapter, event.error) == ("add", "1", "test", None)
    assert session[Note] == (Note("add 2 3"),)


def test_unknown_tool() -> None:
    session = Session()
    [execution] = run(session, ToolCall("1", "nope", {}))
    assert not execution.result.success
    assert execution.result.value is None
    assert execution.result.message.startswith("Unknown tool 'nope'. Available tools: add,")
    assert execution.result.code == "not_found"
    assert session[ToolInvoked][0].result == execution.result


def test_arguments_that_are_not_json() -> None:
    [execution] = run(Session(), ToolCall("1", "add", '{"a": 1,'))
    assert "not valid JSON" in execution.result.message
    assert isinstance(execution.error, ToolValidationError)
    assert isinstance(execution.error.__cause__, json.JSONDecodeError)
    assert execution.params == '{"a": 1,'


def test_arguments_that_are_not_an_object() -> None:
    [execution] = run(Session(), ToolCall("1", "add", "[1, 2]"))
    assert "must be a JSON object, got list" in execution.result.message


def test_validation_failure_names_the_field() -> None:
    [execution] = run(Session(), ToolCall("1", "add", {"a": "x"}))
    message = execution.result.message
    assert message.startswith("Invalid arguments for 'add': ")
    assert "a: Input should be a valid integer" in message
    assert "b: Field required" in message
    assert execution.result.code == "invalid_input"


def test_handler_error_result_rolls_back_its_changes() -> None:
    session = Session()
    [execution] = run(session, ToolCall("1", "refuse", {"a": 1, "b": 2}))
    assert execution.result.message == "negative numbers are not allowed"
    assert session[Note] == ()
    assert len(session[ToolInvoked]) == 1


def test_handler_exception_becomes_failure_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    session = Session()
    with caplog.at_level(logging.INFO, logger="wink.tools"):
        [execution] = run(session, ToolCall("c9", "explode", {"a": 1, "b": 2}))
    assert execution.result.message == "KeyError: 'missing'"
    assert isinstance(execution.error, KeyError)
    assert session[ToolInvoked][0].error is execution.error
    assert session[Note] == ()
    record = next(r for r in caplog.records if "explode" in r.getMessage())
    assert "c9" in record.getMessage()
    assert record.exc_info is not None


def test_non_result_return_is_a_failure() -> None:
    [execution] = run(Session(), ToolCall("1", "wrong_type", {"a": 1, "b": 2}))
    assert "returned str, not a ToolResult" in execution.result.message


def test_graceful_false_aborts_with_cause() -> None:
    session = Session()
    with pytest.raises(PromptEvaluationError) as info:
        run(session, ToolCall("1", "strict", {"a": 1, "b": 2}))
    assert info.value.phase == "tool"
    assert isinstance(info.value.__cause__, KeyError)
    assert session[Note] == ()


def test_evaluation_wide_graceful_false_is_inherited() -> None:
    with pytest.raises(PromptEvaluationError):
        run(Session(), ToolCall("1", "explode", {"a": 1, "b": 2}), graceful_default=False)


def test_parallel_calls_keep_order_and_isolate_rollback() -> None:
    session = Session()
    calls = [
        ToolCall("1", "slow_add", {"a": 1, "b": 1}),
        ToolCall("2", "explode", {"a": 1, "b": 1}),
        ToolCall("3", "add", {"a": 2, "b": 2}),
        ToolCall("4", "refuse", {"a": 0, "b": 0}),
    ]
    executions = run(session, *calls)
    assert [e.call.id for e in executions] == ["1", "2", "3", "4"]
    assert [e.result.success for e in executions] == [True, False, True, False]
    assert sorted(n.text for n in session[Note]) == ["add 2 2", "slow"]
    assert [e.call_id for e in session[ToolInvoked]] == ["1", "2", "3", "4"]


def test_expired_deadline_raises() -> None:
    with pytest.raises(DeadlineExceededError):
        run(Session(), ToolCall("1", "add", {"a": 1, "b": 2}), deadline=Deadline(at=-1))


def test_async_tool_cut_at_the_deadline() -> None:
    async def sleepy(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
        await asyncio.sleep(5)
        return ToolResult.ok(Sum(0))

    tool = Tool(name="sleepy", description="sleeps", handler=sleepy)
    executor = ToolExecutor(
        {"sleepy": tool},
        session=Session(),
        resources=ResourceRegistry.of({}).open_scope(),
        prompt_name="p",
        deadline=Deadline(at=0.05),
    )
    with pytest.raises(DeadlineExceededError):
        asyncio.run(executor.execute([ToolCall("1", "sleepy", {"a": 1, "b": 1})]))


def test_excluded_value_is_not_rendered() -> None:
    result = ToolResult.ok(Sum(1), message="done", exclude_value_from_context=True)
    assert render_tool_result(result) == "done"


# --- properties

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.one_of(
    st.text(max_size=30),
    json_values.map(json.dumps),
    st.dictionaries(st.sampled_from(["a", "b", "c"]), json_values, max_size=3),
)
calls_strategy = st.lists(
    st.builds(
        ToolCall,
        id=st.text(min_size=1, max_size=5),
        name=st.sampled_from([*TOOLS.keys() - {"strict"}, "missing", ""]),
        arguments=arguments,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=calls_strategy)
def test_no_input_makes_the_executor_raise(calls: list[ToolCall]) -> None:
    session = Session()
    executions = run(session, *calls)
    assert len(executions) == len(calls)
    for execution in executions:
        assert isinstance(execution.result, ToolResult)
        assert execution.result.success == (execution.result.value is not None)
    assert len(session[ToolInvoked]) == len(calls)


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(["refuse", "explode", "wrong_type", "missing", "add"]),
    args=arguments,
    prior=st.lists(st.text(max_size=5), max_size=3),
)
def test_a_failed_tool_leaves_the_session_as_its_snapshot(
    name: str, args: Any, prior: list[str]
) -> None:
    session = Session()
    for text in prior:
        session.dispatch(Note(text))
    before = session.snapshot()
    [execution] = run(session, ToolCall("1", name, args))
    if not execution.result.success:
        assert session[Note] == before.slices.get(Note, ())
        assert session.events[:-1] == tuple(Note(t) for t in prior)
