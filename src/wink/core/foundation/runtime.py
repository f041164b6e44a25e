"""Sync over async: how the sync entry points run the one evaluation coroutine.

The model, in full (docs/runtime.md explains it for users):

* `evaluate_async()` and `stream_async()` run on the caller's event loop and never block
  it: an SDK call made with a sync client, and every sync tool, runs on one of wink's
  worker threads (`run_in_thread`).
* `evaluate()` runs the same coroutine on a private event loop (`run_sync`); `stream()`
  on a private loop the caller's iteration steps (`SteppedLoop`). Called from a thread
  whose loop is running (Jupyter, an async web handler), either does that on a worker
  thread instead of deadlocking. A sync tool of `evaluate()` (the only call of its round,
  with no deadline to cut it) runs on the caller's thread between two runs of that loop,
  with no loop running (`run_blocking`): no thread hop, and the tool may start a loop of
  its own.
* Clients made on a private loop are closed when its call ends (`on_loop_exit`), and
  whatever the call left running is cancelled. The loop itself, clean, waits for the
  next call (at most `_IDLE_LOOPS` of them, closed at exit): a new event loop costs as
  much as a local first token (tests/test_runtime.py checks that nothing outlives a call).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = [
    "SteppedLoop",
    "on_loop_exit",
    "owns_loop",
    "run_blocking",
    "run_in_thread",
    "run_sync",
]

T = TypeVar("T")

_MAX_WORKERS = 64  # sync tools and sync SDK calls of concurrent evaluations

_closers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, list[Callable[[], Awaitable[None]]]
] = weakref.WeakKeyDictionary()
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_IDLE_LOOPS = 4  # private loops kept for the next sync call (threads calling at once)
_idle: list[asyncio.AbstractEventLoop] = []
_idle_lock = threading.Lock()
_blocking: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, list[tuple[Callable[[], Any], asyncio.Future[Any]]]
] = weakref.WeakKeyDictionary()  # a run_sync loop -> the blocking calls it waits for


def owns_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """True for a private loop of `run_sync` / `SteppedLoop`: it is closed when its call ends."""
    return loop in _closers


def on_loop_exit(loop: asyncio.AbstractEventLoop, closer: Callable[[], Awaitable[None]]) -> None:
    """Run `closer()` on the private `loop` before it is closed (a client bound to it)."""
    _closers[loop].append(closer)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to completion from sync code, on a private loop (see the module doc)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop_running = False
    else:
        loop_running = True
    # Decided outside the `except` block, so tracebacks carry no "no running event loop".
    if not loop_running:
        return _run_private(coroutine)
    context = contextvars.copy_context()
    return _worker_pool().submit(context.run, _run_private, coroutine).result()


def _run_private(coroutine: Coroutine[Any, Any, T]) -> T:
    loop = _take_loop()
    task = loop.create_task(coroutine)
    clean = False
    try:
        result = _drive(loop, task)
        clean = True
        return result
    except Exception:
        clean = True
        raise
    finally:  # also on KeyboardInterrupt: the evaluation is cancelled and cleaned up
        _blocking.pop(loop, None)
        _shut_down(loop, task, reuse=clean)


def _drive(loop: asyncio.AbstractEventLoop, task: asyncio.Task[T]) -> T:
    """Run `loop` until `task` is done; between two runs, the blocking calls the task
    waits for (`run_blocking`) run here, on the caller's thread, with no loop running."""
    waiting: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
    _blocking[loop] = waiting
    task.add_done_callback(lambda _: loop.stop())
    while True:
        loop.run_forever()
        while waiting:
            call, done = waiting.pop(0)
            if done.cancelled():
                continue
            try:
                value = call()
            except Exception as error:  # the caller's own failure, raised where it waits
                done.set_exception(error)
            else:
                done.set_result(value)
        if task.done():
            return task.result()


