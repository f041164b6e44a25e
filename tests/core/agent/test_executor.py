"""The executor: every tool failure becomes a ToolResult; only infrastructure raises."""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import enum
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import BaseModel

from wink import (
    DeadlineExceededError,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    ToolValidationError,
)
from wink.core.agent.executor import ToolExecutor, render_tool_result, wire_safe_call
from wink.core.foundation.limits import Deadline
from wink.core.foundation.messages import ToolCall
from wink.core.prompting.resources import ResourceRegistry
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


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
        run(Session(), ToolCall("1", "add", {"a": 1, "b": 2}), deadline=Deadline(0))


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


# --- who hears about a failure: the developer (WARNING) or only the model (INFO)


def returns_dict(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    return {"value": 1}  # type: ignore[return-value]


def returns_none(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    return None  # type: ignore[return-value]


def wrong_tool(handler: Any) -> Tool[Any, Any]:
    return Tool(name="buggy", description="A buggy tool", handler=handler)


def run_one(tool: Tool[Any, Any], arguments: Any, session: Session | None = None) -> Any:
    executor = ToolExecutor(
        {tool.name: tool},
        session=session or Session(),
        resources=ResourceRegistry.of({}).open_scope(),
        prompt_name="p",
    )
    [execution] = asyncio.run(executor.execute([ToolCall("c7", tool.name, arguments)]))
    return execution


def tool_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "wink.tools"]


def test_a_raising_handler_is_a_warning_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="wink.tools"):
        execution = run_one(wrong_tool(explode), {"a": 1, "b": 2})
    assert execution.result.message == "KeyError: 'missing'"
    [record] = tool_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert record.exc_info[1] is execution.error
    message = record.getMessage()
    assert "'buggy'" in message
    assert "prompt='p'" in message
    assert "call_id='c7'" in message
    assert "test_executor.explode" in message  # which function to fix


@pytest.mark.parametrize(
    ("handler", "kind"), [(returns_dict, "dict"), (wrong_type, "str"), (returns_none, "NoneType")]
)
def test_a_wrong_return_type_is_a_warning(
    handler: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="wink.tools"):
        execution = run_one(wrong_tool(handler), {"a": 1, "b": 2})
    assert execution.result.message == f"tool 'buggy' returned {kind}, not a ToolResult"
    assert execution.result.code == "internal_error"
    [record] = tool_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], TypeError)
    assert "call_id='c7'" in record.getMessage()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("refuse", {"a": 1, "b": 2}),  # ToolResult.error on purpose: an operational outcome
        ("missing", {}),  # the model named a tool that does not exist
        ("add", {"a": "x"}),  # the model sent arguments that do not validate
        ("add", '{"a": 1,'),  # ... or that are not JSON
    ],
)
def test_operational_failures_and_model_mistakes_stay_at_info(
    name: str, arguments: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="wink.tools"):
        [execution] = run(Session(), ToolCall("c1", name, arguments))
    assert not execution.result.success
    [record] = tool_records(caplog)
    assert record.levelno == logging.INFO
    assert record.exc_info is None
    assert "call_id='c1'" in record.getMessage()


# --- values that cannot be sent to the model


@dataclass(frozen=True)
class Holder:
    label: str


def returning(value: object) -> Tool[Any, Any]:
    def give(params: AddParams, *, context: ToolContext) -> ToolResult[Any]:
        context.session.dispatch(Note("gave"))
        return ToolResult.ok(value, message="here")

    return Tool(name="give", description="Returns a fixed value", handler=give)


