"""`RequestPacer`: spaces one adapter's requests while its provider is throttling it."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import cast

from .messages import RateLimitInfo
from .retry import HasRemaining

__all__ = ["RequestPacer"]

_LOW_FRACTION = 0.25  # remaining <= max(1, limit/4): the allowance is nearly spent, pace
_PLENTY_FRACTION = 0.5  # remaining >= limit/2 (and >= 2): no need to pace, relax
_RELAX = 0.5  # each relaxed response halves the interval
_SETTLE = 0.9  # a smaller sample lowers the interval gently (reset values are rounded)
_MIN_INTERVAL = 1e-4  # below this, spacing requests is pointless: stop pacing
_MAX_INTERVAL = 60.0
_THROTTLE_INTERVAL_CAP = 1.0  # a long retry-after holds everyone; it does not space them
_UNKNOWN_WAIT = 0.5  # a throttle that did not say how long: hold everyone this long
_UNKNOWN_INTERVAL = 0.05
_FORGET_AFTER = 5.0  # pacing that nothing has confirmed for this long is dropped
_MARGIN_MIN, _MARGIN_MAX, _MARGIN_STEP, _MARGIN_EASE = 0.05, 0.5, 0.04, 0.0005
_RTT_DRIFT = 0.01  # how fast the round-trip baseline follows a slower network

# (pacer, when it let this task's request go): pairs `acquire` with the answer's report
_released: ContextVar[tuple[RequestPacer, float] | None] = ContextVar(
    "wink_pacer_released", default=None
)


class RequestPacer:
    """Spaces one adapter's requests so a throttling provider is not hit by a herd.

    One per adapter, shared by all its concurrent requests, from any thread or event
    loop: the state is a few floats under a `threading.Lock`, and waiting is a plain
    sleep, so no asyncio primitive is tied to a loop.

    Why: with 50 requests in flight against a provider that refills one request every
    10 ms, retrying each 429 on its own makes all 50 chase the same free slot, and 49
    of them get another 429; releasing every waiter when a throttle window ends does the
    same. So the pacer hands out slots one at a time:

    * `acquire` books `slot = max(now, blocked_until, next_slot)`, moves `next_slot` on
      by the spacing (`interval` plus a small safety margin) and sleeps until the slot;
    * `on_throttle(retry_after)` holds everyone until `now + retry_after` and takes
      `retry_after` as a lower bound of `interval` (an honest retry-after is at most one
      refill away). A request the pacer let through and still throttled widens the
      margin; answers on a nearly spent allowance narrow it back slowly;
    * `on_response(info)` learns `interval` from the rate-limit headers. With the
      allowance nearly spent (remaining <= max(1, limit/4)) the provider refills one
      request every `reset / max(1, limit - remaining)` seconds: that is the interval.
      With plenty left (remaining >= limit/2) the interval halves on each answer down to
      zero, so per-minute limits such as OpenAI's (30000, 29999 left, reset "2ms") never
      add a wait;
    * on an empty allowance the provider's refill clock starts when a request *arrives*.
      A request that took longer than the fastest round trip seen may have arrived late
      by that much, so the next one is held back by the same amount (when its answer
      comes back before the next release, the usual case). Arrival jitter would
      otherwise cost a throttle, and a throttled request waits its whole backoff;
    * a sleeper that wakes too close to the previous release (the loop stalled and woke
      several at once) waits the difference; one woken inside a hold that began while
      it slept books a new slot;
    * pacing that nothing confirms for `_FORGET_AFTER` seconds (no throttle, no nearly
      spent allowance: e.g. Gemini, which sends no such headers) is dropped.

    When not pacing, `idle` is True and callers skip `acquire` altogether:
    `if not pacer.idle: await pacer.acquire()` costs one attribute read.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep
        self._active = False
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
            f"idle={self.idle})"
        )

    @property
    def idle(self) -> bool:
        """True when `acquire` would return at once: nothing throttled, nothing to pace."""
        return not self._active

    @property
    def interval(self) -> float:
        """The learned seconds between two requests (0 = not pacing), before the margin."""
        return self._interval

    async def acquire(self, deadline: HasRemaining | None = None) -> bool:
        """Wait until this request may be sent: True then, False at once when that would be
        at or past `deadline` (no wait that cannot end in a request).

        Report the answer from the same task (`on_response` / `on_throttle`).
        """
        if not self._active:
            return True
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        with self._lock:
            mark = self._reserve(self._clock())
        if mark is None:
            return True
        wake: float | None = mark + self._shift
        while wake is not None:
            delay = wake - self._clock()
            if deadline is not None and delay >= deadline.remaining():
                return False
            if delay > 0:
                await sleep(delay)
            with self._lock:
                wake = self._release(self._clock(), mark)
        _released.set((self, self._last_release))
        return True

    def on_throttle(self, retry_after: float | None) -> None:
        """A request was throttled: hold every request until the provider's window ends."""
        paced = self._take_release() is not None
        known = retry_after is not None and math.isfinite(retry_after) and retry_after >= 0
        wait = cast(float, retry_after) if known else _UNKNOWN_WAIT
        floor = min(wait, _THROTTLE_INTERVAL_CAP) if known else _UNKNOWN_INTERVAL
        with self._lock:
            now = self._clock()
            if paced:  # the pacer let this request go, and it was throttled all the same
                self._margin = min(_MARGIN_MAX, self._margin + _MARGIN_STEP)
            self._blocked_until = max(self._blocked_until, now + wait)
            if floor >= _MIN_INTERVAL:
                self._interval = max(self._interval, floor)
            self._confirmed_at = max(self._confirmed_at, self._blocked_until)
            self._active = True

    def on_response(self, info: RateLimitInfo | None) -> None:
        """Learn the provider's pace from a response's rate-limit headers."""
        released = self._take_release()
        if info is None or info.remaining_requests is None:
            return
        limit, remaining = info.limit_requests, info.remaining_requests
        if remaining > max(1.0, (limit or 0) * _LOW_FRACTION):
            plenty = limit is not None and remaining >= max(2.0, limit * _PLENTY_FRACTION)
            if plenty and self._interval > 0.0:
                with self._lock:
                    self._relax()
            return
        reset = info.reset_requests
        if reset is None or not math.isfinite(reset) or reset < 0:
            return
        if info.reset_is_time and released is not None:
            # a clock time was turned into "seconds from now" on arrival: add back about
            # half the round trip, the time the answer spent coming back
            reset += max(0.0, self._clock() - released) / 2
        deficit = max(1, limit - remaining) if limit is not None else 1
        sample = min(reset / deficit, _MAX_INTERVAL)
        with self._lock:
            now = self._clock()
            current = self._interval
            learned = sample if sample >= current else max(sample, current * _SETTLE)
            if learned < _MIN_INTERVAL:
                self._stop_pacing()
                return
            if remaining <= 0:
                self._follow_refill_clock(now, released, learned)
            self._interval = learned
            self._margin = max(_MARGIN_MIN, self._margin - _MARGIN_EASE)
            self._confirmed_at = max(self._confirmed_at, now)
            self._active = True

    # ---- internals (the lock is held in every method below but `_take_release`)

    def _take_release(self) -> float | None:
        """When this task's request was let go by this pacer, if it was (read once)."""
        released = _released.get()
        if released is None:
            return None
        _released.set(None)
        pacer, at = released
        return at if pacer is self else None

    def _follow_refill_clock(self, now: float, released: float | None, interval: float) -> None:
        """The allowance is empty: the next request must arrive one refill after this one."""
        if self._interval == 0.0:  # pacing starts: the next request waits for a refill
            self._next_slot = max(self._next_slot, now + interval)
        if released is None:
            return
        round_trip = now - released
        if round_trip < self._round_trip:
            self._round_trip = round_trip
        else:
            self._round_trip += (round_trip - self._round_trip) * _RTT_DRIFT
        late = round_trip - self._round_trip
        self._not_before = max(self._not_before, released + late + interval)

    def _stop_pacing(self) -> None:
        self._interval, self._margin = 0.0, _MARGIN_MIN

    def _relax(self) -> None:
        relaxed = self._interval * _RELAX
        if relaxed >= _MIN_INTERVAL:
            self._interval = relaxed
        else:
            self._stop_pacing()

    def _spacing(self, now: float) -> float:
        """Seconds between two releases, 0 when not pacing."""
        if self._interval == 0.0:
            return 0.0
        if now > self._confirmed_at + _FORGET_AFTER:
            self._stop_pacing()
            return 0.0
        return self._interval * (1.0 + self._margin)

    def _reserve(self, now: float) -> float | None:
        """Book the next free slot: its mark (slot minus the shift so far), None to go now."""
        spacing = self._spacing(now)
        if spacing == 0.0 and self._blocked_until <= now:
            self._active = False
            return None
        slot = max(now, self._blocked_until, self._next_slot, self._last_release + spacing)
        self._next_slot = slot + spacing
        return slot - self._shift

    def _release(self, now: float, mark: float) -> float | None:
        """None to let the request booked at `mark` go now, else when to look again.

        What holds a release: a throttle window, one refill since the last release (the
        loop may wake several sleepers at once), a late arrival's refill. When one holds
        a request past its slot, every later booking moves back by as much, so the queue
        keeps its spacing instead of bunching up behind the hold.
        """
        slot = mark + self._shift
        if now < slot:
            return slot
        held = max(self._blocked_until, self._last_release + self._interval, self._not_before)
        if held > slot:
            if now < held:
                return held
            self._shift += held - slot
            self._next_slot += held - slot
        self._last_release = now
        return None
