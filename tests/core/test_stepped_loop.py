"""`SteppedLoop`, the private loop a sync stream runs in steps."""

from __future__ import annotations

import asyncio
import threading

from wink.core.runtime import SteppedLoop, in_sync_call


async def forever(started: threading.Event) -> None:
    started.set()
    await asyncio.sleep(3600)


def test_close_cancels_what_is_left_and_keeps_the_loop_for_the_next_stream() -> None:
    first = SteppedLoop()
    started = threading.Event()
    task = first.start(forever(started))
    first.run_until(asyncio.ensure_future(asyncio.sleep(0), loop=first.loop))
    assert started.is_set()
    first.close()
    assert task.cancelled()
    second = SteppedLoop()
    assert second.loop is first.loop  # an idle loop is reused: no new selector per stream
    assert not second.loop.is_closed()
    assert asyncio.all_tasks(second.loop) == set()
    second.close()
    first.close()  # idempotent: the loop, now someone else's, is left alone


def test_its_task_may_block_like_evaluate() -> None:
    async def probe() -> bool:
        return in_sync_call()

    stepped = SteppedLoop()
    task = stepped.start(probe())
    stepped.run_until(task)
    assert task.result() is True
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
