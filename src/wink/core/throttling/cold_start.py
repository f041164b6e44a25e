"""`ColdStart`: how many requests a new pacer lets out before any answer says anything."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["ColdStart"]

_OPEN_WINDOW = 64  # one more in flight per success until this many: then it stops counting
_STALE_MIN = 2.0  # a request unanswered for max(this, 2 x the slowest answer) is let go


class ColdStart:
    """The window of a cold pacer: `initial` requests in flight, one more per success.

    So a process that starts with 50 evaluations to run sends a few, and lets the rest
    follow as answers come back, instead of firing all 50 into a provider that may
    throttle. At `_OPEN_WINDOW` in flight it is over (`ended`), or when the pacer says so
    (a throttle, headers showing room). A request that never reports (it failed some
    other way) stops counting once it is stale. Not thread-safe: the pacer's lock guards
    it. Waiters wait on a future of their own loop, woken thread-safely.
    """

    def __init__(self, initial: int) -> None:
        if initial < 0:
            raise ValueError("initial_window must be >= 0 (0: no cold start)")
        self.window = initial
        self._tickets: dict[int, float] = {}
        self._issued = 0
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._slowest = 0.0

    @property
    def ended(self) -> bool:
        return self.window == 0

    def take(self, now: float) -> int | None:
        """A ticket for one request in flight, or None when the window is full."""
        stale = self._stale_after()
        for ticket, at in list(self._tickets.items()):
            if now - at > stale:
                del self._tickets[ticket]
        if len(self._tickets) >= self.window:
            return None
        self._issued += 1
        self._tickets[self._issued] = now
        return self._issued

    def waiter(self, now: float) -> tuple[asyncio.Future[None], float]:
        """A future resolved when a place may have freed up, and the longest to wait for
        it (until the oldest request in flight goes stale)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append((loop, waiter))
        oldest = min(self._tickets.values(), default=now)
        return waiter, max(0.001, oldest + self._stale_after() - now)

    def forget(self, waiter: asyncio.Future[None]) -> None:
        self._waiters = [entry for entry in self._waiters if entry[1] is not waiter]

    def answered(self, ticket: int, sent_at: float, now: float, *, success: bool) -> None:
        """The request holding `ticket` was answered: its place frees up, and after a
        success the window grows by one."""
        if self._tickets.pop(ticket, None) is None:
            return
        self._slowest = max(self._slowest, now - sent_at)
        if success and self.window:
            self.window += 1
            if self.window >= _OPEN_WINDOW:
                self.end()
        self._wake()

    def end(self) -> None:
        if self.window:
            self.window = 0
            self._tickets.clear()
            self._wake()

    def _stale_after(self) -> float:
        return max(_STALE_MIN, 2.0 * self._slowest)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for loop, waiter in waiters:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits there
                loop.call_soon_threadsafe(_resolve, waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
