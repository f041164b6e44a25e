"""Sync over async: how the sync entry points run the one evaluation coroutine.

The model, in full (docs/runtime.md explains it for users):

* `evaluate_async()` and `stream_async()` run on the caller's event loop and never block
  it: an SDK call made with a sync client, and every sync tool, runs on one of wink's
  worker threads (`run_in_thread`).
* `evaluate()` runs the same coroutine on a private event loop made for that call and
  closed when it returns (`run_sync`); `stream()` on a private loop the caller's
  iteration steps (`SteppedLoop`). Called from a thread whose loop is running (Jupyter,
  an async web handler), either does that on a worker thread instead of deadlocking.
  Nothing is kept per thread or per loop once the call has returned.
* Clients made on a private loop are closed with it (`on_loop_exit`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["SteppedLoop", "on_loop_exit", "owns_loop", "run_in_thread", "run_sync"]

T = TypeVar("T")

_MAX_WORKERS = 64  # sync tools and sync SDK calls of concurrent evaluations

_closers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, list[Callable[[], Awaitable[None]]]
] = weakref.WeakKeyDictionary()
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


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
    loop = asyncio.new_event_loop()
    _closers[loop] = []
    task = loop.create_task(coroutine)
    try:
        return loop.run_until_complete(task)
    finally:  # also on KeyboardInterrupt: the evaluation is cancelled and cleaned up
        _shut_down(loop, task)


def _shut_down(loop: asyncio.AbstractEventLoop, *tasks: asyncio.Task[Any]) -> None:
    """Cancel what is left on a private loop, close its clients, close it."""
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
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


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
        self._loop = asyncio.new_event_loop()
        self._closed = False
        _closers[self._loop] = []

    def start(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A task for `coroutine` on this loop, run by the following steps."""
        return self._loop.create_task(coroutine)

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
                _shut_down(self._loop)
            else:
                self._worker.submit(_shut_down, self._loop).result()
        finally:
            if self._worker is not None:
                self._worker.shutdown(wait=True)
