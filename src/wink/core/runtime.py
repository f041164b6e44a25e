"""Sync over async: how `evaluate()` runs the one async loop, and where blocking is allowed.

The model, in full (docs/runtime.md explains it for users):

* `evaluate_async()` runs on the caller's event loop and never blocks it: SDK calls use
  the async client; a sync client the caller gave, and every sync tool handler, run on
  wink's worker threads (`run_in_thread`).
* `evaluate()` runs the same coroutine on a private event loop made for that call and
  closed when it returns, with every async client created on it. Called from a thread
  with a running loop (Jupyter, an async web handler), it does that on a worker thread
  instead of deadlocking. Nothing is kept per thread, so nothing is left open when a
  thread ends.
* In the one task that runs an `evaluate()` call (`in_sync_call()`), nothing else waits
  on the loop, so the adapter may call the SDK's sync client inline: the same wire without
  the async stack's cost. Tasks that task spawns (a tool gathering sub-evaluations) are
  other tasks, so they do not inherit that permission.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = [
    "SteppedLoop",
    "in_sync_call",
    "on_loop_exit",
    "owns_loop",
    "run_in_thread",
    "run_sync",
]

T = TypeVar("T")

_MAX_WORKERS = 64  # sync tools and sync SDK calls of concurrent evaluations

_sync_tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
_private_loops: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, list[Callable[[], Awaitable[None]]]
] = weakref.WeakKeyDictionary()
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def in_sync_call() -> bool:
    """True only in the task that runs an `evaluate()` call: a blocking call stalls
    nothing else there."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop
        return False
    return task is not None and task in _sync_tasks


def owns_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """True for a private loop of `run_sync`: it is closed when its call returns."""
    return loop in _private_loops


def on_loop_exit(loop: asyncio.AbstractEventLoop, closer: Callable[[], Awaitable[None]]) -> None:
    """Run `closer()` on `loop` before `run_sync` closes it (a client bound to it)."""
    _private_loops[loop].append(closer)


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
    return _worker_pool().submit(_run_private, coroutine).result()


def _run_private(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a private loop: an idle one when there is one (a new event loop costs about
    50 µs, a fifth of wink's own work per evaluation), handed back clean afterwards."""
    loop = _take_loop()
    _private_loops[loop] = []
    reusable = False
    try:
        return loop.run_until_complete(_main(loop, coroutine))
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:  # what the call left running is cancelled, as Runner does
            task.cancel()
        if pending:
            with contextlib.suppress(BaseException):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        reusable = not loop.is_closed() and not any(
            not task.done() for task in asyncio.all_tasks(loop)
        )
        if reusable:
            _give_back(loop)
        else:
            loop.close()


async def _main(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    task = asyncio.current_task()
    if task is not None:
        _sync_tasks.add(task)
    try:
        return await coroutine
    finally:
        for closer in _private_loops.pop(loop, []):
            with contextlib.suppress(Exception):  # must not mask the call's own outcome
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
    so nothing runs behind its back between two steps. The task it starts is an
    `evaluate()`-like task (`in_sync_call()` is true in it), and `close()` cancels what
    is left and closes the clients made on the loop. Called from a thread with a running
    loop (Jupyter), the steps run on one worker thread of its own.

    Making an event loop costs about as much as the first token of a local stream, so a
    few finished loops are kept idle (nothing on them: no task, no client) for the next
    stream, and closed at exit.
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
        _private_loops[self._loop] = []

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def start(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A task for `coroutine` on this loop, run by the following steps."""
        task = self._loop.create_task(coroutine)
        _sync_tasks.add(task)
        return task

    def run_until(self, future: asyncio.Future[Any]) -> None:
        """Run the loop until `future` is done (its outcome stays in it)."""
        if self._worker is None:
            self._step(future)
        else:
            self._worker.submit(self._step, future).result()

    def _step(self, future: asyncio.Future[Any]) -> None:
        # The outcome is read from `future`; KeyboardInterrupt and the like go through.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            self._loop.run_until_complete(future)

    def close(self) -> None:
        """Cancel the tasks left and close the clients made on the loop (idempotent)."""
        if self._closed:
            return
        self._closed = True
        loop = self._loop
        reusable = False
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            for task in pending:
                self.run_until(task)
            for closer in _private_loops.pop(loop, []):
                self.run_until(loop.create_task(_quietly(closer)))
            self.run_until(loop.create_task(loop.shutdown_asyncgens()))
            reusable = not any(not task.done() for task in asyncio.all_tasks(loop))
        finally:
            if reusable:
                _give_back(loop)
            else:  # something would not stop: this loop is not handed to anyone else
                loop.close()
            if self._worker is not None:
                self._worker.shutdown(wait=True)


_IDLE_LIMIT = 4
_idle_loops: list[asyncio.AbstractEventLoop] = []
_idle_lock = threading.Lock()


def _take_loop() -> asyncio.AbstractEventLoop:
    with _idle_lock:
        if _idle_loops:
            return _idle_loops.pop()
    return asyncio.new_event_loop()


def _give_back(loop: asyncio.AbstractEventLoop) -> None:
    with _idle_lock:
        if len(_idle_loops) < _IDLE_LIMIT:
            _idle_loops.append(loop)
            return
    loop.close()


@atexit.register
def _close_idle_loops() -> None:
    with _idle_lock:
        loops, _idle_loops[:] = list(_idle_loops), []
    for loop in loops:
        loop.close()


async def _quietly(closer: Callable[[], Awaitable[None]]) -> None:
    with contextlib.suppress(Exception):  # one failing close must not keep others open
        await closer()
