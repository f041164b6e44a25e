"""`adapter.stream()` / `adapter.stream_async()`: the one loop, its events yielded.

The evaluation is the same coroutine `evaluate()` runs (`wink.core.agent.loop`), started as a
task whose sink is a bounded queue: it pushes each piece's events as a batch, and waits
while the caller is `_AHEAD` batches behind, so a body is never read faster than the
caller takes its events. The caller's iteration pops them. Closing the stream (leaving
the `with` block, a `break` inside it, an exception, a cancelled task) cancels the
evaluation: its HTTP response is closed in its `finally`, a tool round cut short is rolled
back, and nothing is left running.

`stream_async()` runs that task on the caller's loop (`EventQueue`); `stream()` on the
portal (`wink.core.foundation.runtime`), its queue handing batches to the caller's thread
(`HandedQueue`). A sync stream's iteration and its finalizer run no event loop: they wait
on a lock, and closing it cancels the task on the portal and waits for it to unwind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Generic, Self

from ..foundation.errors import StreamNotFinishedError, WinkError
from ..foundation.events import EventSink, StreamEvent
from ..foundation.runtime import Running, portal
from ..prompting.prompt import OutputT
from .loop import PromptResponse

__all__ = ["AsyncPromptStream", "EventQueue", "HandedQueue", "PromptStream", "StreamStart"]

StreamStart = Callable[[EventSink], Coroutine[Any, Any, PromptResponse[OutputT]]]
"""Starts the evaluation with the queue as its sink (the adapter binds the rest)."""

_AHEAD = 8  # batches (one per piece of a body) a stream's evaluation may run ahead


class EventQueue:
    """Batches of events from the evaluation (`put`, `send`) to the iteration (`get`).

    Both sides run on one event loop. `send` waits while more than `ahead` batches are
    queued; with `ahead=0` (a rendezvous) it waits until the caller comes back for more,
    so the evaluation runs only while the caller waits: a sync stream's evaluation blocks
    the thread the caller iterates on. `count` is how many events were queued so far (the
    loop compares it before and after an attempt to know whether the caller may have seen
    part of a round); `close()` marks the end, after which `get` drains and returns None.
    """

    __slots__ = ("_ahead", "_batches", "_closed", "_consumer", "_producer", "count")

    def __init__(self, ahead: int) -> None:
        self._ahead = ahead
        self._batches: deque[list[StreamEvent]] = deque()
        self._consumer: asyncio.Future[None] | None = None  # get() waits for a batch
        self._producer: asyncio.Future[None] | None = None  # send() waits for room
        self._closed = False
        self.count = 0

    def put(self, events: list[StreamEvent]) -> None:
        """Queue `events` now, whatever the backlog (the loop's own few events)."""
        if events:
            self._batches.append(events)
            self.count += len(events)
            _wake(self._consumer)

    async def send(self, events: list[StreamEvent]) -> None:
        """Queue `events`, then wait while more than `ahead` batches are queued. A caller
        already waiting for the stream's first events gets them before the evaluation
        reads on: a body's later pieces are often in already, and reading them first
        would hold back the first token. After that, the evaluation decodes what has
        arrived (up to `ahead` pieces) before the caller takes it all in one turn of the
        loop: handing over each piece at once cost a turn per piece, more than decoding
        it, and delays nothing that is still on its way."""
        consumer = self._consumer
        waiting = self._ahead and self.count == 0 and consumer is not None and not consumer.done()
        self.put(events)
        if waiting:
            await asyncio.sleep(0)
        while len(self._batches) > self._ahead:
            self._producer = asyncio.get_running_loop().create_future()
            await self._producer

    def close(self, *_: object) -> None:
        """No more batches (a done-callback of the evaluation task)."""
        self._closed = True
        _wake(self._consumer)

    async def get(self) -> list[StreamEvent] | None:
        """The next batch; None once closed and drained."""
        while (waiter := self.waiter(asyncio.get_running_loop())) is not None:
            await waiter
        return self.take()

    def waiter(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None] | None:
        """None when `take` has an answer now; else a future of `loop`, done when it may
        have one (the evaluation is told to go on). A sync stream runs its loop until this
        future is done: a step needs no task of its own."""
        if self._batches or self._closed:
            return None
        _wake(self._producer)  # the caller wants more: the evaluation goes on
        consumer = self._consumer = loop.create_future()
        return consumer

    def take(self) -> list[StreamEvent] | None:
        """The next batch if one is queued; None when none is (after `waiter` said so:
        closed and drained)."""
        if not self._batches:
            return None
        batch = self._batches.popleft()
        if self._ahead:
            _wake(self._producer)
        return batch


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class HandedQueue:
    """`EventQueue` for a consumer on another thread: the evaluation (on the portal)
    queues batches, the caller's thread takes them (`take_blocking`), waiting on a lock,
    never on an event loop. The evaluation waits while more than `ahead` batches are
    queued; the caller's take wakes it (on the portal's loop)."""

    __slots__ = ("_ahead", "_batches", "_closed", "_producer", "_ready", "count")

    def __init__(self, ahead: int) -> None:
        self._ahead = ahead
        self._batches: deque[list[StreamEvent]] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._producer: asyncio.Future[None] | None = None  # send() waits for room
        self._closed = False
        self.count = 0

    def put(self, events: list[StreamEvent]) -> None:
        """Queue `events` now, whatever the backlog."""
        if events:
            with self._ready:
                self._batches.append(events)
                self.count += len(events)
                self._ready.notify()

    async def send(self, events: list[StreamEvent]) -> None:
        """Queue `events`, then wait while more than `ahead` batches are queued."""
        self.put(events)
        while True:
            with self._ready:
                if len(self._batches) <= self._ahead:
                    return
                waiter = self._producer = asyncio.get_running_loop().create_future()
            await waiter

    def close(self) -> None:
        """No more batches."""
        with self._ready:
            self._closed = True
            self._ready.notify()

    def take_blocking(self) -> list[StreamEvent] | None:
        """The next batch, waiting for one (on the caller's thread); None once closed
        and drained."""
        with self._ready:
            while not self._batches and not self._closed:
                self._ready.wait()
            if not self._batches:
                return None
            batch = self._batches.popleft()
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.get_loop().call_soon_threadsafe(_wake, producer)
        return batch


class _StreamBase(Generic[OutputT]):
    """What both forms share: the current batch, the outcome."""

    def __init__(self, start: StreamStart[OutputT]) -> None:
        self._start = start
        self._batch: deque[StreamEvent] = deque()
        self._response: PromptResponse[OutputT] | None = None
        self._error: WinkError | None = None
        self._closed = False

    @property
    def response(self) -> PromptResponse[OutputT]:
        """The `PromptResponse`, once the iteration has ended: the same value `evaluate()`
        returns for the same traffic. Raises the stream's `WinkError` if it failed, and
        `StreamNotFinishedError` before the end (or after a `break`)."""
        if self._error is not None:
            raise self._error
        if self._response is None:
            raise StreamNotFinishedError(
                "stream.response is known once the iteration has ended; the stream "
                + ("was closed before its end" if self._closed else "has not ended yet")
            )
        return self._response

    def _failed(self, error: BaseException) -> BaseException:
        """What the iteration raises for the evaluation's `error` (always a `WinkError`,
        the loop wraps everything else, but for KeyboardInterrupt and SystemExit)."""
        if isinstance(error, WinkError):
            self._error = error
        return error

    def _check_open(self) -> None:
        if self._closed:
            raise StreamNotFinishedError("this stream is closed; streams are single use")


def _cancelled() -> StreamNotFinishedError:
    return StreamNotFinishedError("the stream's evaluation was cancelled")


class AsyncPromptStream(_StreamBase[OutputT]):
    """`async with adapter.stream_async(prompt, session=...) as stream:` then
    `async for event in stream`; `stream.response` after the loop. Single use."""

    def __init__(self, start: StreamStart[OutputT]) -> None:
        super().__init__(start)
        self._queue = EventQueue(_AHEAD)
        self._task: asyncio.Task[PromptResponse[OutputT]] | None = None

    async def __aenter__(self) -> Self:
        self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._batch:
            return self._batch.popleft()
        task = self._open()
        try:
            batch = await self._queue.get()
        except asyncio.CancelledError:
            task.cancel()  # the caller's task is cancelled: stop reading at once
            raise
        if batch is None:
            self._outcome(task)
            raise StopAsyncIteration
        self._batch.extend(batch)
        return self._batch.popleft()

    async def aclose(self) -> None:
        """Stop the evaluation if it still runs (closing its HTTP stream) and wait for
        it to have stopped. Idempotent."""
        task = self._task
        if task is None:
            self._closed = True
            return
        if not task.done():
            self._closed = True
            task.cancel()
            await asyncio.wait([task])
        if not task.cancelled() and task.exception() is None and self._response is None:
            self._response = task.result()  # closing is not failing: nothing raised

    def _outcome(self, task: asyncio.Task[PromptResponse[OutputT]]) -> None:
        """Record how the finished task ended; raise its error."""
        if task.cancelled():
            self._closed = True
            raise _cancelled()
        error = task.exception()
        if error is not None:
            raise self._failed(error)
        self._response = task.result()

    def _open(self) -> asyncio.Task[PromptResponse[OutputT]]:
        self._check_open()
        if self._task is None:
            task = asyncio.get_running_loop().create_task(self._start(self._queue))
            task.add_done_callback(self._queue.close)
            self._task = task
        return self._task

    def __del__(self) -> None:
        """A stream dropped unfinished (no `async with`): at least stop its evaluation."""
        task = getattr(self, "_task", None)
        if task is not None and not task.done():
            task.cancel()


class PromptStream(_StreamBase[OutputT]):
    """`with adapter.stream(prompt, session=...) as stream:` then `for event in stream`;
    `stream.response` after the loop. Single use.

    Its evaluation runs on the portal; the iteration waits here for each batch. Closing
    it (or dropping it: its finalizer) cancels the evaluation and waits for it to unwind,
    with no event loop run on this thread."""

    def __init__(self, start: StreamStart[OutputT]) -> None:
        super().__init__(start)
        self._queue = HandedQueue(_AHEAD)
        self._running: Running[PromptResponse[OutputT]] | None = None
        self._ended = False

    def __enter__(self) -> Self:
        self._open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> StreamEvent:
        if self._batch:
            return self._batch.popleft()
        running = self._open()
        if self._ended:  # it ended: iterating again yields nothing
            raise StopIteration
        batch = self._queue.take_blocking()
        if batch is None:
            self._ended = True
            self._outcome(running.future)
            raise StopIteration
        self._batch.extend(batch)
        return self._batch.popleft()

    def close(self) -> None:
        """Stop the evaluation if it still runs (closing its HTTP stream) and wait for it
        to have stopped. Idempotent."""
        running = self._running
        if running is None:
            self._closed = True
            return
        future = running.future
        if not future.done():
            self._closed = True
            running.cancel(wait=_CLOSE_WAIT)
        finished = future.done() and not future.cancelled() and future.exception() is None
        if finished and self._response is None:
            self._response = future.result()

    def __del__(self) -> None:
        """A stream dropped unfinished (a `break` without `with`) is closed here."""
        if getattr(self, "_running", None) is not None:
            with contextlib.suppress(Exception):  # never raise from a finalizer
                self.close()

    def _outcome(self, future: concurrent.futures.Future[PromptResponse[OutputT]]) -> None:
        """Record how the evaluation ended (its queue is closed: it is about to be
        over); raise its error."""
        error = future.exception()
        if error is None:
            self._response = future.result()
            return
        if isinstance(error, concurrent.futures.CancelledError):
            self._closed = True
            raise _cancelled()
        raise self._failed(error)

    def _open(self) -> Running[PromptResponse[OutputT]]:
        self._check_open()
        if self._running is None:
            # the task holds the queue, not the stream: a stream dropped unfinished is
            # collected, and its finalizer stops the task
            self._running = portal().start(_evaluate(self._start, self._queue))
        return self._running


async def _evaluate(start: StreamStart[OutputT], queue: HandedQueue) -> PromptResponse[OutputT]:
    try:
        return await start(queue)
    finally:
        queue.close()


_CLOSE_WAIT = 10.0  # seconds closing a sync stream waits for its evaluation to unwind
