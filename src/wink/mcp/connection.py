"""The live side of an MCP server: the SDK's client session, on wink's own event loop.

Why there: an MCP session (the SDK's anyio task groups and streams) belongs to the event
loop that opened it, and evaluations run on many loops: every sync call on the portal
(`wink.core.foundation.runtime`), `evaluate_async()` and `stream_async()` on yours
(docs/runtime.md). So a server's session lives on the portal for as long as it is open;
every listing and every call is started there (`Connection.start`) and awaited where it
was made. One session serves all of them, concurrently (the SDK matches answers to
requests).

The session is held open by a keeper task (`_Link`): the SDK's client is entered and left
in that one task, as anyio requires, and a transport that breaks (an HTTP server gone)
ends the keeper, not the calls waiting on it: they get the SDK's "connection closed"
answer, and the model a failed result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp
import mcp.types

from ..core.foundation.errors import ToolSourceError
from ..core.foundation.results import ToolResult
from ..core.foundation.runtime import Running, portal
from .results import Redactor, describe_error, to_tool_result

__all__ = ["Connection", "Endpoint"]

T = TypeVar("T")

logger = logging.getLogger("wink.mcp")

_CLOSE_WAIT = 10.0  # seconds a session may take to close (the SDK stops a stdio server in ~6)
_MAX_PAGES = 100  # of a tool listing: a server that pages forever cannot hang an evaluation


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What a connection knows of its server: its name, what it is (`target`: "the
    command 'python server.py'", "the URL http://..."), its timeouts, how to mask its
    secrets, how to open the SDK's client (entered on the stack it is given), and how it
    comes back after it died (`comeback`: "restarted", "reconnected")."""

    name: str
    target: str
    timeout: float
    connect_timeout: float
    redact: Redactor
    open: Callable[[AsyncExitStack], Awaitable[mcp.Client]]
    comeback: str


