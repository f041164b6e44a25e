"""How an adapter obtains its SDK clients, and how they are closed.

One async client per event loop (an async client's connections belong to the loop that
opened them): the portal's (`wink.core.foundation.runtime`), which serves every sync call
of the process, and one for each loop of yours that ran `evaluate_async()` or
`stream_async()`. The portal's is closed by `adapter.close()` or at exit; yours by
`await adapter.aclose()` on that loop. A client the caller passed in is the caller's:
used, never closed; a sync one is called on a worker thread.
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
from ..foundation.runtime import Portal, on_loop_exit, portal, running_portal

__all__ = ["ClientPool", "close_client"]


class ClientPool:
    """Clients for one adapter: `make(sync)` builds one (wink makes async clients only)."""

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
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._dropped: weakref.finalize[Any, Any] | None = None  # the portal client's

    def get(self, *, blocking: bool) -> tuple[Any, bool]:
        """(the client for a request on the running loop, whether it is a sync client,
        which the transport calls on a worker thread). `blocking`: the request comes
        from a sync entry point (it runs on the portal, not on the caller's loop)."""
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
        return self._async_client(asyncio.get_running_loop()), False

    def prepare(self, *, sync: bool) -> None:
        """Make the client a `with` (`sync`: the portal's) or an `async with` block (the
        running loop's) will use, so that its first request does not pay for it (the
        SDK's HTTP stack and TLS context take tens of milliseconds to build). A client
        that cannot be made is left to the first request, which reports why."""
        if self._given is not None:
            return
        loop = portal().loop if sync else asyncio.get_running_loop()
        with contextlib.suppress(Exception):  # the first request tries again, and raises
            self._async_client(loop)

    def _async_client(self, loop: asyncio.AbstractEventLoop) -> Any:
        with self._lock:
            client = self._async.get(loop)
            if client is None:
                client = self._make(False)
                self._async[loop] = client
                current = running_portal()
                if current is not None and current.loop is loop:
                    on_loop_exit(loop, self._close_running)  # closed at exit
                    # an adapter dropped unclosed: its client is closed on the portal
                    self._dropped = weakref.finalize(self, _close_dropped, current, client)
        return client

    async def _close_running(self) -> None:
        """Close the running loop's client."""
        with self._lock:
            client = self._async.pop(asyncio.get_running_loop(), None)
            current = running_portal()
            if current is not None and current.is_current and self._dropped is not None:
                self._dropped.detach()
                self._dropped = None
        if client is not None:
            await close_client(client)

    async def aclose(self) -> None:
        """Close the async client of the running loop and the portal's."""
        await self._close_running()
        current = running_portal()
        elsewhere = current is not None and current.loop is not asyncio.get_running_loop()
        if current is not None and elsewhere and self.held(sync=True) is not None:
            await asyncio.wrap_future(current.submit(self._close_running()))

    def close_sync(self) -> None:
        """Close the portal's client (the one the sync entry points use), if it was made."""
        current = running_portal()
        if current is None or self.held(sync=True) is None:
            return
        if current.is_current:  # called on the portal itself: close it there, soon
            current.loop.create_task(self._close_running())
            return
        with contextlib.suppress(RuntimeError):  # the portal closed at exit: so did it
            current.call(self._close_running())

    def held(self, *, sync: bool) -> Any:
        """The client this pool holds for `sync` (the portal's; else the running loop's),
        or None."""
        if sync:
            current = running_portal()
            return None if current is None else self._async.get(current.loop)
        return self._async.get(asyncio.get_running_loop())

    @property
    def open_clients(self) -> int:
        """How many clients this pool holds open (for tests and diagnostics)."""
        return len(self._async)


def _close_dropped(portal: Portal, client: Any) -> None:
    portal.spawn(_closing(client))


async def _closing(client: Any) -> None:
    with contextlib.suppress(Exception):
        await close_client(client)


async def close_client(client: Any) -> None:
    closer = getattr(client, "aclose", None) or getattr(client, "close", None)
    if closer is None:
        return
    outcome = closer()
    if inspect.isawaitable(outcome):
        await outcome