@pytest.mark.parametrize(
    "make", [object, lambda: {object(), object()}, socket.socket], ids=["object", "set", "socket"]
)
def test_an_unsendable_value_is_a_failure_the_model_can_read(
    make: Callable[[], object], caplog: pytest.LogCaptureFixture
) -> None:
    value = make()
    session = Session()
    try:
        with caplog.at_level(logging.INFO, logger="wink.tools"):
            execution = run_one(returning(value), {"a": 1, "b": 1}, session)
    finally:
        if isinstance(value, socket.socket):
            value.close()
    message = execution.result.message
    assert not execution.result.success
    assert execution.result.code == "internal_error"
    assert message.startswith(
        "tool 'give' returned a value that cannot be sent to the model: "
        f"{type(value).__name__} is not JSON-serialisable ("
    )
    assert "at 0x" not in message
    assert execution.to_message().content == message
    assert not execution.to_message().success
    assert session[Note] == ()  # a failed call's session changes are rolled back
    [record] = tool_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None


class Color(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        (Sum(3), '{"value": 3}'),
        (Point(x=1), '{"x": 1}'),
        ({"a": [1, 2.5, None, True]}, '{"a": [1, 2.5, null, true]}'),
        ((1, "b"), '[1, "b"]'),
        ({3}, "[3]"),
        ("plain", '"plain"'),
        (7, "7"),
        (dt.date(2024, 5, 1), '"2024-05-01"'),
        (dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC), '"2024-05-01T12:00:00Z"'),
        (decimal.Decimal("1.10"), '"1.10"'),
        (uuid.UUID(int=1), '"00000000-0000-0000-0000-000000000001"'),
        (Color.RED, '"red"'),
        ("caf\u00e9 \U0001f600", '"caf\u00e9 \U0001f600"'),
    ],
)
def test_serialisable_values_reach_the_model_as_json(value: object, rendered: str) -> None:
    execution = run_one(returning(value), {"a": 1, "b": 1})
    assert execution.result.success
    assert execution.result.value == value
    assert execution.to_message().content == f"here\n{rendered}"


def test_lone_surrogates_in_a_result_become_replacement_characters() -> None:
    message = render_tool_result(ToolResult.ok({"t": "a\ud83db"}, message="m\udc00"))
    assert message == 'm\ufffd\n{"t": "a\ufffdb"}'
    message.encode("utf-8")  # what an SDK does with it; a lone surrogate would raise
    assert render_tool_result(ToolResult.error("bad \ud800")) == "bad \ufffd"


# --- arguments strict JSON cannot carry: refused before the tool runs


@dataclass(frozen=True)
class EchoParams:
    text: str = ""
    number: float = 0.0


def echo_tool(ran: list[EchoParams]) -> Tool[Any, Any]:
    def echo(params: EchoParams, *, context: ToolContext) -> ToolResult[str]:
        ran.append(params)
        return ToolResult.ok(params.text)

    return Tool(name="echo", description="Echoes", handler=echo)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"number": Infinity}', "Infinity is not a JSON number"),
        ('{"number": -Infinity}', "-Infinity is not a JSON number"),
        ('{"number": NaN}', "NaN is not a JSON number"),
        ('{"number": 1e400}', "number: Infinity is not a JSON number"),
        ({"number": float("inf")}, "number: Infinity is not a JSON number"),
        ({"number": float("nan")}, "number: NaN is not a JSON number"),
        ('{"text": "\\ud83d"}', "text: a lone UTF-16 surrogate, which is not valid"),
        ('{"text": "a\ud83db"}', "text: a lone UTF-16 surrogate, which is not valid"),
        ({"text": "\udc00"}, "text: a lone UTF-16 surrogate, which is not valid"),
        ({"text": ["ok", {"deep": "\ud800"}]}, "text[1].deep: a lone UTF-16 surrogate"),
        ({"te\ud800xt": "ok"}, "arguments: a key with a lone UTF-16 surrogate"),
    ],
)
def test_arguments_that_cannot_be_echoed_are_refused_before_the_tool_runs(
    arguments: Any, problem: str
) -> None:
    ran: list[EchoParams] = []
    execution = run_one(echo_tool(ran), arguments)
    assert ran == []
    assert not execution.result.success
    assert execution.result.code == "invalid_input"
    assert isinstance(execution.error, ToolValidationError)
    assert problem in execution.result.message
    assert execution.result.message.startswith("Arguments for 'echo' ")
    execution.to_message().content.encode("utf-8")  # the refusal itself can be sent


