"""The sync/async bridge (`wink.core.foundation.runtime`): a private loop per sync call,
nothing left open per thread or loop, clean tracebacks; through real adapters and SDKs
where it matters.
The client pool and the runner have test_clients.py and test_runner.py."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import traceback
import warnings
from contextvars import ContextVar
from dataclasses import dataclass

import pytest

from tests.helpers.adapters import make_adapter
from tests.helpers.prompts import HELLO, make_prompt
from wink import (
    MarkdownSection,
    Prompt,
    Session,
    ThrottleError,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.core.foundation import runtime
from wink.core.foundation.runtime import run_in_thread, run_sync
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter, final

# --- a private loop per sync call


def test_a_sync_call_runs_on_a_private_loop_handed_on_clean() -> None:
    """The loop of a finished call runs nothing and waits for the next call; calls at
    once get loops of their own; at most `_IDLE_LOOPS` wait, the rest are closed."""
    loops: list[asyncio.AbstractEventLoop] = []

    async def probe() -> None:
        loops.append(asyncio.get_running_loop())

    run_sync(probe())
    run_sync(probe())
    first, second = loops
    assert first is second  # kept for the next call
    assert not first.is_running()
    assert not first.is_closed()
    assert not asyncio.all_tasks(first)
    assert not runtime.owns_loop(first)  # nobody's between calls: no client binds to it

    held = threading.Barrier(runtime._IDLE_LOOPS + 2)

    async def hold() -> None:
        loops.append(asyncio.get_running_loop())
        await asyncio.to_thread(held.wait)

    threads = [
        threading.Thread(target=run_sync, args=(hold(),)) for _ in range(runtime._IDLE_LOOPS + 2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    at_once = loops[2:]
    assert len({id(loop) for loop in at_once}) == len(at_once)  # one loop each
    assert sum(not loop.is_closed() for loop in at_once) == runtime._IDLE_LOOPS
    runtime._close_idle_loops()  # what happens at exit
    assert all(loop.is_closed() for loop in at_once)


def test_what_a_sync_call_leaves_running_is_cancelled() -> None:
    cancelled = threading.Event()

    async def linger() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def main() -> str:
        asyncio.get_running_loop().create_task(linger())
        await asyncio.sleep(0)
        return "done"

    assert run_sync(main()) == "done"
    assert cancelled.is_set()


def test_an_interrupted_sync_call_is_cancelled_and_cleaned_up() -> None:
    cleaned = threading.Event()

    async def interrupted() -> None:
        try:
            await asyncio.sleep(0)
            raise KeyboardInterrupt
        finally:
            cleaned.set()

    loops: list[asyncio.AbstractEventLoop] = []

    async def noted() -> None:
        loops.append(asyncio.get_running_loop())
        await interrupted()

    with pytest.raises(KeyboardInterrupt):
        run_sync(noted())
    assert cleaned.is_set()
    assert loops[0].is_closed()  # a loop an interrupt went through is not used again


@dataclass(frozen=True)
class Fan:
    count: int


def test_sub_evaluations_gathered_in_a_tool_run_concurrently_under_evaluate(
    ok_emulator: ProviderEmulator,
) -> None:
    """An async tool that gathers evaluations gets an async client on the private loop,
    so they overlap; it is closed with the loop."""
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
    prompt = Prompt(
        name="fan",
        sections=[
            MarkdownSection(
                key="t",
                title="T",
                template="Fan out.",
                tools=[Tool(name="fan_out", description="Fan out", handler=fan_out)],
            )
        ],
    )
    assert adapter.evaluate(prompt, session=Session()).text == "done"
    assert len({id(client) for client in clients}) == 1  # one async client, shared
    assert clients[0] is not adapter._clients.held(sync=True)
    assert adapter._clients.open_clients == 1  # the async one closed with its loop
    adapter.close()


# --- nothing left open


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_thread_per_call_leaves_no_loop_or_socket_behind(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    adapter.evaluate(HELLO, session=Session())  # warm: the one sync client and its pool
    gc.collect()
    before = _open_fds()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        for _ in range(40):
            thread = threading.Thread(target=lambda: adapter.evaluate(HELLO, session=Session()))
            thread.start()
            thread.join()
        gc.collect()
    assert _open_fds() <= before + 2  # was ~40 descriptors per 200 calls
    adapter.close()


# --- clean tracebacks


def test_a_sync_failure_has_a_clean_traceback(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    ok_emulator.inject(Fault.rate_limit(retry_after=0.01))
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(HELLO, session=Session())
    text = "".join(traceback.format_exception(info.value))
    assert "no running event loop" not in text
    assert "During handling of the above exception" not in text
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


def test_closing_a_private_loop_does_not_wait_for_a_thread_nobody_waits_for() -> None:
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

    run_sync(give_up_early())
    assert not finished.is_set()  # run_sync returned while the thread was still blocked
    release.set()
    assert finished.wait(5)


# --- where a sync tool runs


def test_a_sync_tool_under_evaluate_runs_on_the_callers_thread_with_no_loop_running(
    ok_emulator: ProviderEmulator,
) -> None:
    """No thread hop, and no event loop on that thread while it runs: a tool may start
    one of its own (`asyncio.run`), as it may under `evaluate_async` on a worker thread."""
    seen: list[tuple[int, str]] = []

    async def inner() -> str:
        await asyncio.sleep(0)
        return "from asyncio.run"

    def lookup(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        seen.append((threading.get_ident(), asyncio.run(inner())))
        return ToolResult.ok("found")

    tool = Tool(name="lookup", description="Look up", handler=lookup)
    prompt = Prompt(
        name="p", sections=[MarkdownSection(key="t", title="T", template="Go.", tools=[tool])]
    )
    ok_emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("lookup", {"count": 1})),
            Turn.text("done"),
            Turn.tool_calls(EmulatedToolCall("lookup", {"count": 2})),
            Turn.text("done"),
        ]
    )
    adapter = make_adapter("openai", ok_emulator)
    response = adapter.evaluate(prompt, session=Session())
    assert response.tool_invocations[0].result.success
    assert seen[0] == (threading.get_ident(), "from asyncio.run")
    asynchronous = asyncio.run(adapter.evaluate_async(prompt, session=Session()))
    assert asynchronous.tool_invocations[0].result.success
    assert seen[1][0] != threading.get_ident()  # a worker thread: the caller's loop runs
    assert seen[1][1] == "from asyncio.run"
    adapter.close()
