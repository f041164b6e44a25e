"""A minimal HTTP/1.1 server on raw asyncio, so faults can act on the socket itself.

It speaks just what the SDKs need: keep-alive, `Content-Length` bodies, chunked bodies
for streams, one request at a time per connection. A handler maps a `RawRequest` to a
`Reply`; the reply's `action` says whether to answer, drop the connection mid-body, or
hang; its `pieces`, if any, are sent as a chunked body, `piece_delay` apart, and
`reset_after` resets the connection after that many pieces.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Literal

__all__ = ["RawRequest", "Reply", "ReplyAction", "ServerThread", "serve_forever"]

ReplyAction = Literal["respond", "drop", "hang"]
Handler = Callable[["RawRequest"], "Reply"]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
_REASONS = {529: "Site is overloaded", 418: "wink emulator internal error"}  # internal.py


@dataclass(frozen=True, slots=True)
class RawRequest:
    """One parsed request; header names are lower-case, repeated headers joined by ", "."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """What to send back, after `delay` seconds.

    `drop` sends the head and half of `body`, then closes; `hang` sends nothing for
    `hang_seconds`, then closes. With `pieces`, the body is those pieces, chunked.
    """

    status: int
    headers: dict[str, str]
    body: bytes
    delay: float = 0.0
    action: ReplyAction = "respond"
    hang_seconds: float = 0.0
    pieces: tuple[bytes, ...] | None = None
    piece_delay: float = 0.0
    reset_after: int | None = None


def _chunk(piece: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(piece), piece)


_LAST_CHUNK = b"0\r\n\r\n"


def _reason(status: int) -> str:
    if status in _REASONS:
        return _REASONS[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


class _DateCache:
    """The `date` header changes once a second; format it once a second."""

    def __init__(self) -> None:
        self._second = -1
        self._value = ""

    def get(self) -> str:
        now = int(time.time())
        if now != self._second:
            self._second, self._value = now, formatdate(now, usegmt=True)
        return self._value


_DATE = _DateCache()


_FRAMING = frozenset({"content-length", "transfer-encoding"})


def _encode_head(status: int, headers: dict[str, str], length: int | None, close: bool) -> bytes:
    """Status line and headers; the framing (`content-length`, or chunked when `length`
    is None) and `date` are always ours."""
    lines = [f"HTTP/1.1 {status} {_reason(status)}", f"date: {_DATE.get()}"]
    lines.extend(f"{name}: {value}" for name, value in headers.items() if name not in _FRAMING)
    lines.append("transfer-encoding: chunked" if length is None else f"content-length: {length}")
    lines.append("connection: close" if close else "connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class _Connection(asyncio.Protocol):
    """One client connection: parse, hand to the handler, write (or misbehave)."""

    def __init__(self, handler: Handler, live: set[_Connection]) -> None:
        self._handler = handler
        self._live = live
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._live.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closing = True
        self._live.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._timer is None:
            self._serve_buffered()

    def close(self) -> None:
        if self._transport is not None and not self._closing:
            self._closing = True
            self._transport.abort()

    def _serve_buffered(self) -> None:
        while not self._closing and self._timer is None:
            parsed = self._parse()
            if parsed is None:
                return
            request, close = parsed
            try:
                reply = self._handler(request)
            except Exception as exc:  # a handler bug must not kill the connection silently
                text = f"wink emulator handler failed: {exc!r}".encode()
                reply = Reply(500, {"content-type": "text/plain"}, text)
            if reply.action == "hang":
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(reply.delay + reply.hang_seconds, self.close)
                return
            if reply.delay > 0:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(reply.delay, self._send_later, reply, close)
                return
            self._send(reply, close)

    def _send_later(self, reply: Reply, close: bool) -> None:
        self._timer = None
        self._send(reply, close)
        self._serve_buffered()

    def _send(self, reply: Reply, close: bool) -> None:
        transport = self._transport
        if transport is None or self._closing:
            return
        if reply.pieces is not None:
            transport.write(_encode_head(reply.status, reply.headers, None, close))
            self._stream(reply, 0, close, scheduled=False)
            return
        body = reply.body
        head = _encode_head(reply.status, reply.headers, len(body), close)
        if reply.action == "drop":
            transport.write(head + body[: len(body) // 2])
            self._closing = True
            transport.close()
            return
        transport.write(head + body)
        if close:
            self._closing = True
            transport.close()

    def _stream(self, reply: Reply, start: int, close: bool, *, scheduled: bool = True) -> None:
        """Send the pieces from `start`: all at once without a delay, else one now and
        the next `piece_delay` later (the connection serves nothing else meanwhile)."""
        self._timer = None
        transport = self._transport
        if transport is None or self._closing:
            return
        pieces = reply.pieces or ()
        stop = len(pieces) if reply.reset_after is None else min(reply.reset_after, len(pieces))
        end = stop if reply.piece_delay <= 0 else min(start + 1, stop)
        transport.write(b"".join(_chunk(piece) for piece in pieces[start:end] if piece))
        if end < stop:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(reply.piece_delay, self._stream, reply, end, close)
            return
        self._timer = None
        if reply.reset_after is not None:
            self._reset()
            return
        transport.write(_LAST_CHUNK)
        if close:
            self._closing = True
            transport.close()
        elif scheduled:  # the requests that arrived meanwhile
            self._serve_buffered()

    def _reset(self) -> None:
        """Close with a TCP reset once what was written is out (SO_LINGER 0)."""
        transport = self._transport
        if transport is None:
            return
        self._closing = True
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.close()

    def _parse(self) -> tuple[RawRequest, bool] | None:
        """The next complete request in the buffer (and whether to close after it)."""
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > _MAX_HEAD:
                self._refuse(431, "request head too large")
            return None
        try:
            head = bytes(self._buffer[:end]).decode("latin-1")
            request_line, *header_lines = head.split("\r\n")
            method, target, version = request_line.split(" ", 2)
            headers: dict[str, str] = {}
            for line in header_lines:
                name, _, value = line.partition(":")
                key, value = name.strip().lower(), value.strip()
                headers[key] = f"{headers[key]}, {value}" if key in headers else value
            length = int(headers.get("content-length", "0"))
        except ValueError:
            self._refuse(400, "malformed request")
            return None
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._refuse(411, "chunked request bodies are not supported; send Content-Length")
            return None
        if length < 0 or length > _MAX_BODY:
            self._refuse(413, "request body too large")
            return None
        total = end + 4 + length
        if len(self._buffer) < total:
            return None
        body = bytes(self._buffer[end + 4 : total])
        del self._buffer[:total]
        path, _, query = target.partition("?")
        connection = headers.get("connection", "").lower()
        close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        return RawRequest(method.upper(), path, query, headers, body), close

    def _refuse(self, status: int, message: str) -> None:
        self._send(Reply(status, {"content-type": "text/plain"}, message.encode()), close=True)


class ServerThread:
    """Runs the server on its own event loop in a daemon thread, so any caller can use it."""

    def __init__(self, handler: Handler, host: str, port: int) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._live: set[_Connection] = set()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> int:
        """Bind and serve; returns the bound port once connections are accepted."""
        self._thread = threading.Thread(target=self._run, name="wink-emulator", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self.port

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(self._bind(loop))
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _bind(self, loop: asyncio.AbstractEventLoop) -> asyncio.Server:
        server = await loop.create_server(
            lambda: _Connection(self._handler, self._live),
            self._host,
            self._port,
            backlog=2048,
            reuse_address=True,
        )
        self.port = server.sockets[0].getsockname()[1]
        return server

    @property
    def open_connections(self) -> int:
        """Client connections open right now."""
        return len(self._live)

    def stop(self) -> None:
        """Close the listener and every open connection (hanging ones included)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._shutdown)
        thread.join(timeout=10)

    def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for connection in list(self._live):
            connection.close()
        assert self._loop is not None
        self._loop.stop()


def serve_forever(handler: Handler, host: str, port: int, on_ready: Callable[[int], None]) -> None:
    """Run the server in the calling thread until KeyboardInterrupt."""

    async def main() -> None:
        live: set[_Connection] = set()
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _Connection(handler, live), host, port, backlog=2048, reuse_address=True
        )
        on_ready(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
