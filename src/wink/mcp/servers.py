"""`MCPServerStdio` and `MCPServerHTTP`: the tools of an MCP server, offered by a section.

A server is a `ToolSource` (`wink.core.prompting.sources`): an evaluation asks it for its
tools once, when it starts; the first ask connects it (or `with server:` does), and one
connection serves every later evaluation, on any thread or event loop, until it is
closed. Its live side, the SDK's session on wink's own event loop (the portal), is
`wink.mcp.connection`; what its answers mean to wink is `wink.mcp.results`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import shlex
import threading
import warnings
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack
from os import PathLike, fspath
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from urllib.parse import urlsplit

from ..core.foundation.checks import kind_of
from ..core.foundation.errors import ConfigurationError, InvalidArgumentError, ToolSourceError
from ..core.foundation.results import ToolResult
from ..core.foundation.runtime import portal, run_in_thread
from ..core.foundation.version import __version__
from ..core.prompting.sources import SourceTool
from ..core.prompting.tools import Tool, ToolContext
from .options import (
    ToolFilter,
    check_prefix,
    check_string_map,
    check_strings,
    check_text,
    check_timeout,
    check_tool_filter,
    check_url,
    shown_url,
    url_secrets,
)
from .results import Redactor, name_problem, offered_name, redactor, schema_of

if TYPE_CHECKING:
    import mcp
    import mcp.types

    from .connection import Connection

__all__ = ["MCPServerHTTP", "MCPServerStdio", "ToolFilter"]

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0  # seconds: a listing, a call
DEFAULT_CONNECT_TIMEOUT = 30.0  # seconds: starting or reaching a server, the handshake


class _MCPServer:
    """What both servers share: options, the connection's lifecycle, the tools offered."""

    def __init__(
        self,
        *,
        name: str,
        prefix: str | None,
        tool_filter: ToolFilter | None,
        timeout: float,
        connect_timeout: float,
        secrets: Sequence[str],
    ) -> None:
        self.name = check_text(name, "name")
        self.prefix = check_prefix(prefix)
        self.tool_filter = check_tool_filter(tool_filter)
        self.timeout = check_timeout(timeout, "timeout")
        self.connect_timeout = check_timeout(connect_timeout, "connect_timeout")
        self._redact: Redactor = redactor(secrets)
        self._lock = threading.Lock()
        self._connection: Connection | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._entered = 0

    # ---- what subclasses say

    _comeback = "restarted"  # what happens, at the next evaluation, to one that died

    @property
    def target(self) -> str:
        """What the server is, for messages: "the command '...'", "the URL ..."."""
        raise NotImplementedError

    def _opener(self) -> Callable[[AsyncExitStack], Awaitable[mcp.Client]]:
        """How to open the SDK's client for this server (entered on the stack it is
        given). It holds copies of the options, not the server: a live connection must
        not keep an unreferenced server from being collected (and closed, with a warning)."""
        raise NotImplementedError

    # ---- ToolSource

    async def list_tools(self) -> tuple[Tool[Any, Any], ...]:
        """The tools this server offers (prefixed, filtered), connecting first if it is
        not connected (or restarting it if it died). Raises `ToolSourceError` when it
        cannot be reached, `ConfigurationError` when its tools cannot be offered as
        configured (a name too long, two names alike, a filter naming a tool it lacks)."""
        connection = self._connection_for_use()
        try:
            listed = await _on(connection, connection.list_tools())
        except _Closed:
            raise ToolSourceError(
                f"MCP server {self.name!r} was closed while its tools were listed",
                source=self.name,
            ) from None
        return self._offered(listed)

    def release(self) -> None:
        """An adapter whose evaluations used this server is closing: close the server,
        unless it was opened with `with server:` (its block closes it)."""
        if not self._entered:
            self.close()

    async def release_async(self) -> None:
        """`release()`, without blocking the running event loop."""
        if not self._entered:
            await self.aclose()

    # ---- opening and closing

    def __enter__(self) -> Self:
        """Connect now (a `ToolSourceError` if the server cannot start); closed on exit."""
        connection = self._enter()
        try:
            portal().call(_on(connection, connection.connect()))
        except BaseException:
            self._leave()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._leave()

    async def __aenter__(self) -> Self:
        connection = self._enter()
        try:
            await _on(connection, connection.connect())
        except BaseException:
            await run_in_thread(self._leave)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await run_in_thread(self._leave)

    def close(self) -> None:
        """Close the connection now (a stdio server is stopped); the next use connects
        again. Calls still running get a failed result."""
        with self._lock:
            connection, self._connection = self._connection, None
            finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if connection is not None:
            connection.close()

    async def aclose(self) -> None:
        """`close()`, without blocking the running event loop."""
        await run_in_thread(self.close)

    def _enter(self) -> Connection:
        with self._lock:
            self._entered += 1
            return self._connection_locked(entered=True)

    def _leave(self) -> None:
        with self._lock:
            self._entered = max(0, self._entered - 1)
            last = self._entered == 0
        if last:
            self.close()

    def _connection_for_use(self) -> Connection:
        with self._lock:
            return self._connection_locked(entered=self._entered > 0)

    def _connection_locked(self, *, entered: bool) -> Connection:
        if self._connection is not None:
            return self._connection
        connection = self._make_connection()
        self._connection = connection
        if not entered:  # connected on first use: closed by an adapter, or at exit
            self._finalizer = weakref.finalize(self, _never_closed, connection, repr(self))
        return connection

    def _make_connection(self) -> Connection:
        try:
            from .connection import Connection, Endpoint
        except ImportError as error:
            missing = error.name or "mcp"
            raise ConfigurationError(
                f"MCP servers need an optional dependency that is not installed (no module "
                f"named {missing!r}): pip install 'wink[mcp]'",
                option="mcp_servers",
            ) from error
        endpoint = Endpoint(
            name=self.name,
            target=self.target,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            redact=self._redact,
            open=self._opener(),
            comeback=self._comeback,
        )
        return Connection(endpoint)

    # ---- the tools

    def _offered(self, listed: Sequence[mcp.types.Tool]) -> tuple[Tool[Any, Any], ...]:
        wanted = self.tool_filter
        if wanted is not None and not callable(wanted):
            missing = sorted(set(wanted) - {tool.name for tool in listed})
            if missing:
                has = ", ".join(sorted(tool.name for tool in listed)) or "none"
                raise ConfigurationError(
                    f"tool_filter of MCP server {self.name!r} names tools it does not have: "
                    f"{', '.join(missing)} (it has: {has})",
                    option="tool_filter",
                )
        offered: dict[str, str] = {}
        tools: list[Tool[Any, Any]] = []
        for tool in listed:
            if not _wanted(wanted, tool.name):
                continue
            name = offered_name(tool.name, self.prefix)
            problem = name_problem(name) or (
                f"the same as that of its tool {offered[name]!r}" if name in offered else None
            )
            if problem is not None:
                raise ConfigurationError(
                    f"MCP server {self.name!r}: its tool {tool.name!r} cannot be offered as "
                    f"{name!r}, {problem}; leave it out with tool_filter=",
                    option="tool_filter",
                )
            offered[name] = tool.name
            tools.append(
                SourceTool(
                    name,
                    tool.description or tool.title or "",
                    schema_of(tool),
                    self._caller(tool.name),
                    source=self.name,
                    remote_name=tool.name,
                )
            )
        return tuple(tools)

    def _caller(
        self, remote: str
    ) -> Callable[[dict[str, Any], ToolContext], Coroutine[Any, Any, ToolResult[Any]]]:
        async def call(arguments: dict[str, Any], context: ToolContext) -> ToolResult[Any]:
            connection = self._connection
            if connection is None:
                return _closed_result(self.name)
            try:
                return await _on(connection, connection.call_tool(remote, arguments))
            except _Closed:
                return _closed_result(self.name)

        return call


