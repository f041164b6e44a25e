"""`RequestPacer`: spaces one provider key's requests while the provider is throttling.

The in-process pacer, and the learner every limiter shares (`wink.core.throttling.limiter`): a
Redis limiter runs one per process too, to learn from its answers and to fall back on.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal, cast

from ..foundation.messages import RateLimitInfo
from .cold_start import ColdStart
from .retry import HasRemaining

__all__ = [
    "FORGET_AFTER",
    "FORGET_INTERVALS",
    "MIN_INTERVAL",
    "RELAX",
    "SETTLE",
    "PaceOp",
    "RequestPacer",
    "as_seconds",
]

_LOW_FRACTION = 0.25  # remaining <= max(1, limit/4): the allowance is nearly spent, pace
_PLENTY_FRACTION = 0.5  # remaining >= limit/2 (and >= 2): no need to pace, relax
RELAX = 0.5  # each relaxed response halves the interval
SETTLE = 0.9  # a smaller sample lowers the interval gently (reset values are rounded)
MIN_INTERVAL = 1e-4  # below this, spacing requests is pointless: stop pacing
_MAX_INTERVAL = 60.0
_THROTTLE_INTERVAL_CAP = 1.0  # a long retry-after holds everyone; it does not space them
_UNKNOWN_WAIT = 0.5  # a throttle that did not say how long: hold everyone this long
_UNKNOWN_INTERVAL = 0.05
FORGET_AFTER = 5.0  # pacing that nothing has confirmed for this long is dropped...
FORGET_INTERVALS = 20.0  # ...or for this many intervals, if that is longer
_MARGIN_MIN, _MARGIN_MAX, _MARGIN_STEP, _MARGIN_EASE = 0.05, 0.5, 0.04, 0.0005
_RTT_DRIFT = 0.01  # how fast the round-trip baseline follows a slower network
_PROBE = 0.002  # a paced success without rate headers shortens the interval by this fraction
_BACKOFF_MIN, _BACKOFF_MAX = 0.05, 0.10  # and a paced throttle lengthens it by this much
_INITIAL_WINDOW = 4  # a cold pacer lets this many requests out before any answer
_MAX_OPS = 64  # changes kept for a shared limiter that has not taken them

PaceOpKind = Literal["hold", "settle", "relax", "scale", "backoff", "follow"]


@dataclass(frozen=True, slots=True)
class PaceOp:
    """One change a pacer made to the state a fleet shares (the interval, the hold).

    `hold`: hold everyone `value` seconds, interval at least `floor`; `settle`: a rate
    header's sample interval `value`; `relax`: halve the interval; `scale`: multiply it by
    `value`; `backoff`: multiply it by `value` unless a backoff came after `at` (when the
    throttled request was let go, on the shared clock); `follow`: let nothing go before
    `at + value` (the next refill after a late arrival). A Redis limiter replays these on
    the shared state (see `redis_limiter`).
    """

    kind: PaceOpKind
    value: float = 0.0
    floor: float = 0.0
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class _Release:
    """How this task's request was let go; read once by the answer's report."""

    pacer: RequestPacer
    at: float  # the pacer's clock when it went
    gap: float | None  # seconds since the request let go before it, if known
    paced: bool  # let go by pacing (not by the cold start's window)
    ticket: int | None  # the cold start's count of requests in flight
    shared_at: float | None = None  # when, on a shared limiter's clock


_released: ContextVar[_Release | None] = ContextVar("wink_pacer_released", default=None)


def as_seconds(value: float | timedelta | None) -> float | None:
    """A `retry_after` in seconds, whether it came as a number or a `timedelta`."""
    return value.total_seconds() if isinstance(value, timedelta) else value


class RequestPacer:
    """Spaces one key's requests so a throttling provider is not hit by a herd.

    Shared by all concurrent requests of the adapters using its key, from any thread or
    event loop: the state is a few floats under a `threading.Lock`; waiting is a plain
    sleep, or a future on the waiter's own loop.

    Why: with 50 requests in flight against a provider that refills one request every
    10 ms, retrying each 429 on its own makes all 50 chase the same free slot, and 49
    of them get another 429. So the pacer hands out slots one at a time:

    * a cold pacer (nothing answered yet) lets `_INITIAL_WINDOW` requests out, and one
      more in flight per success, so a fresh process does not fire its whole concurrency
      into a provider that throttles (`ColdStart`); after 64 in flight, or on an answer
      whose headers show plenty of room, it stops counting;
    * `acquire` books `slot = max(now, blocked_until, next_slot)`, moves `next_slot` on
      by the spacing (`interval` plus a small safety margin) and sleeps until the slot;
    * `on_throttle(retry_after)` holds everyone until `now + retry_after` and takes
      `retry_after` as a lower bound of `interval` (an honest retry-after is at most one
      refill away). For a cold request, the time since the request before it plus
      `retry_after` is one whole refill: a better bound. A paced request throttled all
      the same widens the margin (with rate headers) or lengthens the interval by 5% to
      10%, once per round (without);
    * `on_response(info)` learns `interval` from the rate-limit headers. With the
      allowance nearly spent (remaining <= max(1, limit/4)) the provider refills one
      request every `reset / max(1, limit - remaining)` seconds: that is the interval.
      With plenty left (remaining >= limit/2) the interval halves on each answer down to
      zero. A provider that sends no such headers is probed instead: each paced success
      shortens the interval by `_PROBE`, until a throttle lengthens it again (additive
      increase of the rate, multiplicative decrease);
    * on an empty allowance (or, without headers, after any paced success) the
      provider's refill clock starts when a request *arrives*. A request that took longer
      than the fastest round trip seen may have arrived late by that much, so the next
      one is held back by the same amount;
    * a sleeper that wakes too close to the previous release waits the difference; one
      woken inside a hold that began while it slept books a new slot;
    * pacing that nothing confirms for `FORGET_AFTER` seconds (or 20 intervals) is
      dropped.

    When not pacing, `idle` is True and callers skip `acquire` altogether.
    With `record_ops`, every change to the interval and the hold is also kept as a
    `PaceOp` for `take_ops`, so a shared limiter can replay it.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        initial_window: int = _INITIAL_WINDOW,
        record_ops: bool = False,
    ) -> None:
        self._cold = ColdStart(initial_window)
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep
        self._active = initial_window > 0
        self._headers = False  # the provider reports its allowance
        self._backed_off_at = -math.inf
        self._ops: list[PaceOp] | None = [] if record_ops else None
        self._interval = 0.0
        self._margin = _MARGIN_MIN
        self._confirmed_at = -math.inf
        self._next_slot = -math.inf
        self._blocked_until = -math.inf
        self._not_before = -math.inf
        self._last_release = -math.inf
        self._shift = 0.0  # how far holds have moved every booked slot back
        self._round_trip = math.inf

    def __repr__(self) -> str:
        return (
            f"RequestPacer(interval={self._interval:.6f}, margin={self._margin:.3f}, "
            f"cold={self.cold}, idle={self.idle})"
        )

    @property
    def idle(self) -> bool:
        """True when `acquire` would return at once: nothing throttled, nothing to pace."""
        return not self._active

    @property
    def cold(self) -> bool:
        """True until the cold start is over (the window counts requests in flight)."""
        return not self._cold.ended

    @property
    def interval(self) -> float:
        """The learned seconds between two requests (0 = not pacing), before the margin."""
        return self._interval

    @property
    def margin(self) -> float:
        """The safety margin added to the interval (a fraction)."""
        return self._margin

    # ---- the three calls around a request

    async def acquire(self, deadline: HasRemaining | None = None) -> bool:
        """Wait until this request may be sent: True then, False at once when that would be
        at or past `deadline` (no wait that cannot end in a request).

        Report the answer from the same task (`on_response` / `on_throttle`).
        """
        if not self._active:
            return True
        while True:
            turn = await self.cold_turn(deadline)
            if turn != "pace":
                return turn == "go"
            with self._lock:
                now = self._clock()
                if self._pacing(now):
                    mark = self._reserve(now)
                    break
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        wake: float | None = mark + self._shift
        gap: float | None = None
        while wake is not None:
            delay = wake - self._clock()
            if deadline is not None and delay >= deadline.remaining():
                return False
            if delay > 0:
                await sleep(delay)
            with self._lock:
                wake, gap = self._release(self._clock(), mark)
        _released.set(_Release(self, self._last_release, gap, True, None))
        return True

    async def cold_turn(
        self, deadline: HasRemaining | None = None
    ) -> Literal["go", "late", "pace"]:
        """The part of `acquire` that is not pacing: `"go"` (a place in the cold start's
        window, or nothing to wait for), `"late"` (the deadline came first) or `"pace"`
        (pacing is on: book a slot)."""
        while True:
            with self._lock:
                now = self._clock()
                if self._pacing(now):
                    return "pace"
                if self._cold.ended:
                    self._active = False
                    return "go"
                ticket = self._cold.take(now)
                if ticket is not None:
                    gap = now - self._last_release if math.isfinite(self._last_release) else None
                    self._last_release = now
                    _released.set(_Release(self, now, gap, False, ticket))
                    return "go"
                waiter, at_most = self._cold.waiter(now)
            if not await self._await_turn(waiter, at_most, deadline):
                return "late"

    async def on_throttle(self, retry_after: float | timedelta | None) -> None:
        """A request was throttled: hold every request until the provider's window ends."""
        self.throttled(retry_after)

    async def on_response(self, info: RateLimitInfo | None) -> None:
        """A request was answered: learn the provider's pace from its rate-limit headers."""
        self.answered(info)

    # ---- the same, for callers without an event loop (and the shared limiters)

    def throttled(self, retry_after: float | timedelta | None) -> None:
        """`on_throttle`, synchronously."""
        release = self._take_release()
        asked = as_seconds(retry_after)
        known = asked is not None and math.isfinite(asked) and asked >= 0
        wait = cast(float, asked) if known else _UNKNOWN_WAIT
        floor = min(wait, _THROTTLE_INTERVAL_CAP) if known else _UNKNOWN_INTERVAL
        with self._lock:
            now = self._clock()
            factor = 1.0
            if release is not None:
                if release.ticket is not None:
                    self._cold.answered(release.ticket, release.at, now, success=False)
                if release.paced and self._interval > 0.0:
                    factor = self._backoff(release, wait if known else None)
                elif (
                    known and release.gap is not None and release.gap <= wait and self._ops is None
                ):
                    # the request before it took the last token `gap` seconds earlier and
                    # the next comes `wait` from now: that is one whole refill. Not for a
                    # shared limiter's pacer (`record_ops`): other processes' requests took
                    # tokens in that gap too, and the sum would be a refill twice too long
                    floor = max(floor, min(release.gap + wait, _THROTTLE_INTERVAL_CAP))
            self._hold(now, wait, floor)
            if factor > 1.0 and release is not None:
                self._record(PaceOp("backoff", factor, at=release.shared_at or 0.0))
                self._interval *= factor
                self._backed_off_at = now

    def answered(self, info: RateLimitInfo | None) -> None:
        """`on_response`, synchronously."""
        release = self._take_release()
        headers = info is not None and info.remaining_requests is not None
        if release is None and not headers:
            return
        if release is not None or not self._headers:
            with self._lock:
                now = self._clock()
                if release is not None and release.ticket is not None:
                    self._cold.answered(release.ticket, release.at, now, success=True)
                if headers:
                    self._headers = True
                elif (
                    release is not None
                    and release.paced
                    and self._interval > 0.0
                    and not self._headers
                ):  # no rate headers: probe for a faster rate...
                    self._scale(now, 1.0 - _PROBE)
                    # ...and take the token this request took as the start of the next
                    # refill, as an empty allowance would say (a late arrival moves it)
                    self._follow_refill_clock(now, release, self._interval)
                self._update_active(now)
        if headers:
            self._learn_headers(cast(RateLimitInfo, info), release)

    # ---- what a shared limiter needs

    @property
    def has_ops(self) -> bool:
        """Whether changes wait to be taken by `take_ops`."""
        return bool(self._ops)

    def take_ops(self) -> list[PaceOp]:
        """The changes recorded since the last call (`record_ops=True`), oldest first."""
        with self._lock:
            ops = self._ops or []
            if self._ops is not None:
                self._ops = []
            return ops

    def adopt(self, interval: float, blocked_for: float, confirmed_ago: float) -> None:
        """Take a shared state as this pacer's: the fleet's interval and hold."""
        with self._lock:
            now = self._clock()
            self._interval = interval if interval >= MIN_INTERVAL else 0.0
            if self._interval == 0.0:
                self._margin = _MARGIN_MIN
            if blocked_for > 0:
                self._blocked_until = max(self._blocked_until, now + blocked_for)
            if math.isfinite(confirmed_ago):
                self._confirmed_at = now - confirmed_ago
            if self._interval > 0.0 or blocked_for > 0:
                self._cold.end()
                self._active = True

    def state(self) -> tuple[float, float]:
        """(interval, seconds the hold has left): what a shared limiter is seeded with."""
        with self._lock:
            return self._interval, max(0.0, self._blocked_until - self._clock())

    def let_go(self, gap: float | None, shared_at: float | None = None) -> None:
        """A shared limiter paced this task's request (at `shared_at` on its clock): its
        answer is reported as one of a request paced by this pacer."""
        _released.set(_Release(self, self._clock(), gap, True, None, shared_at))

    # ---- internals (the lock is held in every method below but `_take_release`,
    # `_await_turn` and `_learn_headers`)

    def _take_release(self) -> _Release | None:
        """How this task's request was let go by this pacer, if it was (read once)."""
        release = _released.get()
        if release is None:
            return None
        _released.set(None)
        return release if release.pacer is self else None

    def _learn_headers(self, info: RateLimitInfo, release: _Release | None) -> None:
        limit, remaining = info.limit_requests, cast(int, info.remaining_requests)
        if remaining > max(1.0, (limit or 0) * _LOW_FRACTION):
            plenty = limit is not None and remaining >= max(2.0, limit * _PLENTY_FRACTION)
            if plenty:
                with self._lock:
                    self._cold.end()
                    if self._interval > 0.0:
                        self._relax()
                    self._update_active(self._clock())
            return
        reset = info.reset_requests
        if reset is None or not math.isfinite(reset) or reset < 0:
            return
        released = release.at if release is not None else None
        if info.reset_is_time and released is not None:
            # a clock time was turned into "seconds from now" on arrival: add back about
            # half the round trip, the time the answer spent coming back
            reset += max(0.0, self._clock() - released) / 2
        deficit = max(1, limit - remaining) if limit is not None else 1
        sample = min(reset / deficit, _MAX_INTERVAL)
        with self._lock:
            now = self._clock()
            if remaining <= 0:
                self._follow_refill_clock(now, release, sample)
            if self._settle(now, sample):
                self._margin = max(_MARGIN_MIN, self._margin - _MARGIN_EASE)

    async def _await_turn(
        self,
        waiter: asyncio.Future[None],
        at_most: float,
        deadline: HasRemaining | None,
    ) -> bool:
        """Wait for a cold start's slot (woken by an answer, or when one goes stale)."""
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
        return deadline is None or deadline.remaining() > 0

    def _backoff(self, release: _Release, wait: float | None) -> float:
        """How much a throttle of a paced request slows the pace (a factor, 1: not at all).

        With rate headers, they set the interval: the margin widens instead. Without,
        the time since the request before it (`gap`) plus `wait` is one whole refill,
        but arrival jitter makes that noisy: the interval grows by 5% to 10%, once per
        round (a request let go before the last backoff was spaced by the old interval:
        its throttle says nothing of the new one).
        """
        if self._headers:
            self._margin = min(_MARGIN_MAX, self._margin + _MARGIN_STEP)
            return 1.0
        if release.at <= self._backed_off_at:
            return 1.0
        refill = release.gap + wait if release.gap is not None and wait is not None else 0.0
        return min(max(refill / self._interval, 1.0 + _BACKOFF_MIN), 1.0 + _BACKOFF_MAX)

    def _record(self, op: PaceOp) -> None:
        if self._ops is not None:
            if len(self._ops) >= _MAX_OPS:  # nobody takes them (Redis is away): keep the last
                del self._ops[0]
            self._ops.append(op)

    def _hold(self, now: float, wait: float, floor: float) -> None:
        self._record(PaceOp("hold", wait, floor))
        self._blocked_until = max(self._blocked_until, now + wait)
        if floor >= MIN_INTERVAL:
            self._interval = max(self._interval, floor)
        self._confirmed_at = max(self._confirmed_at, self._blocked_until)
        self._cold.end()
        self._active = True

    def _settle(self, now: float, sample: float) -> bool:
        """Take a header's sample interval (a smaller one gently); False: pacing stops."""
        self._record(PaceOp("settle", sample))
        current = self._interval
        learned = sample if sample >= current else max(sample, current * SETTLE)
        if learned < MIN_INTERVAL:
            self._stop_pacing()
            return False
        self._interval = learned
        self._confirmed_at = max(self._confirmed_at, now)
        self._cold.end()
        self._active = True
        return True

    def _scale(self, now: float, factor: float) -> None:
        self._record(PaceOp("scale", factor))
        scaled = self._interval * factor
        if scaled >= MIN_INTERVAL:
            self._interval = scaled
        else:
            self._stop_pacing()

    def _relax(self) -> None:
        self._record(PaceOp("relax"))
        relaxed = self._interval * RELAX
        if relaxed >= MIN_INTERVAL:
            self._interval = relaxed
        else:
            self._stop_pacing()

    def _stop_pacing(self) -> None:
        self._interval, self._margin = 0.0, _MARGIN_MIN

    def _follow_refill_clock(self, now: float, release: _Release | None, interval: float) -> None:
        """The allowance is empty: the next request must arrive one refill after this one."""
        if self._interval == 0.0:  # pacing starts: the next request waits for a refill
            self._next_slot = max(self._next_slot, now + interval)
        if release is None:
            return
        round_trip = now - release.at
        if round_trip < self._round_trip:
            self._round_trip = round_trip
        else:
            self._round_trip += (round_trip - self._round_trip) * _RTT_DRIFT
        late = round_trip - self._round_trip
        self._not_before = max(self._not_before, release.at + late + interval)
        if release.shared_at is not None:  # the same on the shared clock
            self._record(PaceOp("follow", late + interval, at=release.shared_at))

    def _spacing(self, now: float) -> float:
        """Seconds between two releases, 0 when not pacing."""
        if self._interval == 0.0:
            return 0.0
        if now > self._confirmed_at + max(FORGET_AFTER, FORGET_INTERVALS * self._interval):
            self._stop_pacing()
            return 0.0
        return self._interval * (1.0 + self._margin)

    def _update_active(self, now: float) -> None:
        """Go idle as soon as nothing is left to do (the next `acquire` would anyway)."""
        if self._cold.ended and not self._pacing(now):
            self._active = False

    def _pacing(self, now: float) -> bool:
        return self._spacing(now) > 0.0 or self._blocked_until > now

    def _reserve(self, now: float) -> float:
        """Book the next free slot: its mark (slot minus the shift so far)."""
        spacing = self._spacing(now)
        slot = max(now, self._blocked_until, self._next_slot, self._last_release + spacing)
        self._next_slot = slot + spacing
        return slot - self._shift

    def _release(self, now: float, mark: float) -> tuple[float | None, float | None]:
        """(None, gap) to let the request booked at `mark` go now, else (when to look
        again, None); `gap` is the time since the release before it.

        What holds a release: a throttle window, one refill since the last release (the
        loop may wake several sleepers at once), a late arrival's refill. When one holds
        a request past its slot, every later booking moves back by as much, so the queue
        keeps its spacing instead of bunching up behind the hold.
        """
        slot = mark + self._shift
        if now < slot:
            return slot, None
        held = max(self._blocked_until, self._last_release + self._interval, self._not_before)
        if held > slot:
            if now < held:
                return held, None
            self._shift += held - slot
            self._next_slot += held - slot
        gap = now - self._last_release if math.isfinite(self._last_release) else None
        self._last_release = now
        return None, gap
