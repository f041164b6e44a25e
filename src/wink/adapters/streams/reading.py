"""Reading one streamed round's body: `BodyReader`, and who drives it.

The body is read one of two ways, with the same `BodyReader` and the same outcome:

* pulled by the caller's own iteration (`SyncPieces` / `AsyncPieces`, given to
  `EventSink.pull`): each `next()` reads the next piece of the body and yields its
  events, with nothing handed between tasks or threads per piece. Used whenever the
  round needs no timer of its own (no deadline), which is the common case;
* pushed by the evaluation (`read_async`, `read_threaded`): each piece's events are
  sent to the sink; used with a deadline (its timeout must be able to cut a read) and for
  a caller's sync client under `stream_async` (read on a worker thread).

Events decoded before an error event still reach the caller, then the error is raised.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager

from ...core.errors import ThrottleError, WinkError
from ...core.messages import ModelResponse
from ...core.provider_errors import SdkErrors, map_sdk_errors, response_shape_error
from ...core.runtime import run_in_thread
from ...core.sse import SSEDecoder
from ...core.stream_events import EventSink, StreamEvent, UsageReported
from .base import StreamDecoder

__all__ = [
    "AsyncPieces",
    "BodyReader",
    "SyncPieces",
    "read_async",
    "read_errors",
    "read_threaded",
]


class BodyReader:
    """One round's body, piece by piece: SSE -> the wire's decoder -> stream events.

    `feed` and `finish` return the events found; a failure (an error event, a malformed
    event) is kept in `failure`, to be raised once those events are delivered. After
    `finish`, `response` holds the round's `ModelResponse` unless `failure` is set.
    """

    __slots__ = ("_decoder", "_prompt", "_secrets", "_sse", "failure", "response")

    def __init__(self, decoder: StreamDecoder, prompt_name: str, secrets: tuple[str, ...]) -> None:
        self._decoder = decoder
        self._prompt = prompt_name
        self._secrets = secrets
        self._sse = SSEDecoder()
        self.failure: WinkError | None = None
        self.response: ModelResponse | None = None

    def feed(self, piece: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        decoder = self._decoder
        try:
            for name, data in self._sse.feed(piece):
                decoder.feed(name, data, out)
        except WinkError as error:
            self.failure = error
        except ValueError as error:  # bad JSON, not UTF-8, not the documented shape
            self.failure = self._malformed(error)
        return out

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        try:
            for name, data in self._sse.close():
                self._decoder.feed(name, data, out)
            response = self._decoder.finish()
        except ThrottleError as error:
            foreign = self._sse.foreign
            self.failure = (  # not cut short, when it is not an event stream at all
                self._malformed(ValueError(f"the body is not an event stream: {foreign!r}"))
                if foreign is not None
                else error
            )
            return out
        except WinkError as error:
            self.failure = error
            return out
        except ValueError as error:
            self.failure = self._malformed(error)
            return out
        if self._decoder.usage_reported:
            out.append(UsageReported(response.usage))
        self.response = response
        return out

    def _malformed(self, error: ValueError) -> WinkError:
        failure = response_shape_error(
            self._prompt,
            f"a stream event is malformed: {type(error).__name__}: {error}"[:500],
            secrets=self._secrets,
        )
        failure.__cause__ = error
        return failure


# --- pulled by the caller's iteration


class SyncPieces:
    """A sync body the caller's `next()` reads (`EventSink.pull`)."""

    __slots__ = ("_pieces", "_prompt", "_reader", "_secrets")

    def __init__(
        self,
        pieces: Iterator[bytes],
        reader: BodyReader,
        prompt_name: str,
        secrets: tuple[str, ...],
    ) -> None:
        self._pieces = pieces
        self._reader = reader
        self._prompt = prompt_name
        self._secrets = secrets

    @property
    def response(self) -> ModelResponse | None:
        return self._reader.response

    def step(self) -> list[StreamEvent] | None:
        """The events of the next piece (maybe none); None once the round is complete
        (`response`). Raises the round's failure, mapped to the contract."""
        reader = self._reader
        if reader.failure is not None:
            raise reader.failure
        if reader.response is not None:
            return None
        try:
            piece = next(self._pieces, None)
        except Exception:
            with read_errors(self._prompt, self._secrets):
                raise
        return reader.finish() if piece is None else reader.feed(piece)


class AsyncPieces:
    """An async body the caller's `__anext__` reads (`EventSink.pull`)."""

    __slots__ = ("_pieces", "_prompt", "_reader", "_secrets")

    def __init__(
        self,
        pieces: AsyncIterator[bytes],
        reader: BodyReader,
        prompt_name: str,
        secrets: tuple[str, ...],
    ) -> None:
        self._pieces = pieces
        self._reader = reader
        self._prompt = prompt_name
        self._secrets = secrets

    @property
    def response(self) -> ModelResponse | None:
        return self._reader.response

    async def step(self) -> list[StreamEvent] | None:
        """`SyncPieces.step`, awaiting the read."""
        reader = self._reader
        if reader.failure is not None:
            raise reader.failure
        if reader.response is not None:
            return None
        try:
            piece = await anext(self._pieces, None)
        except Exception:
            with read_errors(self._prompt, self._secrets):
                raise
        return reader.finish() if piece is None else reader.feed(piece)


# --- pushed by the evaluation


async def read_async(
    pieces: AsyncIterator[bytes], reader: BodyReader, sink: EventSink
) -> ModelResponse:
    """Read an async body, sending each piece's events to `sink`."""
    async for piece in pieces:
        await _deliver(reader.feed(piece), reader, sink)
    return await _end(reader, sink)


async def read_threaded(
    pieces: Iterator[bytes], reader: BodyReader, sink: EventSink
) -> ModelResponse:
    """Read a sync body a piece at a time on a worker thread (never blocking a loop)."""
    while True:
        piece: bytes | None = await run_in_thread(next, pieces, None)
        if piece is None:
            break
        await _deliver(reader.feed(piece), reader, sink)
    return await _end(reader, sink)


async def _deliver(events: list[StreamEvent], reader: BodyReader, sink: EventSink) -> None:
    if events:
        await sink.send(events)
    if reader.failure is not None:
        raise reader.failure


async def _end(reader: BodyReader, sink: EventSink) -> ModelResponse:
    await _deliver(reader.finish(), reader, sink)
    response = reader.response
    assert response is not None  # finish() sets one of response and failure
    return response


# --- transport failures while the body is read


def _no_status(error: BaseException) -> object:  # pragma: no cover - no status class
    raise TypeError("no status exception while reading a body")


@functools.cache
def _read_errors() -> SdkErrors:
    import httpx2

    return SdkErrors(
        sdk="httpx2",
        status=(),
        facts=_no_status,  # type: ignore[arg-type]
        timeout=(httpx2.TimeoutException,),
        connection=(httpx2.TransportError, httpx2.StreamError),
        unreadable=(httpx2.DecodingError,),
        other=(),
    )


def read_errors(prompt_name: str, secrets: tuple[str, ...]) -> AbstractContextManager[None]:
    """httpx2's exceptions while a body is read -> the contract: a timeout or a reset is
    what `evaluate` makes of the same failure (retry-safe, kind `timeout` or
    `connection`)."""
    return map_sdk_errors(_read_errors(), prompt_name, secrets)