class MCPServerStdio(_MCPServer):
    """An MCP server that wink starts as a subprocess and talks to over its stdin and
    stdout: `MCPServerStdio("python", ["server.py"], env={"API_KEY": key})`.

    The process gets the variables the SDK passes on by default (`PATH`, `HOME`...) and
    `env`; its stderr is this process's. `cwd` is its working directory. `name` names
    it in events and spans (by default the command's file name); `prefix` goes before
    its tools' names (`prefix_tool`), so that two servers' tools cannot clash;
    `tool_filter` picks the tools offered. `timeout` bounds, in seconds, each listing of
    its tools and each call; `connect_timeout` starting it and the handshake. Env values
    never appear in errors, logs or the repr.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | PathLike[str] | None = None,
        name: str | None = None,
        prefix: str | None = None,
        tool_filter: ToolFilter | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.command = check_text(command, "command")
        self.args: tuple[str, ...] = check_strings(args, "args")
        self._env: dict[str, str] = check_string_map(env, "env")
        if cwd is not None and not isinstance(cast(object, cwd), str | PathLike):
            raise InvalidArgumentError(f"cwd must be a path, got {kind_of(cwd)}", argument="cwd")
        self.cwd = fspath(cwd) if cwd is not None else None
        default = self.command.replace("\\", "/").rsplit("/", 1)[-1]
        super().__init__(
            name=name if name is not None else default,
            prefix=prefix,
            tool_filter=tool_filter,
            timeout=timeout,
            connect_timeout=connect_timeout,
            secrets=list(self._env.values()),
        )

    @property
    def target(self) -> str:
        return f"the command {shlex.join([self.command, *self.args])!r}"

    def __repr__(self) -> str:
        env = f", env=<{', '.join(sorted(self._env))}>" if self._env else ""
        return (
            f"MCPServerStdio(name={self.name!r}, command={self.command!r}, "
            f"args={list(self.args)!r}{env})"
        )

    def _opener(self) -> Callable[[AsyncExitStack], Awaitable[mcp.Client]]:
        return functools.partial(
            _open_stdio, self.command, list(self.args), dict(self._env), self.cwd, self.timeout
        )


class MCPServerHTTP(_MCPServer):
    """An MCP server reached over streamable HTTP at `url`, with `headers` on every
    request (an `Authorization` header...): `MCPServerHTTP("https://.../mcp", headers=...)`.

    `name` (by default the URL's host), `prefix`, `tool_filter`, `timeout` and
    `connect_timeout` are those of `MCPServerStdio`. Header values never appear in
    errors, logs or the repr.
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        name: str | None = None,
        prefix: str | None = None,
        tool_filter: ToolFilter | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.url = check_url(url)
        self._headers: dict[str, str] = check_string_map(headers, "headers")
        super().__init__(
            name=name if name is not None else (urlsplit(self.url).hostname or self.url),
            prefix=prefix,
            tool_filter=tool_filter,
            timeout=timeout,
            connect_timeout=connect_timeout,
            secrets=[*self._headers.values(), *url_secrets(self.url)],
        )

    _comeback = "reconnected"

    @property
    def target(self) -> str:
        return f"the URL {shown_url(self.url)}"

    def __repr__(self) -> str:
        headers = f", headers=<{', '.join(sorted(self._headers))}>" if self._headers else ""
        return f"MCPServerHTTP(name={self.name!r}, url={shown_url(self.url)!r}{headers})"

    def _opener(self) -> Callable[[AsyncExitStack], Awaitable[mcp.Client]]:
        return functools.partial(_open_http, self.url, dict(self._headers), self.timeout)


def _wanted(wanted: ToolFilter | None, name: str) -> bool:
    if wanted is None:
        return True
    return wanted(name) if callable(wanted) else name in wanted


# ---- the connection


class _Closed(Exception):
    """The server was closed while a listing or a call waited on it."""


async def _on(connection: Connection, coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on the portal, where the connection's session lives, and wait for
    it here; cancelled here, it is cancelled there."""
    try:
        running = connection.start(coroutine)
    except RuntimeError:  # the connection is closed
        raise _Closed from None
    try:
        return await asyncio.wrap_future(running.future)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # ours was cancelled: so is the work
            running.cancel()
            raise
        if connection.closed:
            raise _Closed from None  # the server closed under the call
        raise
    except concurrent.futures.CancelledError:  # the work was cancelled there
        if connection.closed:
            raise _Closed from None
        raise


async def _open_stdio(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    read_timeout: float,
    stack: AsyncExitStack,
) -> mcp.Client:
    import mcp

    parameters = mcp.StdioServerParameters(command=command, args=args, env=env or None, cwd=cwd)
    return await stack.enter_async_context(_client(parameters, read_timeout))


async def _open_http(
    url: str, headers: dict[str, str], read_timeout: float, stack: AsyncExitStack
) -> mcp.Client:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # the SDK's own defaults: a streamed answer may stay open a while between events
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    await stack.enter_async_context(http)
    transport = streamable_http_client(url, http_client=http)
    return await stack.enter_async_context(_client(transport, read_timeout))


def _client(server: Any, read_timeout: float) -> mcp.Client:
    """The SDK's client; its read timeout bounds each request it sends (a listing, a call
    and what the SDK sends on its own), as the connection's own timeout does the whole."""
    import mcp

    info = mcp.Implementation(name="wink", version=__version__)
    return mcp.Client(server, read_timeout_seconds=read_timeout, client_info=info)


def _never_closed(connection: Connection, label: str) -> None:
    """The finalizer of a server connected on first use and never closed."""
    warnings.warn(
        f"{label} was never closed: close the adapter that used it (adapter.close(), "
        "`with adapter:`), or open the server with `with server:`",
        ResourceWarning,
        stacklevel=1,
    )
    connection.close()


def _closed_result(name: str) -> ToolResult[Any]:
    return ToolResult.error(
        f"MCP server {name!r} was closed during the call; it is connected again at the "
        "next evaluation",
        code="external_service_error",
    )