async def run_blocking(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)`, which may block, where that costs least and harms
    nothing: on a sync call's private loop (`run_sync`), on the caller's thread while the
    loop waits for it, with no loop running there (so the function may run one of its
    own, `asyncio.run`); elsewhere on a worker thread (`run_in_thread`). Either way with
    the caller's context. Nothing can cut it short: with a deadline, use `run_in_thread`.
    """
    loop = asyncio.get_running_loop()
    waiting = _blocking.get(loop)
    if waiting is None:
        return await run_in_thread(function, *args, **kwargs)
    done: asyncio.Future[T] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, function, *args, **kwargs)
    waiting.append((call, done))
    loop.stop()  # `_drive` runs it, then the loop again
    return await done


def _take_loop() -> asyncio.AbstractEventLoop:
    """An idle private loop, or a new one."""
    with _idle_lock:
        loop = _idle.pop() if _idle else None
    if loop is None:
        loop = asyncio.new_event_loop()
    _closers[loop] = []
    return loop


def _shut_down(
    loop: asyncio.AbstractEventLoop, *tasks: asyncio.Task[Any], reuse: bool = False
) -> None:
    """Cancel what is left on a private loop and close its clients; then keep the loop
    for the next call (`reuse`, if nothing is left on it and fewer than `_IDLE_LOOPS`
    wait), or close it."""
    keep = False
    try:
        pending = [task for task in {*tasks, *asyncio.all_tasks(loop)} if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            with contextlib.suppress(BaseException):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        closers = _closers.pop(loop, [])
        if closers:
            loop.run_until_complete(_close_all(closers))
        if reuse and not loop.is_closed() and not asyncio.all_tasks(loop):
            with _idle_lock:
                keep = len(_idle) < _IDLE_LOOPS
                if keep:
                    _idle.append(loop)
        if not keep:
            loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        if not keep:
            loop.close()


def _close_idle_loops() -> None:
    with _idle_lock:
        loops, _idle[:] = list(_idle), []
    for loop in loops:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _forget_idle_loops() -> None:
    _idle.clear()  # a forked child must not share its parent's selectors


atexit.register(_close_idle_loops)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_idle_loops)


async def _close_all(closers: list[Callable[[], Awaitable[None]]]) -> None:
    for closer in closers:
        with contextlib.suppress(Exception):  # one failing close must not keep others open
            await closer()


async def run_in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)` on a wink worker thread, with the caller's context.

    Unlike `asyncio.to_thread`, the pool is not the loop's default executor, so closing
    a private loop never waits for a thread the caller stopped waiting for (a sync tool
    that outlived the deadline finishes in the background).
    """
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, function, *args, **kwargs)
    return await loop.run_in_executor(_worker_pool(), call)


def _worker_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=_MAX_WORKERS, thread_name_prefix="wink-worker"
            )
        return _pool


class SteppedLoop:
    """A private event loop that sync code runs in steps: `adapter.stream()`.

    The caller's thread runs the loop only while it waits for something (`run_until`),
    so nothing runs behind its back between two steps; `close()` cancels what is left,
    closes the clients made on the loop and the loop. Called from a thread whose loop is
    running (Jupyter), the steps run on one worker thread of its own.
    """

    __slots__ = ("_closed", "_loop", "_worker")

    def __init__(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._worker: concurrent.futures.ThreadPoolExecutor | None = None
        else:
            self._worker = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="wink-stream"
            )
        self._loop = _take_loop()
        self._closed = False

    def start(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A task for `coroutine` on this loop, run by the following steps."""
        return self._loop.create_task(coroutine)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the steps run (its futures are what `run_until` waits for)."""
        return self._loop

    def run_until(self, awaitable: Awaitable[T]) -> T:
        """Run the loop until `awaitable` is done; its result (or exception)."""
        if self._worker is None:
            return self._loop.run_until_complete(awaitable)
        context = contextvars.copy_context()
        return self._worker.submit(context.run, self._loop.run_until_complete, awaitable).result()

    def close(self) -> None:
        """Cancel the tasks left, close the clients made on the loop and the loop
        (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._worker is None:
                _shut_down(self._loop, reuse=True)
            else:
                self._worker.submit(_shut_down, self._loop, reuse=True).result()
        finally:
            if self._worker is not None:
                self._worker.shutdown(wait=True)