def test_python_json_extensions_are_refused_even_though_json_loads_reads_them() -> None:
    assert json.loads('{"x": Infinity}') == {"x": float("inf")}
    execution = run_one(echo_tool([]), '{"x": Infinity}')
    assert execution.result.message == (
        "Arguments for 'echo' are not strict JSON: Infinity is not a JSON number. "
        "Send finite numbers (or null)."
    )


def test_valid_unicode_arguments_still_run() -> None:
    ran: list[EchoParams] = []
    execution = run_one(echo_tool(ran), '{"text": "\\ud83d\\ude00 caf\\u00e9", "number": 1e300}')
    assert execution.result.value == "\U0001f600 caf\u00e9"
    assert ran == [EchoParams("\U0001f600 caf\u00e9", 1e300)]


# --- wire_safe_call: what the loop echoes back to the provider


def strictly_encodable(arguments: str | Any) -> bytes:
    """What an SDK does with the echoed arguments: strict JSON, then UTF-8."""
    return json.dumps(arguments, allow_nan=False, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize(
    "arguments",
    [
        '{"text": "caf\u00e9 \\ud83d\\ude00", "number": 1.5}',
        {"text": "\U0001f600", "items": [1, None, {"k": -2.5}]},
        '{"a": 1,',  # broken JSON is the executor's business; it can still be sent as text
        '{"x": Infinity}',  # not strict JSON either, but a string without surrogates
        "",
    ],
)
def test_sendable_calls_come_back_unchanged(arguments: Any) -> None:
    call = ToolCall("1", "echo", arguments, provider_data={"sig": "s"})
    assert wire_safe_call(call) is call


@pytest.mark.parametrize(
    ("arguments", "safe"),
    [
        ({"n": float("inf"), "m": [float("-inf"), float("nan")]}, {"n": None, "m": [None, None]}),
        ({"t": "a\ud83db", "k\udc00": ("\ud800", 1)}, {"t": "a\ufffdb", "k\ufffd": ["\ufffd", 1]}),
        ('{"t": "\\ud83d", "n": 1e400}', '{"t": "\ufffd", "n": null}'),
        ('{"t": "a\ud83db",', '{"t": "a\ufffdb",'),  # not JSON: kept as text, scrubbed
        ('{"x": NaN, "t": "\ud83d"}', '{"x": NaN, "t": "\ufffd"}'),
    ],
)
def test_unsendable_arguments_are_made_sendable(arguments: Any, safe: Any) -> None:
    call = ToolCall("1", "echo", arguments, provider_data={"sig": "s"})
    echoed = wire_safe_call(call)
    assert echoed.arguments == safe
    assert (echoed.id, echoed.name, echoed.provider_data) == ("1", "echo", {"sig": "s"})
    strictly_encodable(echoed.arguments)
    assert wire_safe_call(echoed) is echoed
    assert call.arguments is arguments  # the original is left alone


wire_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6)
wire_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | wire_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(wire_text, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    arguments=st.one_of(
        wire_text, wire_values.map(json.dumps), st.dictionaries(wire_text, wire_values, max_size=3)
    )
)
def test_every_echoed_call_can_be_encoded(arguments: Any) -> None:
    echoed = wire_safe_call(ToolCall("1", "t", arguments))
    strictly_encodable(echoed.arguments)
    assert wire_safe_call(echoed) is echoed


# --- sync handlers run in worker threads, never on the event loop


