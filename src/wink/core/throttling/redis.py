"""`RedisLimiter`: one provider's pace shared by every process of a fleet, through Redis.

The pace is the same three numbers as in one process (the interval, the hold, the
booked slots: `wink.core.throttling.pace_store`), kept in one Redis hash per key and
stepped by a Lua script with the same semantics as `MemoryStore`; each process learns
from its own answers with the same `PaceLearner` and sends the changes. Needs redis-py
(`pip install 'wink[redis]'`), imported when the first `RedisLimiter` is created, never
by `import wink`. See docs/fleet.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..foundation.checks import kind_of
from ..foundation.errors import ConfigurationError
from ..foundation.runtime import on_loop_exit
from .limiter import Limiter, check_key
from .pace_store import HALF_TICK, MemoryStore, PaceChange, PaceState
from .pacing import RequestPacer

__all__ = ["RedisLimiter", "RedisStore"]

_log = logging.getLogger("wink.limiter")

_EPOCH = 1_700_000_000  # Redis TIME minus this keeps microseconds exact in a double
_TTL_MS = 3_600_000  # a key nobody has touched for an hour is dropped
_FOREVER = 1e18  # "no deadline", as a number Lua reads
_INITIAL_WINDOW = 1  # per process: a fleet's processes often start together
_CONCURRENT_CALLS = 8  # per event loop: 50 requests opening 50 connections at once is slow
_MAX_CONNECTIONS = 64
_RECENT_TRIPS = 8  # the measured round trip to Redis moves 1/8 of the way per step
_LEAD_CAP = 0.005  # seconds: a slower Redis is not a reason to take slots further ahead

# One atomic step of `MemoryStore` on a key (see `wink.core.throttling.pace_store` for the meaning):
# apply the change, then book, release or only read. Times are Redis's clock (less
# _EPOCH), so machines need not agree on theirs, or the caller's clock when it sends one
# (tests do). A missing key is seeded with the caller's pace, which has the change in it
# already (a Redis that restarted empty learns what the fleet knew), and is not written
# while it would say nothing.
# Every number goes out with 17 significant digits: the same doubles as in Python.
_SCRIPT = f"""
local key = KEYS[1]
local now = tonumber(ARGV[1])
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = (tonumber(t[1]) - {_EPOCH}) + tonumber(t[2]) / 1000000
end
local s = redis.call('HMGET', key, 'interval', 'held', 'tat', 'last', 'shift')
local interval = tonumber(s[1])
local held = tonumber(s[2]) or -math.huge
local tat = tonumber(s[3]) or -math.huge
local last = tonumber(s[4]) or -math.huge
local shift = tonumber(s[5]) or 0
local missing = interval == nil
if missing then  -- the caller's pace, its change already applied
  interval = tonumber(ARGV[2])
  if tonumber(ARGV[3]) > 0 then held = now + tonumber(ARGV[3]) end
else
  local hold, factor, floor = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  if hold > 0 then held = math.max(held, now + hold) end
  interval = math.max(interval * factor, floor)
end
local action, most, mark = ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9])
local lead = tonumber(ARGV[10])
local wait, go = -1, 0
if action == 'book' then
  mark = 0
  if interval == 0 and held <= now then
    wait, go = 0, 1
  else
    local slot = math.max(now, tat, held, last + interval)
    if not (slot > now and slot - now >= most) then
      tat = slot + interval
      if slot - now <= lead then
        last = slot
        wait, go = slot - now, 1
      else
        wait, mark = slot - now, slot - shift
      end
    end
  end
elseif action == 'release' then
  local slot = mark + shift
  local h = math.max(held, last + interval)
  local due = math.max(slot, h)
  if due > now and due - now >= most then
    wait = -1
  elseif due - now > lead then
    wait = due - now
  else
    if h > slot then
      shift = shift + h - slot
      tat = tat + h - slot
    end
    last = math.max(due, now)
    wait, go = math.max(0, due - now), 1
  end
else
  mark = 0
end
local function f(x) return string.format('%.17g', x) end
if not missing or interval > 0 or held > now then
  local fields = {{'interval', f(interval), 'shift', f(shift)}}
  for name, value in pairs({{held = held, tat = tat, last = last}}) do
    if value > -math.huge then
      table.insert(fields, name)
      table.insert(fields, f(value))
    end
  end
  redis.call('HSET', key, unpack(fields))
  redis.call('PEXPIRE', key, {_TTL_MS})
