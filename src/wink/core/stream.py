"""`adapter.stream()` / `adapter.stream_async()`: the one loop, its events yielded.

The evaluation is the same coroutine `evaluate()` runs (`wink.core.loop`), started as a
task with an event channel as its sink. While a round's body streams, the caller's own
iteration reads it (`EventChannel.pull`): each `next()` reads a piece and yields its
events, nothing is handed between tasks per piece, and a caller that stops reading stops
the reading. Otherwise (the loop's own events, a round with a deadline) the channel is
lock-step: the producer waits until the caller has taken what it sent. Either way no
buffer grows without bound. Closing the stream (leaving the `with` block, a
`break` inside it, an exception, a cancelled task) cancels the evaluation: its HTTP
response is closed in its `finally`, a tool round cut short is rolled back, and nothing
is left running.

Sync streams run the evaluation on a private loop stepped by the caller's thread
(`SteppedLoop`): the loop runs only while `next()` waits for an event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from types import TracebackType
from typing import Any, Generic, Literal, Self

from .errors import StreamNotFinishedError, WinkError
from .loop import PromptResponse
from .messages import ModelResponse
from .prompt import OutputT
from .runtime import SteppedLoop
from .stream_events import AsyncPull, StreamEvent, SyncPull

__all__ = ["AsyncPromptStream", "EventChannel", "PromptStream", "StreamStart"]

StreamStart = Callable[["EventChannel"], Coroutine[Any, Any, PromptResponse[OutputT]]]
"""Starts the evaluation with the channel as its sink (the adapter binds the rest)."""


class EventChannel:
    """The events between the evaluation (`put`, `send`) and the caller (`take`, `wait`).

    `count` is how many events were put so far (the loop compares it before and after
    an attempt to know whether the caller has seen part of a round).
    """

    __slots__ = ("_items", "_pulled", "_resume", "_source", "_waiter", "count", "pulls")

    def __init__(self, pulls: Literal["sync", "async"]) -> None:
        self._items: deque[StreamEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None  # the caller waits for events
        self._resume: asyncio.Future[None] | None = None  # the producer waits for the caller
        self._source: SyncPull | AsyncPull | None = None  # a body the caller reads
        self._pulled: asyncio.Future[ModelResponse] | None = None
        self.count = 0
        self.pulls: Literal["sync", "async"] | None = pulls

    # ---- the producer's side (`EventSink`)

    def put(self, events: Iterable[StreamEvent]) -> None:
        """Queue `events` and wake the caller; never waits."""
        before = len(self._items)
        self._items.extend(events)
        added = len(self._items) - before
        if added:
            self.count += added
            self.wake()

    async def send(self, events: list[StreamEvent]) -> None:
        """Queue `events`, then wait until the caller has taken them all."""
        if not events:
            return
        self.put(events)
        resume = asyncio.get_running_loop().create_future()
        self._resume = resume
        try:
            await resume
        finally:
            self._resume = None

    async def pull(self, source: SyncPull | AsyncPull) -> ModelResponse:
        """Hand a round's body to the caller's iteration; the round's response once the
        caller has read it all (or its failure, raised here)."""
        pulled: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        self._source, self._pulled = source, pulled
        self.wake()
        try:
            return await pulled
        finally:
            self._source = self._pulled = None

    # ---- the caller's side

    @property
    def source(self) -> SyncPull | AsyncPull | None:
        """The body the caller should read now, if any."""
        pulled = self._pulled
        return self._source if pulled is not None and not pulled.done() else None

    def pulled(self, events: list[StreamEvent] | None, source: SyncPull | AsyncPull) -> None:
        """Record what one `step` of `source` gave: events, or the end of the body."""
        if events:
            self._items.extend(events)
            self.count += len(events)
        elif events is None:
            pulled = self._pulled
            if pulled is not None and not pulled.done():
                response = source.response
                assert response is not None  # a finished body has its response
                pulled.set_result(response)

    def pull_failed(self, error: BaseException) -> None:
        """The body failed: the evaluation decides (retry, or fail the stream)."""
        pulled = self._pulled
        if pulled is not None and not pulled.done():
            pulled.set_exception(error)

    def take(self) -> StreamEvent | None:
        """The next queued event, or None."""
        items = self._items
        return items.popleft() if items else None

    def waiter(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done when events arrive or `wake` is called (the task ended); the
        producer, if it waits for the caller, is released."""
        future = loop.create_future()
        self._waiter = future
        resume = self._resume
        if resume is not None and not resume.done():
            resume.set_result(None)
        return future

    def wake(self, *_: object) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


