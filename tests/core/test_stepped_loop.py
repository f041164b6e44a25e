"""`SteppedLoop`, the private loop a sync stream runs in steps."""

from __future__ import annotations

import asyncio
import threading

from wink.core.foundation.runtime import SteppedLoop


async def forever(started: threading.Event) -> None:
    started.set()
    await asyncio.sleep(3600)


def test_the_loop_runs_only_while_a_step_waits() -> None:
    stepped = SteppedLoop()
    ticks: list[int] = []

    async def count() -> None:
        while True:
            ticks.append(len(ticks))
            await asyncio.sleep(0)

    stepped.start(count())
    stepped.run_until(asyncio.sleep(0))
    seen = len(ticks)
    assert seen >= 1
    assert len(ticks) == seen  # between steps nothing runs
    stepped.close()


def test_close_cancels_what_is_left_and_closes_the_loop() -> None:
    stepped = SteppedLoop()
    started = threading.Event()
    task = stepped.start(forever(started))
    stepped.run_until(asyncio.sleep(0))
    assert started.is_set()
    stepped.close()
    assert task.cancelled()
    stepped.close()  # idempotent


def test_a_step_returns_the_awaited_value() -> None:
    stepped = SteppedLoop()

    async def answer() -> int:
        return 42

    assert stepped.run_until(answer()) == 42
    stepped.close()


async def test_inside_a_running_loop_the_steps_run_on_a_thread_of_their_own() -> None:
    stepped = SteppedLoop()
    names: list[str] = []

    async def where() -> None:
        names.append(threading.current_thread().name)

    task = stepped.start(where())
    stepped.run_until(task)
    stepped.close()
    assert names[0].startswith("wink-stream")