def barrier_tool(barrier: threading.Barrier, spans: list[tuple[float, float]]) -> Tool[Any, Any]:
    def wait_for_all(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
        started = time.monotonic()
        barrier.wait()  # passes only once every party is inside a handler at the same time
        spans.append((started, time.monotonic()))
        return ToolResult.ok(Sum(params.a))

    return Tool(name="wait_for_all", description="Waits for the others", handler=wait_for_all)


def test_single_sync_calls_of_concurrent_executors_overlap() -> None:
    parties = 5
    spans: list[tuple[float, float]] = []
    tool = barrier_tool(threading.Barrier(parties, timeout=10), spans)

    async def main() -> list[list[Any]]:
        executors = [
            ToolExecutor(
                {tool.name: tool},
                session=Session(),
                resources=ResourceRegistry.of({}).open_scope(),
                prompt_name=f"p{index}",
            )
            for index in range(parties)
        ]
        return await asyncio.gather(
            *(
                executor.execute([ToolCall(str(index), tool.name, {"a": index, "b": 0})])
                for index, executor in enumerate(executors)
            )
        )

    results = asyncio.run(main())
    assert [execution.result.value for [execution] in results] == [Sum(i) for i in range(parties)]
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all overlapped


def test_concurrent_evaluations_do_not_wait_for_each_others_sync_tools() -> None:
    parties = 10
    spans: list[tuple[float, float]] = []
    tool = barrier_tool(threading.Barrier(parties, timeout=10), spans)
    prompt = Prompt(
        name="wait",
        sections=[MarkdownSection(key="t", title="T", template="Wait.", tools=[tool])],
    )

    async def main() -> list[Any]:
        adapters = [
            ScriptedAdapter([tool_turn(call(tool.name, {"a": i, "b": 0})), final(f"done {i}")])
            for i in range(parties)
        ]
        return await asyncio.gather(
            *(adapter.evaluate_async(prompt, session=Session()) for adapter in adapters)
        )

    responses = asyncio.run(main())
    assert [response.text for response in responses] == [f"done {i}" for i in range(parties)]
    assert len(spans) == parties
    assert max(start for start, _ in spans) < min(end for _, end in spans)


request_id: ContextVar[str] = ContextVar("request_id", default="unset")


def test_a_sync_handler_runs_in_a_worker_thread_with_the_callers_context() -> None:
    seen: list[tuple[int, str]] = []

    def where(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
        seen.append((threading.get_ident(), request_id.get()))
        return ToolResult.ok(Sum(0))

    async def main() -> int:
        request_id.set("r-42")
        executor = ToolExecutor(
            {"where": Tool(name="where", description="Reports its thread", handler=where)},
            session=Session(),
            resources=ResourceRegistry.of({}).open_scope(),
            prompt_name="p",
        )
        await executor.execute([ToolCall("1", "where", {"a": 0, "b": 0})])
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    [(tool_thread, value)] = seen
    assert tool_thread != loop_thread
    assert value == "r-42"


def test_a_sync_tool_blocking_past_the_deadline_ends_the_run_at_the_deadline() -> None:
    release, finished = threading.Event(), threading.Event()

    def stuck(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
        context.session.dispatch(Note("stuck started"))
        release.wait(timeout=30)
        finished.set()
        return ToolResult.ok(Sum(0))

    session = Session()
    executor = ToolExecutor(
        {"stuck": Tool(name="stuck", description="Blocks", handler=stuck)},
        session=session,
        resources=ResourceRegistry.of({}).open_scope(),
        prompt_name="p",
        deadline=Deadline(at=0.5),  # time for the tool to start; it then blocks until released
    )

    async def main() -> bool:
        try:
            with pytest.raises(DeadlineExceededError, match="while a tool was running"):
                await executor.execute([ToolCall("1", "stuck", {"a": 0, "b": 0})])
            return finished.is_set()
        finally:
            release.set()  # let the abandoned thread end before the loop's executor shuts

    assert asyncio.run(main()) is False  # raised while the tool was still blocked
    assert finished.wait(timeout=10)  # the thread was not killed: it finishes in the background
    assert session[ToolInvoked] == ()
