"""How an adapter obtains its SDK clients, and how they are closed.

One sync client per adapter (sync SDK clients are thread-safe and bound to no loop), one
async client per event loop (an async client's connections belong to the loop that
opened them). An async client made on a private loop of the sync entry points (an async
tool evaluating another prompt inside `evaluate()`) is closed with that loop. A client
the caller passed in is the caller's: used, never closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ..foundation.errors import ConfigurationError
from ..foundation.runtime import on_loop_exit, owns_loop

__all__ = ["ClientPool", "close_client"]


class ClientPool:
    """Clients for one adapter: `make(sync)` builds one."""

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
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, *, blocking: bool) -> tuple[Any, bool]:
        """(the client for a request, whether it is a sync client). `blocking`: the
        request runs on a private loop of a sync entry point, which a sync client may
        block; otherwise the running loop's async client is used."""
        if self._given is not None:
            if not self._given_is_async:
                return self._given, True
            if blocking:
                raise ConfigurationError(
                    f"this adapter was given an async {self._describe} "
                    f"({type(self._given).__name__}); its connections belong to your event "
                    "loop, so the sync entry points (evaluate, stream) cannot use it. Use "
                    "evaluate_async() / stream_async() on that loop, or pass the SDK's sync "
                    "client instead.",
                    option="client",
                )
            return self._given, False
        if blocking:
            return self._sync_client(), True
        return self._async_client(), False

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
            if self._sync is None:
                self._sync = self._make(True)
            return self._sync

    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._make(False)
            self._async[loop] = client
            if owns_loop(loop):  # a private loop: close the client with it

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
