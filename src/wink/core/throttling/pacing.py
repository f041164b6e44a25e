"""Pacing: what a provider's answers mean for the pace, and the pacer that applies it.

Written once for every limiter. `PaceLearner` is a small pure state machine: from each
answer (a success with or without rate-limit headers, a 429 and its `retry-after`) it
decides a `PaceChange`. `RequestPacer` runs it around each request, over a pace store
(`wink.core.throttling.pace_store`): `MemoryStore` in this process, or Redis for a fleet
(`wink.core.throttling.redis`), which hold the same three numbers with the same semantics.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from ..foundation.messages import RateLimitInfo
from .cold_start import ColdStart
from .pace_store import HALF_TICK, MemoryStore, PaceChange, PaceState, PaceStore
from .retry import HasRemaining

__all__ = ["PaceLearner", "Permit", "RequestPacer", "as_seconds"]

# The tuning, each constant once.
RECENT = 8  # answers: the learner's memory (its averages move 1/RECENT per answer)
FREQUENT = 0.2  # 429s at least this share of recent answers: the pace may be too fast
BURST = 0.3  # 429s this share of recent answers (three in about four): a limit, confirmed
PROBE = 0.002  # a paced success without rate headers shortens the interval by this share
BACKOFF = 1.1  # a 429 of a rate limit lengthens the interval by this factor, once a round
UNKNOWN_WAIT = 0.5  # seconds to hold everyone after a 429 that did not say how long...
UNKNOWN_REFILL = 0.05  # ...and the refill it is taken to mean, if pacing starts
SPACING_CAP = 1.0  # seconds: a longer retry-after holds everyone, but spaces them this much
SHORTEST_INTERVAL = 1e-4  # seconds: spacing requests closer than this is not pacing
LONGEST_INTERVAL = 60.0  # seconds: a longer spacing from headers is a broken header
LOW, PLENTY = 0.25, 0.5  # shares of the limit left: pace when low, stop when plenty
SETTLE = 0.9  # a header's smaller interval is taken gently (resets are rounded)
RTT_DRIFT = 0.01  # how fast the fastest round trip follows a slower network
INITIAL_WINDOW = 4  # requests a cold pacer lets out before any answer

STOP = PaceChange(factor=0.0, urgent=True)
_LATE = -1  # no cold start ticket: the deadline came first (tickets count from 1)


def as_seconds(value: float | timedelta | None) -> float | None:
    """A `retry_after` in seconds, whether it came as a number or a `timedelta`."""
    return value.total_seconds() if isinstance(value, timedelta) else value


@dataclass(frozen=True, slots=True)
class Permit:
    """One request let go by a pacer; hand it back with its answer (`on_response`,
    `on_throttle`). `at`: when it went, on the pacer's clock; `paced`: the pace spaced
    it (its answer says whether the interval holds); `ticket`: its place in the cold
    start's window; `interval`: the pace it went at, as the store said (a 429 of a
    request sent before the pace was slowed, here or by another process sharing the
    store, is already counted)."""

    at: float
    paced: bool = False
    ticket: int | None = None
    interval: float = 0.0


class PaceLearner:
    """What each answer means for the pace. Pure: no clock, no lock, no I/O.

    * **A 429 holds everyone only when a limit is confirmed**, for its `retry-after`
      (`UNKNOWN_WAIT` if unsaid): the answer says so (`limit_reached`: a rate-limit
      header at 0 remaining, an error body naming the limit), the pace is already set
      by a limit (pacing), or 429s come close together (at least `BURST` of the recent
      answers). Any other 429 is a stray: it changes nothing for the other requests
      (its own request waits its `retry-after` in the retry policy), and is remembered,
      so the next ones may confirm it.
    * **Only a rate limit's 429s slow the pace.** A rate limit's `retry-after` points at
      its next refill, which cannot be further away than the time between the successes
      it has been granting: a longer one is a stray, and only holds. Pacing starts when
      such 429s are frequent (at least `FREQUENT` of the recent answers; a stray does
      not come back), at the longest recent `retry-after` (about one refill), never
      slower than the provider has been answering nor than `SPACING_CAP`. While pacing,
      a rate limit's 429 lengthens the interval by `BACKOFF`, once per round (a request
      sent before the last backoff says nothing of the new interval). A 429 that does
      not say how long counts when frequent.
    * **Without rate headers, successes probe.** Each paced success shortens the interval
      by `PROBE` (additive increase of the rate, the backoff being the multiplicative
      decrease); below `SHORTEST_INTERVAL` pacing stops.
    * **Rate headers set the pace.** With the allowance low (at most `LOW` of the limit
      left) the provider refills one request every `reset / (limit - remaining)`: that is
      the interval. With `PLENTY` left there is no need to pace: pacing stops.
    * **The refill clock starts at arrival.** After a paced success (headerless) or an
      empty allowance, the next request waits one interval after this one *arrived*:
      an answer slower than the fastest may have arrived late by the difference.
    """

    def __init__(self) -> None:
        self.throttled_share = 0.0  # recent 429s' share of answers
        self.success_gap = math.inf  # recent mean seconds between two successes
        self.longest_wait = 0.0  # the longest recent retry-after: about one refill
        self.fastest = math.inf  # the fastest recent round trip
        self.headers = False  # the provider reports its allowance
        self._last_success = -math.inf
        self._backed_off_at = -math.inf

    def __repr__(self) -> str:
        return (
            f"PaceLearner(throttled_share={self.throttled_share:.3f}, "
            f"success_gap={self.success_gap:.6f}, headers={self.headers})"
        )

    def throttled(
        self,
        permit: Permit,
        retry_after: float | None,
        now: float,
        interval: float,
        *,
        limit_reached: bool = False,
    ) -> PaceChange:
        """A 429 for `permit`'s request, the pace being `interval`: the change.
        `limit_reached`: the answer itself says a limit was hit (`ThrottleDetails`)."""
        self.throttled_share += (1.0 - self.throttled_share) / RECENT
        self.longest_wait -= self.longest_wait / RECENT
        frequent = self.throttled_share >= FREQUENT
        if retry_after is None or not math.isfinite(retry_after) or retry_after < 0:
            wait, of_a_limit, refill = UNKNOWN_WAIT, frequent, UNKNOWN_REFILL
        else:
            wait, of_a_limit, refill = retry_after, retry_after <= self.success_gap, retry_after
        self.longest_wait = max(self.longest_wait, min(refill, SPACING_CAP))
        if not (limit_reached or interval > 0.0 or self.throttled_share >= BURST):
            return PaceChange()  # a stray: only its own request waits
        hold = PaceChange(hold=wait, urgent=True)
        if not of_a_limit:
            return hold  # a stray: hold, and nothing more
        if interval == 0.0:
            start = min(self.longest_wait, self.success_gap)
            if not frequent or start < SHORTEST_INTERVAL:
                return hold
            self._backed_off_at = now
            return PaceChange(hold=wait, floor=start, urgent=True)
        if permit.at <= self._backed_off_at or interval > permit.interval:
            return hold  # sent before the last backoff (anyone's): already counted
        self._backed_off_at = now
        return PaceChange(hold=wait, factor=BACKOFF, urgent=True)

    def answered(
        self, permit: Permit, info: RateLimitInfo | None, now: float, interval: float
    ) -> PaceChange:
        """A success for `permit`'s request, the pace being `interval`: the change."""
        self.throttled_share -= self.throttled_share / RECENT
        self.longest_wait -= self.longest_wait / RECENT
        if math.isfinite(self._last_success):
            gap = now - self._last_success
            known = math.isfinite(self.success_gap)
            self.success_gap = (
                self.success_gap + (gap - self.success_gap) / RECENT if known else gap
            )
        self._last_success = now
        round_trip = max(0.0, now - permit.at)
        if round_trip < self.fastest:
            self.fastest = round_trip
        else:
            self.fastest += (round_trip - self.fastest) * RTT_DRIFT
        if info is not None and info.remaining_requests is not None:
            self.headers = True
            return self._from_headers(info, permit, now, interval)
        if self.headers or not permit.paced or interval == 0.0:
            return PaceChange()
        if interval * (1.0 - PROBE) < SHORTEST_INTERVAL:
            return STOP
        return PaceChange(hold=self._next_refill(interval), factor=1.0 - PROBE)

    def _from_headers(
        self, info: RateLimitInfo, permit: Permit, now: float, interval: float
    ) -> PaceChange:
        limit, remaining = info.limit_requests, info.remaining_requests or 0
        if remaining > max(1.0, (limit or 0) * LOW):
            plenty = limit is not None and remaining >= max(2.0, limit * PLENTY)
            return STOP if plenty else PaceChange()
        reset = info.reset_requests
        if reset is None or not math.isfinite(reset) or reset < 0:
            return PaceChange()
        if info.reset_is_time:  # a clock time read on arrival: short by the trip back
            reset += max(0.0, now - permit.at) / 2
        deficit = max(1, limit - remaining) if limit is not None else 1
        sample = min(reset / deficit, LONGEST_INTERVAL)
        if max(interval * SETTLE, sample) < SHORTEST_INTERVAL:
            return STOP if interval > 0.0 else PaceChange()
        hold = self._next_refill(sample) if remaining <= 0 else 0.0
        return PaceChange(hold=hold, factor=SETTLE, floor=sample, urgent=interval == 0.0)

    def _next_refill(self, interval: float) -> float:
        """The hold until the next refill, after a request that took the last token:
        one interval after it arrived, taking the answer's round trip beyond the fastest
        as spent on the way there (counted from now, the answer's arrival)."""
        return max(0.0, interval - self.fastest)


