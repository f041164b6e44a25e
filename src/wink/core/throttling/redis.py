"""`RedisLimiter`: one provider's pace shared by every process of a fleet, through Redis.

Needs redis-py (`pip install 'wink[redis]'`), imported when the first `RedisLimiter` is
created, never by `import wink`. See docs/fleet.md.
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
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..foundation.checks import kind_of
from ..foundation.errors import ConfigurationError
from ..foundation.messages import RateLimitInfo
from .limiter import Limiter, check_key
from .pacing import (
    FORGET_AFTER,
    FORGET_INTERVALS,
    MIN_INTERVAL,
    RELAX,
    SETTLE,
    RequestPacer,
)
from .retry import HasRemaining

__all__ = ["RedisLimiter", "RedisPacer"]

_log = logging.getLogger("wink.limiter")

_EPOCH = 1_700_000_000  # Redis TIME minus this keeps microseconds exact in a double
_TTL_MS = 3_600_000  # a key nobody has touched for an hour is dropped
_NO_DEADLINE = 1e9
_INITIAL_WINDOW = 1  # per process: a fleet's processes often start together
_CONCURRENT_CALLS = 8  # per event loop: 50 requests opening 50 connections at once is slow
_MAX_CONNECTIONS = 64

# One atomic step on a key's shared state: replay the caller's `PaceOp`s, forget pacing
# nothing has confirmed, then book a slot (GCRA: `tat` is the next free slot), release a
# booked one, or only read. Times are Redis's clock, so machines need not agree on
# theirs; the caller gets durations back. A missing key is seeded with the caller's
# state (a Redis that restarted empty learns what the fleet knew).
_SCRIPT = f"""
local key = KEYS[1]
local t = redis.call('TIME')
local now = (tonumber(t[1]) - {_EPOCH}) + tonumber(t[2]) / 1000000
local s = redis.call('HMGET', key, 'interval', 'blocked', 'tat', 'last', 'confirmed', 'shift',
  'backed_off', 'not_before')
local interval = tonumber(s[1]) or 0
local blocked = tonumber(s[2]) or 0
local tat = tonumber(s[3]) or 0
local last = tonumber(s[4])
local confirmed = tonumber(s[5]) or 0
local shift = tonumber(s[6]) or 0
local backed_off = tonumber(s[7]) or 0
local not_before = tonumber(s[8]) or 0
if s[1] == false then
  interval = tonumber(ARGV[1])
  local held = tonumber(ARGV[2])
  if held > 0 then blocked = now + held end
  if interval > 0 then confirmed = now end
end
local i = 4
for _ = 1, tonumber(ARGV[3]) do
  local kind, value, floor, at = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]),
    tonumber(ARGV[i + 3])
  i = i + 4
  if kind == 'hold' then
    blocked = math.max(blocked, now + value)
    if floor >= {MIN_INTERVAL!r} then interval = math.max(interval, floor) end
    confirmed = math.max(confirmed, blocked)
  elseif kind == 'settle' then
    local learned = value
    if value < interval then learned = math.max(value, interval * {SETTLE!r}) end
    if learned < {MIN_INTERVAL!r} then
      interval = 0
    else
      interval = learned
      confirmed = math.max(confirmed, now)
    end
  elseif kind == 'follow' then
    not_before = math.max(not_before, at + value)
  elseif kind == 'backoff' then
    if at > backed_off then
      interval = interval * value
      backed_off = now
    end
  elseif kind == 'relax' or kind == 'scale' then
    if kind == 'relax' then value = {RELAX!r} end
    interval = interval * value
    if interval < {MIN_INTERVAL!r} then interval = 0 end
  end
end
local unconfirmed = math.max({FORGET_AFTER!r}, {FORGET_INTERVALS!r} * interval)
if interval > 0 and now > confirmed + unconfirmed then interval = 0 end
local action, margin, arg = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
local spacing = interval * (1 + margin)
local verdict, wait, mark, gap = 'idle', 0, 0, -1
local function go()
  verdict = 'go'
  if last then gap = now - last end
  last = now
end
if action == 'book' and (spacing > 0 or blocked > now) then
  local slot = math.max(now, blocked, tat)
  if last then slot = math.max(slot, last + spacing) end
  if slot - now >= arg then
    verdict = 'late'
  else
    tat = slot + spacing
    if slot <= now then go() else verdict, wait, mark = 'wait', slot - now, slot - shift end
  end
elseif action == 'release' then
  local slot = arg + shift
  if now < slot then
    verdict, wait, mark = 'wait', slot - now, arg
  else
    local held = math.max(blocked, not_before)
    if last then held = math.max(held, last + interval) end
    if held > slot and now < held then
      verdict, wait, mark = 'wait', held - now, arg
    else
      if held > slot then
        shift = shift + held - slot
        tat = tat + held - slot
      end
      go()
    end
  end
end
local function f(x) return string.format('%.6f', x) end
local reply = {{verdict, f(wait), f(mark), f(interval), f(math.max(0, blocked - now)),
  f(now - confirmed), f(gap), f(now)}}
if s[1] == false and interval == 0 and blocked <= now and verdict == 'idle' then
  return reply  -- nothing known, nothing booked: leave no key behind
end
local fields = {{'interval', f(interval), 'blocked', f(blocked), 'tat', f(tat),
  'confirmed', f(confirmed), 'shift', f(shift), 'backed_off', f(backed_off),
  'not_before', f(not_before)}}
if last then
  table.insert(fields, 'last')
  table.insert(fields, f(last))
