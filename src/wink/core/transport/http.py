"""The transport: how one encoded request reaches the provider and its answer comes back.

The loop and the runner see one interface (`Transport`): `post` for a whole answer,
`open_stream` for a body read piece by piece, both awaited. Every evaluation, sync or
async, runs on an event loop (yours, or the portal of the sync entry points: see
`wink.core.foundation.runtime`), so one implementation carries wink's own clients:

* `AsyncTransport`: the SDK's async client of the running loop;
* `SyncTransport`: only for a sync SDK client the caller passed in (`client=`), each of
  whose blocking calls runs on a worker thread, so the loop is never blocked and the
  deadline can always cut the wait.

The HTTP calls themselves are the provider's (`HttpCalls`, each wire's own: the Stainless
SDKs' raw call is in `wink.providers.stainless`), so a provider whose SDK has no raw call
can bring its own; their sync half serves a caller's sync client.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..foundation.runtime import run_in_thread

__all__ = [
    "AsyncTransport",
    "EncodedRequest",
    "HttpCalls",
    "OpenStream",
    "SyncTransport",
    "Transport",
    "WireRequest",
]


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One request as the provider's API takes it: a path (or URL) and a JSON body;
    `headers`: what this request needs besides the client's (an `anthropic-beta` flag)."""

    path: str
    body: Mapping[str, Any]
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class EncodedRequest:
    """A `WireRequest` with its body encoded as strict JSON, UTF-8, once; `headers`: what
    the host's signer adds to this request (None: nothing)."""

    path: str
    content: bytes
    headers: Mapping[str, str] | None = None


class OpenStream(Protocol):
    """A streamed answer whose head has arrived: its headers, then its body in pieces."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    def pieces(self) -> AsyncGenerator[bytes]: ...

    async def aclose(self) -> None: ...


class Transport(Protocol):
    """What the runner sends through; raises the SDK's own exceptions (mapped above it).

    `call(fn)` runs `fn(client)`, one of the SDK's own documented calls (a batch's file
    upload, a retrieve), the way this transport runs its client: awaited for an async
    client, on a worker thread for a sync one.
    """

    async def post(
        self, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Mapping[str, str]]: ...

    async def open_stream(self, wire: EncodedRequest, time_limit: float) -> OpenStream: ...

    async def call(self, fn: Callable[[Any], Any]) -> Any: ...


class HttpCalls(Protocol):
    """A provider's HTTP calls, with an async client (wink's own, or the caller's) and
    with a sync one (a caller's only).

    `open_stream*` return the response with its body unread: an httpx2 `Response`
    (`headers`, `iter_bytes` / `aiter_bytes`, `close` / `aclose`); an error status raises
    before.
    """

    def post(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Mapping[str, str]]: ...

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Mapping[str, str]]: ...

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any: ...

    async def open_stream_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> Any: ...


class AsyncTransport:
    """An async client on the running loop."""

    __slots__ = ("_calls", "_client")

    def __init__(self, calls: HttpCalls, client: Any) -> None:
        self._calls = calls
        self._client = client

    async def post(
        self, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Mapping[str, str]]:
        return await self._calls.post_async(self._client, wire, time_limit)

    async def open_stream(self, wire: EncodedRequest, time_limit: float) -> OpenStream:
        return _AsyncBody(await self._calls.open_stream_async(self._client, wire, time_limit))

    async def call(self, fn: Callable[[Any], Any]) -> Any:
        result = fn(self._client)
        return await result if inspect.isawaitable(result) else result


class SyncTransport:
    """A sync client the caller passed in: each blocking call on a worker thread, so the
    loop runs on and the deadline can cut the wait."""

    __slots__ = ("_calls", "_client")

    def __init__(self, calls: HttpCalls, client: Any) -> None:
        self._calls = calls
        self._client = client

    async def post(
        self, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Mapping[str, str]]:
        return await run_in_thread(self._calls.post, self._client, wire, time_limit)

    async def open_stream(self, wire: EncodedRequest, time_limit: float) -> OpenStream:
        response = await run_in_thread(self._calls.open_stream, self._client, wire, time_limit)
        return _SyncBody(response)

    async def call(self, fn: Callable[[Any], Any]) -> Any:
        return await run_in_thread(fn, self._client)


class _AsyncBody:
    __slots__ = ("_response",)

    def __init__(self, response: Any) -> None:
        self._response = response

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    def pieces(self) -> AsyncGenerator[bytes]:
        return self._response.aiter_bytes()

    async def aclose(self) -> None:
        await self._response.aclose()


class _SyncBody:
    __slots__ = ("_response",)

    def __init__(self, response: Any) -> None:
        self._response = response

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def pieces(self) -> AsyncGenerator[bytes]:
        iterator: Iterator[bytes] = self._response.iter_bytes()
        while True:
            piece: bytes | None = await run_in_thread(next, iterator, None)
            if piece is None:
                return
            yield piece

    async def aclose(self) -> None:
        self._response.close()  # returns the connection to the pool: no network wait