class _StreamBase(Generic[OutputT]):
    """What both forms share: the channel, the task's outcome, `response`."""

    _pulls: Literal["sync", "async"]

    def __init__(self, start: StreamStart[OutputT]) -> None:
        self._start = start
        self._channel = EventChannel(self._pulls)
        self._task: asyncio.Task[PromptResponse[OutputT]] | None = None
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

    def _outcome(self, task: asyncio.Task[PromptResponse[OutputT]]) -> None:
        """Record how the finished task ended; raise its error (always a `WinkError`:
        the loop wraps everything else)."""
        if task.cancelled():
            self._closed = True
            raise StreamNotFinishedError("the stream's evaluation was cancelled")
        error = task.exception()
        if error is None:
            self._response = task.result()
            return
        if isinstance(error, WinkError):
            self._error = error
            raise error
        raise error  # KeyboardInterrupt, SystemExit: not ours to translate


class AsyncPromptStream(_StreamBase[OutputT]):
    """`async with adapter.stream_async(prompt, session=...) as stream:` then
    `async for event in stream`; `stream.response` after the loop. Single use."""

    _pulls: Literal["sync", "async"] = "async"

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
        task = self._task if self._task is not None else self._open()
        channel = self._channel
        while True:
            event = channel.take()
            if event is not None:
                return event
            try:
                source = channel.source
                if source is not None:
                    await self._read(channel, source)
                    continue
                if task.done():
                    self._outcome(task)
                    raise StopAsyncIteration
                await channel.waiter(asyncio.get_running_loop())
            except asyncio.CancelledError:
                task.cancel()  # the caller's task is cancelled: stop reading at once
                raise

    @staticmethod
    async def _read(channel: EventChannel, source: SyncPull | AsyncPull) -> None:
        try:
            events = source.step()
            if not isinstance(events, list | None):
                events = await events
        except Exception as error:
            channel.pull_failed(error)
            return
        channel.pulled(events, source)

    async def aclose(self) -> None:
        """Stop the evaluation if it still runs (closing its HTTP stream) and wait for
        it to have stopped. Idempotent."""
        task = self._task
        if task is None or task.done():
            self._closed = self._closed or (task is None)
            if task is not None:
                self._settle(task)
            return
        self._closed = True
        task.cancel()
        await asyncio.wait([task])
        self._settle(task)

    def _open(self) -> asyncio.Task[PromptResponse[OutputT]]:
        if self._closed:
            raise StreamNotFinishedError("this stream is closed; streams are single use")
        if self._task is None:
            task = asyncio.get_running_loop().create_task(self._start(self._channel))
            task.add_done_callback(self._channel.wake)
            self._task = task
        return self._task

    def __del__(self) -> None:
        """A stream dropped unfinished (no `async with`): at least stop its evaluation."""
        task = getattr(self, "_task", None)
        if task is not None and not task.done():
            task.cancel()

    def _settle(self, task: asyncio.Task[PromptResponse[OutputT]]) -> None:
        """Read a finished task's outcome without raising it (closing is not failing)."""
        if not task.cancelled() and task.exception() is None and self._response is None:
            self._response = task.result()


class PromptStream(_StreamBase[OutputT]):
    """`with adapter.stream(prompt, session=...) as stream:` then `for event in stream`;
    `stream.response` after the loop. Single use."""

    _pulls: Literal["sync", "async"] = "sync"

    def __init__(self, start: StreamStart[OutputT]) -> None:
        super().__init__(start)
        self._stepper: SteppedLoop | None = None

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
        task = self._task if self._task is not None else self._open()
        channel = self._channel
        while True:
            event = channel.take()
            if event is not None:
                return event
            source = channel.source
            if source is not None:
                try:
                    events = source.step()
                except Exception as error:
                    channel.pull_failed(error)
                    continue
                if isinstance(events, list | None):
                    channel.pulled(events, source)
                    continue
                events.close()  # pragma: no cover - an async body is never given to a sync stream
            if task.done():
                try:
                    self._outcome(task)
                finally:
                    self._shut()
                raise StopIteration
            stepper = self._stepper
            assert stepper is not None
            stepper.run_until(channel.waiter(stepper.loop))

    def close(self) -> None:
        """Stop the evaluation if it still runs (closing its HTTP stream), close the
        clients made for it and its private loop. Idempotent."""
        task = self._task
        if task is not None and not task.done():
            self._closed = True
        self._shut()
        done = task is not None and task.done() and not task.cancelled()
        if task is not None and done and task.exception() is None and self._response is None:
            self._response = task.result()

    def __del__(self) -> None:
        """A stream dropped unfinished (a `break` without `with`) is closed here."""
        if getattr(self, "_stepper", None) is not None:
            with contextlib.suppress(Exception):  # never raise from a finalizer
                self.close()

    def _open(self) -> asyncio.Task[PromptResponse[OutputT]]:
        if self._closed:
            raise StreamNotFinishedError("this stream is closed; streams are single use")
        if self._task is None:
            stepper = SteppedLoop()
            self._stepper = stepper
            task = stepper.start(self._start(self._channel))
            task.add_done_callback(self._channel.wake)
            self._task = task
        return self._task

    def _shut(self) -> None:
        stepper, self._stepper = self._stepper, None
        if stepper is not None:
            stepper.close()
