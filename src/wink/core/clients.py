"""How an adapter obtains its SDK clients, and how they are closed.

One sync client per adapter (sync SDK clients are thread-safe and bound to no loop), one
async client per event loop (an async client's connections belong to the loop that
opened them). An async client made on `evaluate()`'s private loop is closed with it.
A client the caller passed in is the caller's: used, never closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigurationError
from .runtime import in_sync_call, on_loop_exit, owns_loop

__all__ = ["ClientPool", "Lease", "close_client"]


@dataclass(frozen=True, slots=True)
class Lease:
    """The client for one request; `sync` says its calls block (run them off the loop
    unless `inline` says this task may block)."""

    client: Any
    sync: bool
    inline: bool


class ClientPool:
    """Clients for one adapter: `make(sync=...)` builds one (None: no sync client)."""

    def __init__(
        self,
        make: Callable[[bool], Any],
        *,
        given: Any = None,
        given_is_async: bool = False,
        describe: str = "client",
    ) -> None:
        self._make = make
        self._given = given
        self._given_is_async = given_is_async
        self._describe = describe
        self._lock = threading.Lock()
        self._sync: Any = None
        self._no_sync = False
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def lease(self) -> Lease:
        """The client the current task should use (see the module docstring)."""
        inline = in_sync_call()
        if self._given is not None:
            if not self._given_is_async:
                return Lease(self._given, sync=True, inline=inline)
            if inline:
                raise ConfigurationError(
                    f"this adapter was given an async {self._describe} "
                    f"({type(self._given).__name__}); its connections belong to your event "
                    "loop, so sync evaluate() cannot use it. Call evaluate_async() from that "
                    "loop, or pass the SDK's sync client instead.",
                    option="client",
                )
            return Lease(self._given, sync=False, inline=False)
        if inline and not self._no_sync:
            client = self._sync_client()
            if client is not None:
                return Lease(client, sync=True, inline=True)
        return Lease(self._async_client(), sync=False, inline=False)

    def prepare(self, *, sync: bool) -> None:
        """Make the client a `with` (`sync`) or an `async with` block on the running loop
        will use, so that its first request does not pay for it (the SDK's HTTP stack and
        TLS context take tens of milliseconds to build). A client that cannot be made is
        left to the first request, which reports why with its phase."""
        if self._given is not None:
            return
        with contextlib.suppress(Exception):  # the first request tries again, and raises
            if sync:
                self._sync_client()
            else:
                self._async_client()

    def _sync_client(self) -> Any:
        with self._lock:
            if self._sync is None and not self._no_sync:
                self._sync = self._make(True)
                self._no_sync = self._sync is None
            return self._sync

    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._make(False)
            self._async[loop] = client
            if owns_loop(loop):  # evaluate()'s loop: close the client with it

                async def close() -> None:
                    self._async.pop(loop, None)
                    await close_client(client)

                on_loop_exit(loop, close)
        return client

    async def aclose(self) -> None:
        """Close the async client of the running loop and the sync client."""
        loop = asyncio.get_running_loop()
        client = self._async.pop(loop, None)
        if client is not None:
            await close_client(client)
        self.close_sync()

    def close_sync(self) -> None:
        with self._lock:
            client, self._sync = self._sync, None
        if client is not None:
            closer = getattr(client, "close", None)
            if callable(closer):
                closer()

    def held(self, *, sync: bool) -> Any:
        """The client this pool holds for `sync` (the running loop's when async), or None."""
        if sync:
            return self._sync
        return self._async.get(asyncio.get_running_loop())

    @property
    def open_clients(self) -> int:
        """How many clients this pool holds open (for tests and diagnostics)."""
        return (self._sync is not None) + len(self._async)


async def close_client(client: Any) -> None:
    closer = getattr(client, "aclose", None) or getattr(client, "close", None)
    if closer is None:
        return
    outcome = closer()
    if inspect.isawaitable(outcome):
        await outcome