class RequestPacer:
    """Spaces one key's requests so a throttling provider is not hit by a herd.

    Around each request: `permit = await acquire(deadline)` (None: the wait would
    outlast the deadline, do not send), then `on_response(permit, info)` when the
    provider answered (at the response head for a stream) or `on_throttle(permit,
    retry_after, limit_reached=...)` after a rate-limit 429. The learner (`PaceLearner`)
    turns each answer into a change of the pace; the store books the slots.

    A cold pacer (nothing answered yet) lets `initial_window` requests out, and one more
    in flight per success (`ColdStart`), so a fresh process does not fire its whole
    concurrency into a provider that throttles; it stops counting at 64 in flight, when
    pacing starts, or on an answer whose headers show plenty of room.

    Shared by every concurrent request of the adapters using its key, from any thread or
    event loop: the learner and the cold start are under a `threading.Lock`; waiting is
    a plain sleep, or a future on the waiter's own loop.
    """

    def __init__(
        self,
        store: PaceStore | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        initial_window: int = INITIAL_WINDOW,
    ) -> None:
        self._cold = ColdStart(initial_window)
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep if sleep is not None else asyncio.sleep
        self._store: PaceStore = store if store is not None else MemoryStore(clock)
        self._learner = PaceLearner()
        self._interval = 0.0  # the store's, as last read
        self._held_until = -math.inf  # the same

    def __repr__(self) -> str:
        return f"RequestPacer(interval={self._interval:.6f}, cold={self.cold}, idle={self.idle})"

    @property
    def idle(self) -> bool:
        """True when, as far as this pacer knows, a request would go at once."""
        return self._cold.ended and self._interval == 0.0 and self._held_until <= self._clock()

    @property
    def cold(self) -> bool:
        """True until the cold start is over (the window counts requests in flight)."""
        return not self._cold.ended

    @property
    def interval(self) -> float:
        """The seconds between two requests (0: not pacing), as last read from the store."""
        return self._interval

    @property
    def learner(self) -> PaceLearner:
        """What this pacer has learned from its own answers (for tests and debugging)."""
        return self._learner

    # ---- the three calls around a request

    async def acquire(self, deadline: HasRemaining | None = None) -> Permit | None:
        """Wait until this request may be sent: its permit then, None at once when that
        would be at or past `deadline` (no wait that cannot end in a request)."""
        ticket: int | None = None
        if not self._cold.ended:
            ticket = await self._cold_turn(deadline)
            if ticket == _LATE:
                return None
        most = deadline.remaining() if deadline is not None else math.inf
        state = await self._store.book(most)
        paced = state.interval > 0.0
        while state.wait is not None and not state.go:
            await self._sleep(state.wait)
            most = deadline.remaining() if deadline is not None else math.inf
            state = await self._store.release(state, most)
        self._seen(state)
        if state.wait is None:
            self._cold_failed(ticket)
            return None
        if state.wait > HALF_TICK:  # the slot is this request's: no need to ask again
            await self._sleep(state.wait)  # (a shorter sleep would end later than now is early)
        return Permit(self._clock(), paced, ticket, state.interval)

    async def on_response(self, permit: Permit, info: RateLimitInfo | None) -> None:
        """The request of `permit` was answered: learn from it (and its rate headers)."""
        with self._lock:
            now = self._clock()
            if permit.ticket is not None:
                self._cold.answered(permit.ticket, permit.at, now, success=True)
            change = self._learner.answered(permit, info, now, self._interval)
            self._cold_over(change)
        if not change.empty:
            self._seen(await self._store.apply(change))

    async def on_throttle(
        self,
        permit: Permit,
        retry_after: float | timedelta | None,
        *,
        limit_reached: bool = False,
    ) -> None:
        """The request of `permit` was throttled (a rate-limit 429). When a limit is
        confirmed (`limit_reached`: the answer says so; or the pace, or the 429s before
        it, do), hold everyone for `retry_after`, and slow the pace if 429s are frequent;
        a stray changes nothing for the others (see `PaceLearner`)."""
        with self._lock:
            now = self._clock()
            if permit.ticket is not None:
                self._cold.answered(permit.ticket, permit.at, now, success=False)
            change = self._learner.throttled(
                permit, as_seconds(retry_after), now, self._interval, limit_reached=limit_reached
            )
            self._cold_over(change)
        if not change.empty:
            self._seen(await self._store.apply(change))

    # ---- internals

    def _seen(self, state: PaceState) -> None:
        """Keep what the store said (its interval and hold), on this pacer's clock."""
        self._interval = state.interval
        self._held_until = self._clock() + state.held_for if state.held_for > 0.0 else -math.inf
        if state.interval > 0.0 and not self._cold.ended:
            with self._lock:  # the store paces (another process may have started it)
                self._cold.end()

    def _cold_over(self, change: PaceChange) -> None:
        """Pacing starts, or the provider has room: the cold start is over."""
        if change.floor > 0.0 or change.factor == 0.0:
            self._cold.end()

    def _cold_failed(self, ticket: int | None) -> None:
        if ticket is not None:
            with self._lock:
                self._cold.answered(ticket, self._clock(), self._clock(), success=False)

    async def _cold_turn(self, deadline: HasRemaining | None) -> int | None:
        """A place in the cold start's window: its ticket, None when the cold start is
        over (go on), `_LATE` when the deadline came first."""
        while True:
            with self._lock:
                if self._cold.ended:
                    return None
                now = self._clock()
                ticket = self._cold.take(now)
                if ticket is not None:
                    return ticket
                waiter, at_most = self._cold.waiter(now)
            if deadline is not None:
                at_most = min(at_most, deadline.remaining())
            try:
                if at_most > 0:
                    await asyncio.wait_for(waiter, at_most)
            except TimeoutError:
                pass
            finally:
                with self._lock:
                    self._cold.forget(waiter)
            if deadline is not None and deadline.remaining() <= 0:
                return _LATE
