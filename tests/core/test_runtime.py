"""The sync/async bridge (`wink.core.runtime`): which task may block, nothing left open
per thread or loop, clean tracebacks; through real adapters and SDKs where it matters.
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
from wink.core.runtime import in_sync_call, run_in_thread, run_sync
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter, final

# --- which task may block


def test_only_the_task_of_a_sync_call_may_block() -> None:
    async def probe() -> tuple[bool, list[bool]]:
        children = await asyncio.gather(*(asyncio.to_thread(in_sync_call) for _ in range(2)))
        spawned = await asyncio.gather(*(_in_task() for _ in range(3)))
        return in_sync_call(), [*children, *spawned]

    main, others = run_sync(probe())
    assert main is True
    assert others == [False] * 5  # no permission leaks into tasks or threads it starts
    assert in_sync_call() is False


async def _in_task() -> bool:
    return in_sync_call()


@dataclass(frozen=True)
class Fan:
    count: int


def test_sub_evaluations_gathered_in_a_tool_run_concurrently_under_evaluate(
    ok_emulator: ProviderEmulator,
) -> None:
    """An async tool that gathers evaluations gets async clients, so they overlap."""
    adapter = make_adapter("openai", ok_emulator)
    inner_flags: list[bool] = []

    async def fan_out(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        async def one() -> str | None:
            inner_flags.append(in_sync_call())
            return (await adapter.evaluate_async(HELLO, session=Session())).text

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
    assert inner_flags == [False] * 4
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
