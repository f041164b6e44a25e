"""The emulator's handler as an ASGI app, for in-process `httpx2.ASGITransport` clients.

With no socket, `drop_connection` (and the end of a `hang`) raise the client library's
own `RemoteProtocolError`, which the SDKs report as a connection error, as on a real
port. A `hang` cannot time out, because an ASGI transport applies no client timeout:
use the real port to test timeouts.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

from .server import RawRequest, Reply

__all__ = ["ASGIApp", "make_asgi_app"]

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Message]],
        Callable[[Message], Awaitable[None]],
    ],
    Awaitable[None],
]


def make_asgi_app(handler: Callable[[RawRequest], Reply]) -> ASGIApp:
    """Wrap a request handler as an ASGI 3 application."""

    async def app(
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers", []):
            name, value = (
                bytes(raw_name).decode("latin-1").lower(),
                bytes(raw_value).decode("latin-1"),
            )
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        raw_path = scope.get("raw_path")  # as sent, like the socket server's (a signed path)
        path = bytes(raw_path).decode("latin-1") if raw_path else str(scope["path"])
        request = RawRequest(str(scope["method"]).upper(), path, query, headers, bytes(body))
        reply = handler(request)
        await asyncio.sleep(reply.delay + (reply.hang_seconds if reply.action == "hang" else 0.0))
        if reply.action == "hang":
            raise _protocol_error("Server disconnected without sending a response.")
        encoded = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in reply.headers.items()
            if name not in ("content-length", "transfer-encoding")
        ]
        if reply.pieces is None:
            encoded.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": encoded})
        if reply.pieces is not None:
            await _send_pieces(reply, send)
            return
        if reply.action == "drop":
            await send(
                {
                    "type": "http.response.body",
                    "body": reply.body[: len(reply.body) // 2],
                    "more_body": True,
                }
            )
            raise _protocol_error("peer closed connection without sending complete message body")
        await send({"type": "http.response.body", "body": reply.body})

    return app


async def _send_pieces(reply: Reply, send: Callable[[Message], Awaitable[None]]) -> None:
    """A streamed body, piece by piece; a reset is the client library's protocol error."""
    pieces = reply.pieces or ()
    stop = len(pieces) if reply.reset_after is None else min(reply.reset_after, len(pieces))
    for number, piece in enumerate(pieces[:stop]):
        if number and reply.piece_delay > 0:
            await asyncio.sleep(reply.piece_delay)
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    if reply.reset_after is not None:
        raise _protocol_error("peer closed connection without sending complete message body")
    await send({"type": "http.response.body", "body": b""})


def _protocol_error(message: str) -> Exception:
    """A `RemoteProtocolError` of whichever client libraries are loaded (httpx2, httpx).

    The transports pass app exceptions through unchanged; raising the client's own
    transport error lets the SDK wrap it the way it wraps a real dropped connection.
    """
    loaded = tuple(name for name in ("httpx2", "httpx") if name in sys.modules)
    return _protocol_error_type(loaded)(message)


@functools.cache
def _protocol_error_type(modules: tuple[str, ...]) -> type[Exception]:
    bases = tuple(
        cast(type[Exception], sys.modules[name].RemoteProtocolError)
        for name in modules
        if hasattr(sys.modules[name], "RemoteProtocolError")
    )
    if not bases:
        return ConnectionResetError
    return type("EmulatedRemoteProtocolError", bases, {})
