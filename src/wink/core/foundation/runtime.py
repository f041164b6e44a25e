"""Sync over async: one event loop per process for the sync entry points, and worker
threads for sync code.

The model, in full (docs/runtime.md explains it for users):

* `evaluate_async()` and `stream_async()` run on the caller's event loop and never block
  it. `evaluate()`, `stream()`, the batch methods and an MCP server's session run on the
  **portal**: one event loop per process, on a daemon thread of its own ("wink-loop"),
  started by the first sync call. A sync call hands its coroutine to that loop
  (`portal().call`) and waits for the outcome; whatever the call's shape (one tool call
  or many, a deadline or none, a stream), it is the same path. What lives on a loop (an
  SDK's async client, a Redis connection, an MCP session) is made once for the portal
  and serves every sync call of the process.
* Every sync tool, and every call of a sync SDK client the caller passed in, runs on a
  wink worker thread (`run_in_thread`), on every entry point: never on an event loop,
  never on the caller's thread.
* An exception that stops a loop (`KeyboardInterrupt`, `SystemExit`: asyncio re-raises
  them out of `run_forever`) is the outcome of the call whose task raised it: the
  portal's thread delivers it to the caller and runs the loop on. Ctrl-C in a caller
  waiting for the portal cancels its evaluation (its `finally` blocks run on the portal),
  then raises there, once.
* The portal is closed at interpreter exit: what still runs on it is cancelled, the
  clients made for it are closed (`on_loop_exit`), then the loop. A forked child does not
  inherit its parent's thread: its first sync call starts a portal of its own.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

from .errors import ConfigurationError

__all__ = ["Portal", "Running", "on_loop_exit", "portal", "run_in_thread", "running_portal"]

T = TypeVar("T")

_MAX_WORKERS = 64  # sync tools and sync SDK calls of concurrent evaluations
_CLOSE_WAIT = 10.0  # seconds the portal's shutdown may take at exit
_INTERRUPT_WAIT = 10.0  # seconds an interrupted call waits for its evaluation to unwind

Closer = Callable[[], Awaitable[None]]


class Portal:
    """An event loop running on a daemon thread of its own, for sync code to call into.

    Daemon, so that it never keeps the interpreter alive; it is closed at exit all the
    same (`close`), with what was made for it.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._closers: list[Callable[[], Closer | None]] = []
        self._spawned: set[asyncio.Task[Any]] = set()
        # reentrant: a finalizer (a dropped client's close) may run `spawn` on a thread
        # that holds the lock already, when the garbage collector runs inside `start`
        self._lock = threading.RLock()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="wink-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                self.loop.run_forever()
            except (KeyboardInterrupt, SystemExit):
                # A task raised it (a tool's `sys.exit()`): asyncio set it as the task's
                # outcome, which reaches whoever waits for that task; the loop serves on.
                continue
            return

    @property
    def is_current(self) -> bool:
        """True on the portal's own thread (where waiting for the portal would deadlock)."""
        return threading.current_thread() is self._thread

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the portal with the caller's context; wait for its outcome
        here. Ctrl-C while waiting cancels it, waits for it to unwind, and raises."""
        if self.is_current:
            coroutine.close()
            raise ConfigurationError(
                "a sync wink call (evaluate, stream, a batch method, `with server:`) was made "
                "from an async function running on wink's own event loop (an async tool of a "
                "sync evaluation); await its async form there (evaluate_async, stream_async, "
                "`async with server:`)"
            )
        running = self.start(coroutine)
        try:
            return running.future.result()
        except BaseException:
            if running.future.done():  # the coroutine's own outcome
                raise
            # Interrupted while waiting (Ctrl-C): the evaluation is cancelled, its
            # `finally` blocks run on the portal; this thread raises once they have.
            with contextlib.suppress(BaseException):  # a second Ctrl-C stops the wait
                running.cancel(wait=_INTERRUPT_WAIT)
            raise

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coroutine` on the portal with the caller's context; its outcome comes
        in the future (await it elsewhere with `asyncio.wrap_future`)."""
        return self.start(coroutine).future

    def start(self, coroutine: Coroutine[Any, Any, T]) -> Running[T]:
        """Start `coroutine` on the portal as a task, with the caller's context."""
        running = Running(self, coroutine, contextvars.copy_context())
        with self._lock:
            if self._closing:
                coroutine.close()
                raise RuntimeError("wink's event loop is closed (the interpreter is exiting)")
            self.loop.call_soon_threadsafe(running.begin)
        return running

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run `coroutine` on the portal and forget it (a close nobody waits for; from any
        thread, a finalizer's too). Nothing if the portal is closing."""
        with self._lock:
            if self._closing or self.loop.is_closed():
                coroutine.close()
                return
            self.loop.call_soon_threadsafe(self._spawn, coroutine)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = self.loop.create_task(coroutine)
        self._spawned.add(task)  # held until done: asyncio keeps only a weak reference
        task.add_done_callback(self._spawned.discard)

    def on_exit(self, closer: Closer) -> None:
        """Run `closer()` on the portal before it closes. A bound method is held weakly:
        an object dropped before exit is not kept alive for it."""
        reference: Callable[[], Closer | None]
        if inspect.ismethod(closer):
            reference = weakref.WeakMethod(closer)
        else:
            reference = functools.partial(_itself, closer)
        with self._lock:
            if reference not in self._closers:  # an object registers its closer once
                self._closers.append(reference)

    def close(self) -> None:
        """Cancel what still runs on the portal, run the closers, close the loop (at
        exit; from any thread but the portal's own)."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            closers, self._closers = self._closers, []
        if self._thread.is_alive():
            done = asyncio.run_coroutine_threadsafe(_shut_down(closers), self.loop)
            with contextlib.suppress(BaseException):
                done.result(timeout=_CLOSE_WAIT)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=_CLOSE_WAIT)
        if not self._thread.is_alive():
            self.loop.close()


def _itself(closer: Closer) -> Closer:
    return closer


class Running(Generic[T]):
    """A coroutine started on the portal: its outcome (`future`), and how to stop it."""

    __slots__ = ("_context", "_coroutine", "_portal", "_task", "future")

    def __init__(
        self, portal: Portal, coroutine: Coroutine[Any, Any, T], context: contextvars.Context
    ) -> None:
        self._portal = portal
        self._coroutine: Coroutine[Any, Any, T] | None = coroutine
        self._context = context
        self._task: asyncio.Task[T] | None = None
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def begin(self) -> None:
        """On the portal: make the task (unless it was given up before it started)."""
        coroutine, self._coroutine = self._coroutine, None
        assert coroutine is not None
        if not self.future.set_running_or_notify_cancel():
            coroutine.close()
            return
        task = self._task = self._portal.loop.create_task(coroutine, context=self._context)
        task.add_done_callback(self._settle)

    def _settle(self, task: asyncio.Task[T]) -> None:
        if task.cancelled():
            self.future.set_exception(concurrent.futures.CancelledError())
            return
        error = task.exception()
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(task.result())

    def cancel(self, *, wait: float | None = None) -> None:
        """Cancel it; with `wait`, wait that long for it to have stopped (its `finally`
        blocks run). On the portal's own thread (a finalizer run there) it never waits."""
        if self.future.cancel() or self.future.done():  # not started, or over
            return
        if self._portal.is_current:
            if self._task is not None:
                self._task.cancel()
            return
        self._portal.loop.call_soon_threadsafe(self._cancel_task)
        if wait is not None:
            concurrent.futures.wait([self.future], timeout=wait)

    def _cancel_task(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def _shut_down(closers: list[Callable[[], Closer | None]]) -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=_CLOSE_WAIT)
    for reference in closers:
        closer = reference()
        if closer is not None:
            with contextlib.suppress(Exception):  # one failing close must not keep others open
                await closer()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(Exception):
        await loop.shutdown_asyncgens()
    with contextlib.suppress(Exception):
        await loop.shutdown_default_executor()


_portal: Portal | None = None
_portal_lock = threading.Lock()
_forked_away: list[Portal] = []  # a child's copies of its parent's portals: never touched


def portal() -> Portal:
    """The process's portal, started on first use."""
    global _portal
    current = _portal
    if current is not None:
        return current
    with _portal_lock:
        if _portal is None:
            _portal = Portal()
        return _portal


def running_portal() -> Portal | None:
    """The portal, if one was started (closing something needs none to be started)."""
    return _portal


def on_loop_exit(loop: asyncio.AbstractEventLoop, closer: Closer) -> None:
    """Run `closer()` on `loop` before wink closes it: the portal's loop, at exit. Other
    loops are the caller's: what is made on them is closed by `aclose()` there."""
    current = _portal
    if current is not None and current.loop is loop:
        current.on_exit(closer)


def _close_at_exit() -> None:
    current = _portal
    if current is not None:
        current.close()


def _forget_after_fork() -> None:
    """A forked child has its parent's portal object but not its thread: the next sync
    call starts a new one. The old loop is kept, untouched: closing it would act on
    selectors and sockets the parent still uses."""
    global _portal, _pool
    if _portal is not None:
        _forked_away.append(_portal)
    _portal = None
    _pool = None  # its threads did not come along either


atexit.register(_close_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


# ---- worker threads

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


async def run_in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)` on a wink worker thread, with the caller's context.

    Unlike `asyncio.to_thread`, the pool is not the loop's default executor, so a
    thread the caller stopped waiting for (a sync tool that outlived the deadline, and
    finishes in the background) delays nothing else, not even host-name lookups.

    A `StopIteration` from the call arrives as a `RuntimeError`: an asyncio future
    refuses it, and the await would never end.
    """
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, _no_stop, function, *args, **kwargs)
    return await loop.run_in_executor(_worker_pool(), call)


def _no_stop(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    try:
        return function(*args, **kwargs)
    except StopIteration as error:
        raise RuntimeError(f"StopIteration raised in a wink worker thread: {error!r}") from error


def _worker_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=_MAX_WORKERS, thread_name_prefix="wink-worker"
            )
        return _pool
