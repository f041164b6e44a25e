"""The sync entry points' runtime (`wink.core.foundation.runtime`): one event loop per
process (the portal) for every sync call, sync tools always on worker threads, clean
interrupts, exits and forks; through real adapters and SDKs where it matters.
The client pool and the runner have test_clients.py and test_runner.py; Redis has
tests/core/throttling/test_redis_limiter.py."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import sqlite3
import threading
import traceback
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import make_adapter
from tests.helpers.prompts import HELLO, make_prompt
from wink import (
    ConfigurationError,
    Deadline,
    DeadlineExceededError,
    MarkdownSection,
    Prompt,
    Session,
    TextDelta,
    ThrottleError,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.core.foundation.runtime import portal, run_in_thread
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter, final


@dataclass(frozen=True)
class Fan:
    count: int


def prompt_with(*tools: Tool[Any, Any]) -> Prompt[Any]:
    return Prompt(
        name="p",
        sections=[MarkdownSection(key="t", title="T", template="Go.", tools=list(tools))],
    )


# --- one loop for every sync call


def test_every_sync_call_runs_on_the_one_portal_loop_on_a_thread_of_its_own() -> None:
    seen: list[tuple[asyncio.AbstractEventLoop, str]] = []

    async def probe() -> None:
        seen.append((asyncio.get_running_loop(), threading.current_thread().name))

    portal().call(probe())
    thread = threading.Thread(target=portal().call, args=(probe(),))
    thread.start()
    thread.join()
    (first, name), (second, _) = seen
    assert first is second
    assert name == "wink-loop"
    assert first.is_running()  # it lives on between calls


def test_sub_evaluations_gathered_in_a_tool_run_concurrently_under_evaluate(
    ok_emulator: ProviderEmulator,
) -> None:
    """An async tool that gathers evaluations runs on the portal, and so do they: they
    overlap, on the same client as the outer evaluation."""
    adapter = make_adapter("openai", ok_emulator)
    clients: list[object] = []

    async def fan_out(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        async def one() -> str | None:
            response = await adapter.evaluate_async(HELLO, session=Session())
            clients.append(adapter._clients.held(sync=False))
            return response.text

        answers = await asyncio.gather(*(one() for _ in range(params.count)))
        return ToolResult.ok(",".join(a or "" for a in answers))

    ok_emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("fan_out", {"count": 4})),
            *[Turn.text("sub")] * 4,
            Turn.text("done"),
        ]
    )
    tool = Tool(name="fan_out", description="Fan out", handler=fan_out)
    assert adapter.evaluate(prompt_with(tool), session=Session()).text == "done"
    assert len({id(client) for client in clients}) == 1
    assert clients[0] is adapter._clients.held(sync=True)
    assert adapter._clients.open_clients == 1
    adapter.close()
    assert adapter._clients.open_clients == 0


def test_a_sync_call_from_an_async_tool_of_a_sync_evaluation_is_refused_not_deadlocked(
    ok_emulator: ProviderEmulator,
) -> None:
    adapter = make_adapter("openai", ok_emulator)

    async def nested(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        return ToolResult.ok(adapter.evaluate(HELLO, session=Session()).text or "")

    ok_emulator.set_script([Turn.tool_calls(EmulatedToolCall("nested", {"count": 1}))])
    tool = Tool(name="nested", description="Nested", handler=nested)
    response = adapter.evaluate(prompt_with(tool), session=Session())
    (invoked,) = response.tool_invocations
    assert isinstance(invoked.error, ConfigurationError)
    assert "await its async form there" in str(invoked.error)
    adapter.close()


# --- nothing left open


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_thread_per_call_leaves_no_loop_or_socket_behind(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    adapter.evaluate(HELLO, session=Session())  # warm: the portal's client and its pool
    gc.collect()
    before = _open_fds()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        for _ in range(40):
            thread = threading.Thread(target=lambda: adapter.evaluate(HELLO, session=Session()))
            thread.start()
            thread.join()
        gc.collect()
    assert _open_fds() <= before + 2
    adapter.close()


def test_twenty_sync_evaluations_share_one_http_connection(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("anthropic", ok_emulator)
    open_after: set[int] = set()
    for _ in range(20):
        adapter.evaluate(HELLO, session=Session())
        open_after.add(ok_emulator.open_connections)
    assert open_after == {1}  # one pool, its one keep-alive connection reused
    adapter.close()
    assert wait_for(lambda: ok_emulator.open_connections == 0)


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


# --- clean tracebacks, the deadline


def test_a_sync_failure_has_a_clean_traceback(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    ok_emulator.inject(Fault.rate_limit(retry_after=0.01))
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(HELLO, session=Session())
    text = "".join(traceback.format_exception(info.value))
    assert "no running event loop" not in text
    assert "During handling of the above exception" not in text
    adapter.close()


def test_a_deadline_cuts_a_sync_call_and_the_portal_serves_the_next(
    ok_emulator: ProviderEmulator,
) -> None:
    adapter = make_adapter("anthropic", ok_emulator)
    ok_emulator.inject(Fault.latency(5.0))
    with pytest.raises(DeadlineExceededError):
        adapter.evaluate(HELLO, session=Session(), deadline=Deadline.after(0.2))
    assert adapter.evaluate(HELLO, session=Session()).text == "ok"
    adapter.close()


# --- evaluate() inside a running loop (Jupyter, an async web handler)


def test_evaluate_works_inside_a_running_loop() -> None:
    async def main() -> str | None:
        adapter = ScriptedAdapter([final("from inside a loop")])
        return adapter.evaluate(make_prompt(), session=Session()).text

    assert asyncio.run(main()) == "from inside a loop"


# --- wink's worker threads


def test_run_in_thread_runs_on_a_wink_worker_with_the_callers_context() -> None:
    where: ContextVar[str] = ContextVar("where", default="unset")

    async def main() -> tuple[str, str]:
        where.set("the caller")
        return await run_in_thread(lambda: (threading.current_thread().name, where.get()))

    name, seen = asyncio.run(main())
    assert name.startswith("wink-worker")
    assert seen == "the caller"


def test_run_in_thread_raises_the_calls_exception_where_it_is_awaited() -> None:
    """An exception reaches the awaiting task as itself; a `StopIteration`, which an
    asyncio future refuses (the await would hang), as a `RuntimeError`."""

    def refuse() -> None:
        raise LookupError("no such key")

    async def main() -> tuple[BaseException, BaseException]:
        with pytest.raises(LookupError) as refused:
            await run_in_thread(refuse)
        with pytest.raises(RuntimeError, match="StopIteration") as stopped:
            await asyncio.wait_for(run_in_thread(next, iter(())), timeout=5)
        return refused.value, stopped.value

    refused, stopped = asyncio.run(main())
    assert str(refused) == "no such key"
    assert "StopIteration" in str(stopped)


def test_a_sync_call_carries_the_callers_context() -> None:
    where: ContextVar[str] = ContextVar("where", default="unset")

    async def read() -> str:
        return where.get()

    where.set("the caller")
    assert portal().call(read()) == "the caller"


def test_a_sync_call_returns_while_a_thread_nobody_waits_for_runs_on() -> None:
    """A sync tool that outlived the deadline finishes in the background; `evaluate()`
    returns at the deadline, not when the tool is done."""
    release, finished = threading.Event(), threading.Event()

    def blocked() -> None:
        release.wait(10)
        finished.set()

    async def give_up_early() -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.05):
                await run_in_thread(blocked)

    portal().call(give_up_early())
    assert not finished.is_set()
    release.set()
    assert finished.wait(5)


# --- where a sync tool runs: one place, whatever the call's shape


def test_a_sync_tool_with_a_thread_bound_resource_behaves_the_same_on_every_path(
    ok_emulator: ProviderEmulator,
) -> None:
    """One call or two in a round, a deadline or none, sync or async: a sync tool runs
    on a wink worker thread, never the caller's, never with a loop running there. So a
    `sqlite3` connection made on the caller's thread fails the same way every time, and
    one the tool makes for itself works every time."""
    callers = sqlite3.connect(":memory:")
    caller = threading.get_ident()
    seen: list[tuple[str, bool, bool]] = []

    def lookup(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop_here = False
        else:
            loop_here = True
        seen.append((threading.current_thread().name, threading.get_ident() == caller, loop_here))
        own = sqlite3.connect(":memory:")  # made and used on this thread: fine
        own.execute("select 1").fetchone()
        own.close()
        callers.execute("select 1").fetchone()  # made on the caller's thread: refused
        return ToolResult.ok("found")

    tool = Tool(name="lookup", description="Look up", handler=lookup)
    one = Turn.tool_calls(EmulatedToolCall("lookup", {"count": 1}))
    two = Turn.tool_calls(
        EmulatedToolCall("lookup", {"count": 1}), EmulatedToolCall("lookup", {"count": 2})
    )
    ok_emulator.set_script(ok_emulator_script(one, two))
    adapter = make_adapter("openai", ok_emulator)
    runs: list[Callable[[], Any]] = [
        lambda: adapter.evaluate(prompt_with(tool), session=Session()),
        lambda: adapter.evaluate(prompt_with(tool), session=Session()),
        lambda: adapter.evaluate(prompt_with(tool), session=Session(), deadline=Deadline.after(30)),
        lambda: asyncio.run(adapter.evaluate_async(prompt_with(tool), session=Session())),
    ]
    outcomes: list[tuple[bool, str | None]] = []
    for run in runs:
        response = run()
        for invoked in response.tool_invocations:
            outcomes.append((invoked.result.success, type(invoked.error).__name__))
    assert len(outcomes) == 5  # one call, two calls, a deadline, evaluate_async
    assert set(outcomes) == {(False, "ProgrammingError")}
    assert len(seen) == 5
    assert all(name.startswith("wink-worker") for name, _, _ in seen)
    assert not any(on_caller for _, on_caller, _ in seen)
    assert not any(loop_here for _, _, loop_here in seen)
    adapter.close()
    callers.close()


def ok_emulator_script(one: Turn, two: Turn) -> list[Turn]:
    """One call, two calls, one call under a deadline, one call under evaluate_async."""
    return [one, Turn.text("a"), two, Turn.text("b"), one, Turn.text("c"), one, Turn.text("d")]


# --- a dropped sync stream


def test_a_sync_stream_dropped_inside_a_running_loop_leaves_no_warning_and_closes(
    emulator: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    emulator.set_streaming(chunk_size=3, chunk_delay=0.05)
    emulator.enqueue(Turn.text("a long answer, streamed slowly, " * 8))
    adapter = make_adapter("anthropic", emulator)
    unraisable: list[Any] = []

    held = [adapter.stream(make_prompt(), session=Session())]
    for event in held[0]:  # started outside any loop
        if isinstance(event, TextDelta):
            break

    async def notebook_cell() -> None:
        held.clear()  # dropped unfinished while this loop runs, in this thread
        gc.collect()

    previous = __import__("sys").unraisablehook
    __import__("sys").unraisablehook = unraisable.append
    try:
        with caplog.at_level(logging.ERROR), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(notebook_cell())
            gc.collect()
    finally:
        __import__("sys").unraisablehook = previous
    assert unraisable == []
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert "Task was destroyed" not in caplog.text
    assert "ValueError" not in caplog.text
    assert wait_for(lambda: emulator.open_connections == 0)  # closed by the finalizer
    adapter.close()


# --- fork


def _evaluate_in_child(base_url: str, answers: Any) -> None:
    from wink import create_adapter

    adapter = create_adapter("openai:gpt-4.1", base_url=base_url, api_key="k")
    answers.put(adapter.evaluate(HELLO, session=Session()).text)
    adapter.close()


def test_a_forked_child_gets_a_portal_of_its_own(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    assert adapter.evaluate(HELLO, session=Session()).text == "ok"  # the parent's portal runs
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        child = context.Process(
            target=_evaluate_in_child, args=(ok_emulator.base_url("openai"), answers)
        )
        child.start()
    child.join(30)
    assert child.exitcode == 0
    assert answers.get(timeout=5) == "ok"
    assert adapter.evaluate(HELLO, session=Session()).text == "ok"  # the parent's still runs
    adapter.close()


def test_a_finalizer_that_spawns_while_the_portal_starts_a_call_does_not_deadlock() -> None:
    """The garbage collector may run a dropped client's finalizer (`spawn`) on a thread
    that is inside `start`, holding the portal's lock: it must not wait for itself."""
    current = portal()
    closed = threading.Event()

    async def close() -> None:
        closed.set()

    def start_with_a_finalizer_inside() -> None:
        with current._lock:  # what `start` holds when the collector runs a finalizer
            current.spawn(close())

    worker = threading.Thread(target=start_with_a_finalizer_inside, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "spawn waited for a lock its own thread holds"
    assert closed.wait(timeout=10)
