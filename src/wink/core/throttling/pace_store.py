"""The pace store: the few numbers a provider key's pace is made of, changed atomically.

A pace is an interval between requests and a hold (nobody goes before it). Requests
book slots as in GCRA: a request's slot is `max(now, tat, held_until, last + interval)`
and the next free slot `tat` moves to `slot + interval`. A request that wakes at its
slot is released, unless a hold began or the interval grew while it slept: then it
waits for that, and every slot booked after it moves back by as much (`shift`), so the
queue keeps its spacing behind the hold instead of bunching up.

What a 429 or an answer means for the pace is decided elsewhere
(`wink.core.throttling.pacing`); a store applies a `PaceChange`, books, releases, in one
atomic step each. `MemoryStore` keeps the numbers in this process;
`wink.core.throttling.redis` keeps the same numbers in Redis with a Lua script of the
same semantics, so a fleet shares them; the two are played the same random scenarios
(`tests/core/throttling/test_pace_store.py` and `test_pace_store_redis.py`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["HALF_TICK", "MemoryStore", "PaceChange", "PaceState", "PaceStore"]

# An event loop's timer wakes a sleeper up to a millisecond late (epoll waits whole
# milliseconds): a sleep shorter than half of that would end later than going now is
# early, so a slot due this soon is taken now.
HALF_TICK = 0.0005


@dataclass(frozen=True, slots=True)
class PaceChange:
    """What one answer changes: hold everyone `hold` seconds from now, and set
    `interval = max(interval * factor, floor)` (`factor=0`: stop pacing).

    Two changes fold into one (`then`), so a store that is far away (Redis) can take
    several with its next step; `urgent` says this one should not wait for it (a 429,
    pacing that starts or stops: news to every process).
    """

    hold: float = 0.0
    factor: float = 1.0
    floor: float = 0.0
    urgent: bool = False

    @property
    def empty(self) -> bool:
        """True when applying it changes nothing."""
        return self.hold <= 0.0 and self.factor == 1.0 and self.floor <= 0.0

    def then(self, later: PaceChange) -> PaceChange:
        """This change followed by `later`, as one: max(max(x*f1, l1)*f2, l2)."""
        return PaceChange(
            hold=max(self.hold, later.hold),
            factor=self.factor * later.factor,
            floor=max(self.floor * later.factor, later.floor),
            urgent=self.urgent or later.urgent,
        )


@dataclass(frozen=True, slots=True)
class PaceState:
    """A store's answer to one step.

    `wait`: None when the caller may not go (nothing asked, or the wait would reach its
    limit: then nothing was booked); else seconds to sleep, and then: with `go`, send
    (the slot is the caller's); without, ask to be released with `mark`.
    `interval`: the pace (0: not pacing); `held_for`: seconds the hold has left (0:
    none). `shared`: the state came from a store shared by several processes, on whose
    clock `mark` is.
    """

    wait: float | None
    mark: float
    interval: float
    held_for: float
    shared: bool = False
    go: bool = False

    @property
    def pacing(self) -> bool:
        """True when a request may have to wait: an interval, or a hold."""
        return self.interval > 0.0 or self.held_for > 0.0


class PaceStore(Protocol):
    """A key's pace, stepped atomically. `most`: the longest the caller may wait."""

    async def apply(self, change: PaceChange) -> PaceState:
        """Apply `change`; read the pace."""
        ...

    async def book(self, most: float) -> PaceState:
        """A slot for one request (`wait` 0 when it may go now)."""
        ...

    async def release(self, booked: PaceState, most: float) -> PaceState:
        """The request `booked` woke up: go (`wait` 0) or sleep some more."""
        ...


class MemoryStore:
    """The pace in this process: a few floats under a `threading.Lock`, so any thread
    or event loop may step it. `clock` is injectable (tests run it on a fake one).

    `lead`: a slot due within this many seconds is given to the caller at once (`go`,
    with the wait left), not after one more step: here, where a step costs nothing, half
    a timer tick (`HALF_TICK`, the pacer does not sleep that little: it goes); a store a
    round trip away asks for about that round trip (`RedisStore`)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, lead: float = HALF_TICK
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self.lead = lead
        self._interval = 0.0
        self._held = -math.inf  # nobody goes before this
        self._tat = -math.inf  # the next free slot
        self._last = -math.inf  # the last release
        self._shift = 0.0  # how far held releases have moved every booked slot back

    def __repr__(self) -> str:
        return f"MemoryStore(interval={self._interval:.6f})"

    async def apply(self, change: PaceChange) -> PaceState:
        return self.apply_now(change)

    async def book(self, most: float) -> PaceState:
        return self.book_now(most, self.lead)

    async def release(self, booked: PaceState, most: float) -> PaceState:
        return self.release_now(booked.mark, most, self.lead)

    def apply_now(self, change: PaceChange) -> PaceState:
        """`apply`, synchronously (the store never waits)."""
        with self._lock:
            now = self._clock()
            if change.hold > 0.0:
                self._held = max(self._held, now + change.hold)
            self._interval = max(self._interval * change.factor, change.floor)
            return self._state(now, None, 0.0)

    def book_now(self, most: float, lead: float = 0.0) -> PaceState:
        """`book`, synchronously."""
        with self._lock:
            now = self._clock()
            if self._interval == 0.0 and self._held <= now:
                return self._state(now, 0.0, 0.0, go=True)  # not pacing: book nothing
            slot = max(now, self._tat, self._held, self._last + self._interval)
            if slot > now and slot - now >= most:
                return self._state(now, None, 0.0)
            self._tat = slot + self._interval
            if slot - now <= lead:
                self._last = slot
                return self._state(now, slot - now, 0.0, go=True)
            return self._state(now, slot - now, slot - self._shift)

    def release_now(self, mark: float, most: float, lead: float = 0.0) -> PaceState:
        """`release`, synchronously."""
        with self._lock:
            now = self._clock()
            slot = mark + self._shift
            held = max(self._held, self._last + self._interval)
            due = max(slot, held)
            if due > now and due - now >= most:
                return self._state(now, None, mark)
            if due - now > lead:
                return self._state(now, due - now, mark)
            if held > slot:  # held past its slot: every later slot moves back as much
                self._shift += held - slot
                self._tat += held - slot
            self._last = max(due, now)
            return self._state(now, max(0.0, due - now), mark, go=True)

    def adopt(self, interval: float, held_for: float) -> None:
        """Take another store's pace as this one's (a Redis store's fallback does)."""
        with self._lock:
            self._interval = interval
            self._held = self._clock() + held_for if held_for > 0.0 else -math.inf

    def _state(self, now: float, wait: float | None, mark: float, go: bool = False) -> PaceState:
        return PaceState(wait, mark, self._interval, max(0.0, self._held - now), go=go)
