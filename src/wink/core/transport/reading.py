"""Reading one streamed round's body: the wire's framing -> its decoder -> stream events.

One way for every transport: the body's pieces come as an async iterator
(`wink.core.transport.http.OpenStream`), each piece's events go to the sink as one batch.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractContextManager

from ..foundation.errors import ThrottleError, WinkError
from ..foundation.events import EventSink, StreamEvent, UsageReported
from ..foundation.messages import ModelResponse
from ..foundation.pricing import Pricer
from .decoding import Frame, Framing, StreamDecoder, decode_json
from .errors import SdkErrors, map_sdk_errors, response_shape_error
from .sse import SSEDecoder

__all__ = ["BodyReader", "read_errors", "read_stream"]


class BodyReader:
    """One round's body, piece by piece: the wire's framing (SSE unless it says
    otherwise) -> its decoder -> stream events.

    `feed` and `finish` return the events found; a failure (an error event, a malformed
    event) is kept in `failure`, to be raised once those events are delivered. After
    `finish`, `response` holds the round's `ModelResponse` unless `failure` is set, priced
    by `pricer` (if any), like its `UsageReported`.
    """

    __slots__ = ("_decoder", "_framing", "_pricer", "_prompt", "_secrets", "failure", "response")

    def __init__(
        self,
        decoder: StreamDecoder,
        prompt_name: str,
        secrets: tuple[str, ...],
        framing: Framing | None = None,
        pricer: Pricer | None = None,
    ) -> None:
        self._decoder = decoder
        self._prompt = prompt_name
        self._secrets = secrets
        self._framing: Framing = framing if framing is not None else SSEDecoder()
        self._pricer = pricer
        self.failure: WinkError | None = None
        self.response: ModelResponse | None = None

    def feed(self, piece: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        try:
            self._decode(self._framing.feed(piece), out)
        except WinkError as error:
            self.failure = error
        except ValueError as error:  # bad JSON, not UTF-8, not the documented shape
            self.failure = self._malformed(error)
        return out

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        try:
            self._decode(self._framing.close(), out)
            response = self._decoder.finish()
        except ThrottleError as error:
            foreign = self._framing.foreign
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
        pricer = self._pricer
        if pricer is not None:
            response = pricer.tag(response)
        if self._decoder.usage_reported:
            out.append(UsageReported(response.usage, response.price_tag))
        self.response = response
        return out

    def _decode(self, events: Sequence[Frame], out: list[StreamEvent]) -> None:
        decoder = self._decoder
        end = decoder.end_marker
        for name, data in events:
            decoder.feed(name, None if data == end else decode_json(data), out)

    def _malformed(self, error: ValueError) -> WinkError:
        failure = response_shape_error(
            self._prompt,
            f"a stream event is malformed: {type(error).__name__}: {error}"[:500],
            secrets=self._secrets,
        )
        failure.__cause__ = error
        return failure


# --- reading a body


async def read_stream(
    pieces: AsyncGenerator[bytes], reader: BodyReader, sink: EventSink
) -> ModelResponse:
    """Read a body, sending each piece's events to `sink`; the round's response at the
    end. Events decoded before a failure reach the caller first, then it is raised."""
    async with contextlib.aclosing(pieces):
        async for piece in pieces:
            await _deliver(reader.feed(piece), reader, sink)
    await _deliver(reader.finish(), reader, sink)
    response = reader.response
    assert response is not None  # finish() sets one of response and failure
    return response


async def _deliver(events: list[StreamEvent], reader: BodyReader, sink: EventSink) -> None:
    if events:
        await sink.send(events)
    if reader.failure is not None:
        raise reader.failure


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