end
return {{f(wait), f(mark), f(interval), f(math.max(0, held - now)), go}}
"""


def _parse(raw: Any) -> PaceState:
    """The script's reply: wait (-1: none), mark, interval, held_for, go (0 or 1)."""
    wait, mark, interval, held_for, go = (
        float(item.decode() if isinstance(item, bytes) else item) for item in raw
    )
    waited = None if wait < 0 else wait
    return PaceState(waited, mark, interval, held_for, shared=True, go=go == 1)


def _redact(url: str) -> str:
    """The URL without its password, for logs and reprs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    masked = f"{user}:[redacted]@{netloc}"
    return urlunsplit((parts.scheme, masked, parts.path, parts.query, parts.fragment))


class RedisLimiter(Limiter):
    """Shares what adapters learn about a provider's limit across processes and machines.

    Every process using the same `namespace` (one per API key) and the same key (the
    adapter's `"provider:model"`) shares, through one Redis hash: the throttle window (a
    429's `retry_after` holds the whole fleet), the learned interval between requests,
    and the pacing slots themselves (booked atomically in a Lua script, so two processes
    never take the same slot).

    Redis never fails an evaluation: a call that errors or takes longer than `timeout`
    seconds makes every pacer of this limiter pace in-process (with what it knew) and
    logs one warning; Redis is tried again after `retry_every` seconds. While nothing is
    throttled, a process asks Redis at most once per `refresh` seconds whether the
    fleet has started pacing; requests in between cost nothing.
    """

    def __init__(
        self,
        url: str,
        *,
        namespace: str,
        timeout: float = 0.5,
        refresh: float = 0.1,
        retry_every: float = 1.0,
        prefix: str = "wink:limiter",
    ) -> None:
        for name, text in (("url", url), ("namespace", namespace), ("prefix", prefix)):
            if not isinstance(text, str) or not text:  # pyright: ignore[reportUnnecessaryIsInstance]
                given = "an empty string" if text == "" else kind_of(text)  # never the URL
                raise ConfigurationError(
                    f"RedisLimiter({name}=...) must be a non-empty string, got {given}",
                    option=name,
                )
        for name, number in (("timeout", timeout), ("refresh", refresh)):
            if not (_is_number(number) and math.isfinite(number) and number > 0):
                raise ConfigurationError(
                    f"RedisLimiter({name}=...) must be a positive number of seconds, "
                    f"got {number!r}",
                    option=name,
                )
        if not (_is_number(retry_every) and retry_every >= 0):
            raise ConfigurationError(
                f"RedisLimiter(retry_every=...) must be a number of seconds >= 0, "
                f"got {retry_every!r}",
                option="retry_every",
            )
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigurationError(
                f"RedisLimiter(url=...) takes a redis://, rediss:// or unix:// URL, "
                f"not {_redact(url)!r}",
                option="url",
            )
        self._redis = _import_redis()
        self._url = url
        self.namespace = namespace
        self.timeout = float(timeout)
        self.refresh = float(refresh)
        self.retry_every = float(retry_every)
        self._prefix = f"{prefix}:{namespace}:"
        self._lock = threading.Lock()
        self._pacers: dict[str, RequestPacer] = {}
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[Any, Any, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()
        self._down_until = self._failed_at = -math.inf
        self._warned = False

    def __repr__(self) -> str:
        return f"RedisLimiter({_redact(self._url)!r}, namespace={self.namespace!r})"

    @property
    def url(self) -> str:
        """The Redis URL, its password redacted."""
        return _redact(self._url)

    @property
    def available(self) -> bool:
        """False while pacing in-process after a Redis failure."""
        return time.monotonic() >= self._down_until

    def pacer(self, key: str) -> RequestPacer:
        """The pacer for `key`: a `RequestPacer` over this limiter's Redis (`RedisStore`),
        whose cold start lets one request out per process, not four."""
        check_key(key)
        with self._lock:
            pacer = self._pacers.get(key)
            if pacer is None:
                store = RedisStore(self, self._prefix + key)
                pacer = self._pacers[key] = RequestPacer(store, initial_window=_INITIAL_WINDOW)
            return pacer

    async def check(self) -> bool:
        """Ask Redis once: connects (on this event loop) and loads the script. False if it
        did not answer, and pacing stays in-process until it does. Optional: a process
        that skips it connects on its first request."""
        args = ["", "0", "0", "0", "1", "0", "apply", "0", "0", "0"]
        return await self._run(f"{self._prefix}__check__", args) is not None

    async def aclose(self) -> None:
        """Close the Redis connections this limiter opened on the running event loop."""
        with self._lock:
            entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].aclose()

    async def __aenter__(self) -> RedisLimiter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _run(self, key: str, args: list[str]) -> tuple[PaceState, float] | None:
        """One step of the script on `key`: its reply, and the seconds from sending it to
        the reply (the round trip, a queue for a connection left out). None when Redis
        cannot be used right now (the failure is logged once, and Redis is left alone for
        `retry_every`)."""
        started = time.monotonic()
        if started < self._down_until:
            return None
        try:
            script, calls = self._script()
            async with calls:  # a queue here is not Redis being slow: outside the timeout
                sent = time.monotonic()
                async with asyncio.timeout(self.timeout):
                    raw = await script(keys=[key], args=args)
                trip = time.monotonic() - sent
            reply = _parse(raw)
        except Exception as error:  # whatever Redis does, the evaluation goes on
            self._failed(error)
            await self._drop_client()
            return None
        if self._warned and started > self._failed_at:  # not a call from before the failure
            with self._lock:
                recovered, self._warned = self._warned, False
            if recovered:
                _log.warning("Redis at %s answers again: pacing is shared again", self.url)
        return reply, trip

    def _script(self) -> tuple[Any, asyncio.Semaphore]:
        """This loop's script object, and the few calls it may have in flight at once."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._clients.get(loop)
        if entry is None:
            redis = self._redis
            client = redis.asyncio.Redis.from_url(
                self._url,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                max_connections=_MAX_CONNECTIONS,
                retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
            )
            script = client.register_script(_SCRIPT)
            entry = (client, script, asyncio.Semaphore(_CONCURRENT_CALLS))
            with self._lock:
                self._clients[loop] = entry
            on_loop_exit(loop, self._drop_client)  # the portal's: closed at exit
        return entry[1], entry[2]

    async def _drop_client(self) -> None:
        """Forget this loop's client: its pooled connections may all be dead (a restarted
        server), and each would fail once more. The next call connects afresh."""
        with self._lock:
            entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.timeout):
                    await entry[0].aclose()

    def _failed(self, error: Exception) -> None:
        with self._lock:
            self._failed_at = time.monotonic()
            self._down_until = self._failed_at + self.retry_every
            warn, self._warned = not self._warned, True
        if warn:
            reason = str(error).replace(self._url, self.url) or type(error).__name__
            _log.warning(
                "Redis at %s failed (%s: %s): pacing in-process until it answers again",
                self.url,
                type(error).__name__,
                reason,
            )


