"""The adapter's streaming half: the streamed exchange and its transport.

A mixin of `ProviderAdapter` (kept apart so base.py stays the adapter's core). It adds
no loop: `stream()` (`Evaluator`) runs `wink.core.loop.run_evaluation` with an event
channel as its sink, and the runner calls `_stream_exchange` for each round instead of
`_exchange`. The wire format's decoder (`adapters/streams/`) reads the body; the transport is the
Stainless SDKs' documented raw call with `stream=True` (Google overrides it, as it
overrides `_post`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..core.errors import ConfigurationError, PromptEvaluationError
from ..core.messages import ModelRequest, ModelResponse
from ..core.runtime import run_in_thread
from ..core.throttle import RateLimitHeaders, rate_limit_info_from_headers

if TYPE_CHECKING:
    from ..core.clients import Lease
    from ..core.runner import OnOpen
    from ..core.stream_events import EventSink
    from .base import EncodedRequest
    from .streams.base import StreamFormat

__all__ = ["StreamingMixin"]


class _Adapter(Protocol):
    """What the streaming half uses of `ProviderAdapter`."""

    provider: ClassVar[str]
    rate_limit_headers: ClassVar[RateLimitHeaders]
    _response_type: ClassVar[type]

    @property
    def _secrets(self) -> tuple[str, ...]: ...

    def _clients_lease(self, request: ModelRequest) -> Lease: ...

    def _wire(
        self, request: ModelRequest, streamed: StreamFormat | None = None
    ) -> EncodedRequest: ...

    def _request_timeout(self, request: ModelRequest) -> float: ...

    def _map_errors(self, prompt_name: str) -> AbstractContextManager[None]: ...

    def _exchange(self, request: ModelRequest) -> Awaitable[ModelResponse]: ...

    def _open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any: ...

    def _open_stream_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> Awaitable[Any]: ...


class StreamingMixin:
    """The streamed exchange and its transport (see the module doc)."""

    async def _stream_exchange(
        self: _Adapter, request: ModelRequest, sink: EventSink, opened: OnOpen | None = None
    ) -> ModelResponse:
        """`_exchange`, streamed: the body is read as it arrives, through the wire
        format's decoder into `sink`, and closed whatever happens (cancellation too).
        `opened` hears of the response head (its rate headers) before the body is read.
        An adapter with no streaming wire sends its whole answer as events."""
        from .streams import stream_format
        from .streams.base import events_of
        from .streams.reading import (
            AsyncPieces,
            BodyReader,
            SyncPieces,
            read_async,
            read_errors,
            read_threaded,
        )

        streamed = stream_format(self.provider)
        if streamed is None:
            response = await self._exchange(request)
            await sink.send(events_of(response))
            return response
        prompt, secrets = request.prompt_name, self._secrets
        lease = self._clients_lease(request)
        wire = self._wire(request, streamed)
        reader = BodyReader(streamed.decoder(prompt, secrets), prompt, secrets)
        time_limit = self._request_timeout(request)
        timed = request.deadline is not None  # a deadline must be able to cut every read
        inline = lease.inline and not timed  # as `_exchange` decides
        try:
            with self._map_errors(prompt):
                if not lease.sync:
                    http = await self._open_stream_async(lease.client, wire, time_limit)
                elif inline:
                    http = self._open_stream(lease.client, wire, time_limit)
                else:
                    http = await run_in_thread(self._open_stream, lease.client, wire, time_limit)
        except ConfigurationError as error:  # a client that cannot serve: nothing was sent
            raise PromptEvaluationError(str(error), prompt_name=prompt, phase="request") from error
        rate_limit = rate_limit_info_from_headers(http.headers, self.rate_limit_headers)
        try:
            if opened is not None:
                await opened(rate_limit)
            with read_errors(prompt, secrets):
                if not lease.sync and not timed and sink.pulls == "async":
                    pieces = AsyncPieces(http.aiter_bytes(), reader, prompt, secrets)
                    response = await sink.pull(pieces)
                elif not lease.sync:
                    response = await read_async(http.aiter_bytes(), reader, sink)
                elif inline and sink.pulls == "sync":
                    response = await sink.pull(
                        SyncPieces(http.iter_bytes(), reader, prompt, secrets)
                    )
                else:
                    response = await read_threaded(http.iter_bytes(), reader, sink)
        finally:  # a cancelled or failed read closes the connection here, at once
            if lease.sync:
                http.close()
            else:
                await http.aclose()
        return response if rate_limit is None else replace(response, rate_limit=rate_limit)

    # ---- the transport: the Stainless SDKs' documented raw call, body unread

    def _open_stream(self: _Adapter, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        """`_post` with the body left unread: with `stream=True` and `cast_to` its httpx
        Response, the SDK returns the response once its head is in (an error status
        raises the SDK's exception, read and mapped as for `_post`)."""
        return client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
            stream=True,
        )

    async def _open_stream_async(
        self: _Adapter, client: Any, wire: EncodedRequest, time_limit: float
    ) -> Any:
        """`_open_stream` with an async client."""
        return await client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
            stream=True,
        )