class _Link:
    """One connected SDK client, held open by its keeper task until `close()`.

    `dead` once the session is known to be over: the keeper ended (the transport broke)
    or a request was answered "connection closed" (a stdio server exited).
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.client: mcp.Client | None = None
        self.dead = False
        self._stop = asyncio.Event()
        self._keeper: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Start the server (or reach it) and shake hands, within the timeout; raises
        `ToolSourceError` naming the command or URL."""
        endpoint = self.endpoint
        ready: asyncio.Future[mcp.Client] = asyncio.get_running_loop().create_future()
        self._keeper = asyncio.create_task(self._keep(ready))
        try:
            async with asyncio.timeout(endpoint.connect_timeout):
                self.client = await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise ToolSourceError(
                f"MCP server {endpoint.name!r} ({endpoint.target}) did not finish connecting "
                f"within {endpoint.connect_timeout:g} s (connect_timeout=)",
                source=endpoint.name,
            ) from None
        except Exception as error:
            await self.close()
            reason = endpoint.redact(describe_error(error))
            raise ToolSourceError(
                f"MCP server {endpoint.name!r} could not be started or reached "
                f"({endpoint.target}): {reason}",
                source=endpoint.name,
            ) from None
        except BaseException:  # the caller was cancelled: leave nothing running
            await self.close()
            raise

    async def _keep(self, ready: asyncio.Future[mcp.Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                ready.set_result(await self.endpoint.open(stack))
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError(error))
            elif not self._stop.is_set():
                logger.warning(
                    "MCP server %r: the connection broke: %s",
                    self.endpoint.name,
                    self.endpoint.redact(describe_error(error)),
                )
        finally:
            self.dead = True

    async def close(self) -> None:
        """Leave the session (a stdio server is stopped), waiting a bounded time."""
        self.dead = True
        self._stop.set()
        keeper = self._keeper
        if keeper is None or keeper.done():
            return
        if self.client is None:  # still connecting: nothing to leave gracefully
            keeper.cancel()
        _, pending = await asyncio.wait({keeper}, timeout=_CLOSE_WAIT)
        if pending:
            keeper.cancel()
            await asyncio.wait({keeper}, timeout=_CLOSE_WAIT)

    async def list_tools(self) -> list[mcp.types.Tool]:
        """Every page of the server's tool listing, within the timeout."""
        client = self._client()
        found: list[mcp.types.Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(self.endpoint.timeout):
            for _ in range(_MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                found.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    return found
        raise ToolSourceError(
            f"MCP server {self.endpoint.name!r} listed more than {_MAX_PAGES} pages of tools",
            source=self.endpoint.name,
        )

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp.types.CallToolResult:
        async with asyncio.timeout(self.endpoint.timeout):
            return await self._client().call_tool(name, arguments)

    def _client(self) -> mcp.Client:
        if self.client is None:
            raise mcp.MCPError(code=mcp.types.CONNECTION_CLOSED, message="not connected")
        return self.client


class Connection:
    """A server's live side: its session on the portal.

    Every coroutine method runs on the portal (`start` puts it there); `close()` is
    called from any thread. Listings are serialized (one connects, the others wait and
    reuse it); calls run concurrently. Closing cancels what still runs for it.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._link: _Link | None = None
        self._lock: asyncio.Lock | None = None
        self._state = threading.Lock()
        self._running: set[Running[Any]] = set()
        self.closed = False

    def start(self, coroutine: Coroutine[Any, Any, T]) -> Running[T]:
        """Start `coroutine` on the portal; RuntimeError once closed (what was started
        before is cancelled by `close`, so no caller waits forever)."""
        with self._state:
            if self.closed:
                coroutine.close()
                raise RuntimeError("the MCP server's connection is closed")
            running = portal().start(coroutine)
            self._running.add(running)
        running.future.add_done_callback(lambda _: self._forget(running))
        return running

    def _forget(self, running: Running[Any]) -> None:
        with self._state:
            self._running.discard(running)

    async def connect(self) -> None:
        """Connect now if not connected (or the session died)."""
        async with self._locked():
            await self._live_link()

    async def list_tools(self) -> list[mcp.types.Tool]:
        """The server's tools, connecting first if needed; a session that turns out to
        be dead (a server that exited since) is restarted once and listed again.

        Raises `ToolSourceError` when the server cannot be reached or does not list.
        """
        async with self._locked():
            link = await self._live_link()
            try:
                return await link.list_tools()
            except Exception as error:
                if not (link.dead or _closed(error)):
                    raise self._listing_failed(error) from None
            await link.close()
            link = await self._live_link()
            try:
                return await link.list_tools()
            except Exception as error:
                raise self._listing_failed(error) from None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult[Any]:
        """Call `name` on the server: its result, or a failed result saying what went
        wrong (never an exception, never past the timeout)."""
        endpoint, link = self.endpoint, self._link
        if link is None or link.dead:
            return ToolResult.error(
                f"MCP server {endpoint.name!r} is not running (it exited, was disconnected "
                f"or closed); it is {endpoint.comeback} at the next evaluation",
                code="external_service_error",
            )
        try:
            result = await link.call_tool(name, arguments)
        except Exception as error:
            return self._call_failed(link, name, error)
        return to_tool_result(result, endpoint.redact)

    def _call_failed(self, link: _Link, name: str, error: Exception) -> ToolResult[Any]:
        """What the model reads when the call to `name` raised `error`."""
        endpoint = self.endpoint
        server = f"MCP server {endpoint.name!r}"
        code = error.code if isinstance(error, mcp.MCPError) else None
        if isinstance(error, TimeoutError) or code == mcp.types.REQUEST_TIMEOUT:
            return ToolResult.error(
                f"{server} did not answer the call to {name!r} within {endpoint.timeout:g} s "
                "(timeout=); the call was cancelled",
                code="timeout",
            )
        if code == mcp.types.CONNECTION_CLOSED or link.dead:  # a transport that broke
            link.dead = True
            logger.warning("%s closed the connection during a call to %r", server, name)
            return ToolResult.error(
                f"{server} closed the connection during the call to {name!r} (it exited or "
                f"was disconnected); it is {endpoint.comeback} at the next evaluation",
                code="external_service_error",
            )
        if isinstance(error, mcp.MCPError):
            return ToolResult.error(
                f"{server} answered the call to {name!r} with a protocol error "
                f"({error.code}): {endpoint.redact(error.message)}",
                code=_PROTOCOL_CODES.get(error.code, "external_service_error"),
            )
        return ToolResult.error(  # a result the SDK could not read (it does not fit the schema)
            f"{server} sent an answer to the call to {name!r} that could not be read: "
            f"{endpoint.redact(describe_error(error))}",
            code="external_service_error",
        )

    async def disconnect(self) -> None:
        """Leave the session, if there is one."""
        link, self._link = self._link, None
        if link is not None:
            await link.close()

    def close(self) -> None:
        """Leave the session and cancel what still runs for it (from any thread; on the
        portal's own, a finalizer run there, it is left to finish in the background)."""
        with self._state:
            if self.closed:
                return
            self.closed = True
            running = list(self._running)
        for each in running:
            each.cancel()
        current = portal()
        if current.is_current:
            current.loop.create_task(self.disconnect())
            return
        with contextlib.suppress(Exception):  # the portal closed at exit: so did the session
            current.start(self.disconnect()).future.result(timeout=2 * _CLOSE_WAIT)

    def _locked(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _live_link(self) -> _Link:
        link = self._link
        if link is not None and not link.dead:
            return link
        if link is not None:
            await link.close()
            self._link = None
        link = _Link(self.endpoint)
        await link.open()
        self._link = link
        return link

    def _listing_failed(self, error: Exception) -> ToolSourceError:
        if isinstance(error, ToolSourceError):
            return error
        endpoint = self.endpoint
        if isinstance(error, TimeoutError):
            why = f"no answer within {endpoint.timeout:g} s (timeout=)"
        else:
            why = endpoint.redact(describe_error(error))
        return ToolSourceError(
            f"MCP server {endpoint.name!r} ({endpoint.target}) did not list its tools: {why}",
            source=endpoint.name,
        )


_PROTOCOL_CODES: dict[int, Any] = {
    mcp.types.INVALID_PARAMS: "invalid_input",
    mcp.types.METHOD_NOT_FOUND: "not_found",
}


def _closed(error: BaseException) -> bool:
    return isinstance(error, mcp.MCPError) and error.code == mcp.types.CONNECTION_CLOSED