class RedisStore:
    """One key's pace in Redis: the script above, with this process's `MemoryStore` as
    its mirror and its fallback.

    Every reply is adopted by the mirror, so while Redis is away (the limiter says when)
    the key is paced in-process from what the fleet knew. An urgent change (a 429,
    pacing that starts or stops) is sent at once; any other (a probe, the next refill
    after a success) goes with this process's next step, its hold shortened by the time
    it waited.
    While the fleet is not pacing, a process reads the key at most once per `refresh`
    (concurrent callers on one loop share the read) and books nothing; while it is,
    every booking and every release is a step. A slot due within one round trip to
    Redis (`lead`: measured, at least `HALF_TICK`, unless given) is taken at once:
    asking again could not send it sooner, and each ask makes the request later by a
    round trip.
    """

    def __init__(
        self,
        limiter: RedisLimiter,
        key: str,
        clock: Callable[[], float] | None = None,
        *,
        lead: float | None = None,
    ) -> None:
        self._limiter = limiter
        self._key = key
        self._lead = lead  # None: the measured round trip
        self._round_trip = 0.0
        self._clock = clock  # None: Redis's own clock
        self._local_clock = clock if clock is not None else time.monotonic
        self._local = MemoryStore(self._local_clock)
        self._pending = PaceChange()  # not sent yet, but the hold: `_held_until` says it
        self._held_until = -math.inf  # the pending hold's end, on the local clock
        self._read_at = -math.inf
        self._fleet_paces = False  # as last read
        self._steps = self._adopted = 0  # steps started; the latest whose reply was adopted
        self._in_flight: dict[int, PaceChange] = {}  # what each step still out has sent
        self._reading: asyncio.Task[PaceState | None] | None = None

    def __repr__(self) -> str:
        return f"RedisStore({self._key!r}, local={self._local!r})"

    @property
    def local(self) -> MemoryStore:
        """The mirror: the fallback while Redis is away."""
        return self._local

    @property
    def lead(self) -> float:
        """Seconds: a slot due this soon is taken at once (see the class)."""
        if self._lead is not None:
            return self._lead
        return max(HALF_TICK, min(self._round_trip, _LEAD_CAP))

    async def apply(self, change: PaceChange) -> PaceState:
        before = self._local.apply_now(PaceChange())
        local = self._local.apply_now(change)
        if not self._limiter.available or (
            change.hold <= 0.0 and local.interval == before.interval
        ):
            return local  # Redis is away (the fleet will not replay it), or nothing new
        self._pending = self._pending.then(PaceChange(0.0, change.factor, change.floor))
        if change.hold > 0.0:
            self._held_until = max(self._held_until, self._local_clock() + change.hold)
        if not change.urgent:
            return local
        return await self._step("apply") or local

    async def book(self, most: float) -> PaceState:
        if self._limiter.available:
            pending = not self._pending.empty or self._held_until > -math.inf
            read = False
            if not pending and not self._fresh():
                read = await self._read()
            # A read this call waited for is fresh enough, however long it took: asking
            # again would make every caller that shared it take a connection of its own.
            if pending or self._fleet_paces or not (read or self._fresh()):
                reply = await self._step("book", most)
                if reply is not None:
                    return reply
        return self._local.book_now(most)

    async def release(self, booked: PaceState, most: float) -> PaceState:
        if self._limiter.available:  # booked here while Redis was away: join the fleet
            action = "release" if booked.shared else "book"
            reply = await self._step(action, most, booked.mark)
            if reply is not None:
                return reply
        if booked.shared:  # booked in Redis, which failed since: book here instead
            return self._local.book_now(most)
        return self._local.release_now(booked.mark, most)

    def _fresh(self) -> bool:
        return time.monotonic() - self._read_at < self._limiter.refresh

    async def _read(self) -> bool:
        """Read the shared pace; concurrent callers on one loop share one read. False if
        Redis did not answer."""
        loop = asyncio.get_running_loop()
        task = self._reading
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._reading = loop.create_task(self._step("apply"))
        return await asyncio.shield(task) is not None

    async def _step(self, action: str, most: float = 0.0, mark: float = 0.0) -> PaceState | None:
        pending = self._pending
        # on its own clock, Redis starts the hold when the step arrives, a one-way trip on
        in_transit = self._round_trip / 2 if self._clock is None else 0.0
        hold = max(0.0, self._held_until - self._local_clock() - in_transit)
        sent = PaceChange(hold, pending.factor, pending.floor)
        self._pending, self._held_until = PaceChange(), -math.inf
        seed = self._local.apply_now(PaceChange())
        now = "" if self._clock is None else repr(self._clock())
        args = [now, repr(seed.interval), repr(seed.held_for)]
        args += [repr(sent.hold), repr(sent.factor), repr(sent.floor)]
        args += [action, repr(min(most, _FOREVER)), repr(mark), repr(self.lead)]
        self._steps += 1
        step = self._steps
        self._in_flight[step] = sent
        try:
            answer = await self._limiter._run(self._key, args)
        finally:
            del self._in_flight[step]
        if answer is None:
            return None
        reply, trip = answer
        self._round_trip += (trip - self._round_trip) / _RECENT_TRIPS
        if self._clock is None:  # else the caller's clock, read before sending
            reply = _arrived(reply, trip, self.lead)
        if step > self._adopted:
            self._adopt(step, reply)
        return reply

    def _adopt(self, step: int, reply: PaceState) -> None:
        """Take Redis's pace as the mirror's, with what this process has changed since
        (steps started later, still in flight: an answer may overtake an earlier one;
        changes not sent yet)."""
        self._adopted = step
        self._local.adopt(reply.interval, reply.held_for)
        for later in sorted(self._in_flight):
            if later > step:
                self._local.apply_now(self._in_flight[later])
        self._local.apply_now(self._pending)
        self._fleet_paces = reply.pacing
        self._read_at = time.monotonic()


def _arrived(reply: PaceState, trip: float, lead: float) -> PaceState:
    """`reply` on this process's clock: Redis counted its waits from its own now, half
    the round trip `trip` ago. A caller who may go sleeps that much less, so it sends at
    its slot. One who must ask again sleeps a whole round trip and `lead` less, so that
    its next step reaches Redis within the lead before its slot (taken at once), not a
    round trip and a timer tick after it: then the slot would go late, and the lateness
    would stay in the pace (each slot later by as much, and every slot after it)."""
    one_way = trip / 2
    wait = reply.wait
    if wait is not None and wait > 0.0:
        wait = max(0.0, wait - (one_way if reply.go else trip + lead))
    return replace(reply, wait=wait, held_for=max(0.0, reply.held_for - one_way))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _import_redis() -> Any:
    try:
        redis = importlib.import_module("redis")
        importlib.import_module("redis.asyncio")
        importlib.import_module("redis.asyncio.retry")
        importlib.import_module("redis.backoff")
    except ImportError as error:
        raise ImportError(
            "RedisLimiter needs redis-py: pip install 'wink[redis]'", name="redis"
        ) from error
    return redis