end
redis.call('HSET', key, unpack(fields))
redis.call('PEXPIRE', key, {_TTL_MS})
return reply
"""


@dataclass(frozen=True, slots=True)
class _Reply:
    """What one step of the script answered (durations in seconds)."""

    verdict: str  # idle | go | wait | late
    wait: float
    mark: float
    interval: float
    blocked_for: float
    confirmed_ago: float
    gap: float | None
    now: float  # Redis's clock, less the epoch

    @classmethod
    def parse(cls, raw: Any) -> _Reply:
        verdict, *numbers = (
            item.decode() if isinstance(item, bytes) else str(item) for item in raw
        )
        wait, mark, interval, blocked_for, ago, gap, now = (float(n) for n in numbers)
        return cls(verdict, wait, mark, interval, blocked_for, ago, gap if gap >= 0 else None, now)


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
        self._pacers: dict[str, RedisPacer] = {}
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

    def pacer(self, key: str) -> RedisPacer:
        check_key(key)
        with self._lock:
            pacer = self._pacers.get(key)
            if pacer is None:
                pacer = self._pacers[key] = RedisPacer(self, self._prefix + key)
            return pacer

    async def check(self) -> bool:
        """Ask Redis once: connects (on this event loop) and loads the script. False if it
        did not answer, and pacing stays in-process until it does. Optional: a process
        that skips it connects on its first request."""
        args = ["0", "0", "0", "state", "0", "0"]
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

    async def _run(self, key: str, args: list[str]) -> _Reply | None:
        """One step of the script on `key`; None when Redis cannot be used right now."""
        started = time.monotonic()
        if started < self._down_until:
            return None
        try:
            script, calls = self._script()
            async with calls:  # a queue here is not Redis being slow: outside the timeout
                async with asyncio.timeout(self.timeout):
                    raw = await script(keys=[key], args=args)
            reply = _Reply.parse(raw)
        except Exception as error:  # whatever Redis does, the evaluation goes on
            self._failed(error)
            await self._drop_client()
            return None
        if self._warned and started > self._failed_at:  # not a call from before the failure
            with self._lock:
                recovered, self._warned = self._warned, False
            if recovered:
                _log.warning("Redis at %s answers again: pacing is shared again", self.url)
        return reply

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


class RedisPacer:
    """One key's pacing through a `RedisLimiter`; a `RequestPacer` learns and stands in.

    The local pacer learns from this process's answers exactly as the in-process
    limiter does; every change it makes is replayed on the shared state, and the shared
    state read back is adopted locally, so the fallback starts from what the fleet knew.
    While the fleet is not pacing, the local pacer's cold start decides (one request in
    flight, one more per success: the processes of a fleet often start together), and
    Redis is read at most once per `refresh`; while it is, every request books its slot
    in Redis.
    """

    def __init__(self, limiter: RedisLimiter, redis_key: str) -> None:
        self._limiter = limiter
        self._key = redis_key
        self._local = RequestPacer(record_ops=True, initial_window=_INITIAL_WINDOW)
        self._checked_at = -math.inf
        self._pacing = False  # the fleet paces this key, as last read
        self._reading: asyncio.Task[_Reply | None] | None = None

    def __repr__(self) -> str:
        return f"RedisPacer({self._key!r}, local={self._local!r})"

    @property
    def local(self) -> RequestPacer:
        """The in-process pacer: the learner, and the fallback while Redis is away."""
        return self._local

    @property
    def idle(self) -> bool:
        return self._local.idle and (not self._limiter.available or self._fresh())

    async def acquire(self, deadline: HasRemaining | None = None) -> bool:
        local = self._local
        if not self._limiter.available:
            return await local.acquire(deadline)
        if not self._fresh():
            await self._refresh()
        if not self._pacing:
            turn = await local.cold_turn(deadline)
            if turn != "pace":
                return turn == "go"
        max_wait = deadline.remaining() if deadline is not None else _NO_DEADLINE
        reply = await self._step("book", max_wait)
        while reply is not None and reply.verdict != "idle":
            if reply.verdict == "late":
                return False
            if reply.verdict == "go":
                local.let_go(reply.gap, reply.now)
                return True
            if deadline is not None and reply.wait >= deadline.remaining():
                return False
            await asyncio.sleep(reply.wait)
            reply = await self._step("release", reply.mark)
        return await local.acquire(deadline)  # Redis failed, or knows less than we do

    async def on_throttle(self, retry_after: float | timedelta | None) -> None:
        self._local.throttled(retry_after)
        await self._step("state", 0.0)  # the whole fleet holds from now on

    async def on_response(self, info: RateLimitInfo | None) -> None:
        local = self._local
        local.answered(info)
        if not self._pacing and not local.idle and local.has_ops:
            await self._step("state", 0.0)  # pacing starts: tell the fleet now
        # otherwise what it learned goes with the next step

    def _fresh(self) -> bool:
        return time.monotonic() - self._checked_at < self._limiter.refresh

    async def _refresh(self) -> None:
        """Read the shared state; concurrent callers on one loop share one read."""
        loop = asyncio.get_running_loop()
        task = self._reading
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._reading = loop.create_task(self._step("state", 0.0))
        await asyncio.shield(task)

    async def _step(self, action: str, arg: float) -> _Reply | None:
        local = self._local
        ops = local.take_ops()
        interval, held = local.state()
        args = [repr(interval), repr(held), str(len(ops))]
        for op in ops:
            args += [op.kind, repr(op.value), repr(op.floor), repr(op.at)]
        args += [action, repr(local.margin), repr(arg)]
        reply = await self._limiter._run(self._key, args)
        if reply is not None:
            local.adopt(reply.interval, reply.blocked_for, reply.confirmed_ago)
            self._pacing = reply.interval > 0.0 or reply.blocked_for > 0.0
            self._checked_at = time.monotonic()
        return reply


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
