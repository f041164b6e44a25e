"""Throttling, decided once for every provider: what the provider asked, retries, pacing.

* header and error-body parsing: adapters pass what they received and never parse a
  rate-limit header themselves (formats in /work/shared/PROVIDERS.md);
* `RetryPolicy`: tenacity, composed from the small strategies below;
* `RequestPacer`: spaces one adapter's requests while the provider is throttling it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar, cast

from tenacity import AsyncRetrying, RetryCallState, RetryError, retry_base
from tenacity.stop import stop_after_attempt, stop_base
from tenacity.wait import wait_base, wait_exponential

from .errors import ThrottleDetails, ThrottleError, ThrottleKind
from .messages import RateLimitInfo

__all__ = [
    "RequestPacer",
    "RetryIfRetrySafe",
    "RetryPolicy",
    "StopBeforeDeadline",
    "StopOnLongRetryAfter",
    "ThrottleDetails",
    "ThrottleKind",
    "WaitJitter",
    "WaitRetryAfter",
    "google_quota_is_daily",
    "google_retry_delay",
    "parse_duration",
    "rate_limit_info_from_headers",
    "retry_after_from_headers",
    "with_attempts",
]

T = TypeVar("T")

_log = logging.getLogger("wink.throttle")


class _HasRemaining(Protocol):
    """A deadline: seconds left, zero or negative once passed (`wink.core.limits.Deadline`)."""

    def remaining(self) -> float: ...


# --- header parsing

_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_DURATION_PART = r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)"  # "ms" before "m"
_DURATION = re.compile(f"(?:{_DURATION_PART})+")
_DURATION_PARTS = re.compile(_DURATION_PART)
_UNIT_SECONDS = {
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
}

# (remaining, reset) pairs read from a throttled answer; the reset is a Go duration
# (OpenAI) or an RFC 3339 time (Anthropic).
_RESET_HEADERS = (
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"),
)
# (limit, remaining, reset) of the request allowance, per provider family.
_REQUEST_HEADERS = (
    ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    (
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
)

_REQUEST_NAMES = frozenset(name for names in _REQUEST_HEADERS for name in names)
_RETRY_NAMES = frozenset(
    ("retry-after", "retry-after-ms", *(name for names in _RESET_HEADERS for name in names))
)


def parse_duration(value: str) -> float | None:
    """Seconds in a Go ("6m0s", "1.235s", "2ms") or protobuf ("3.5s") duration, or a number.

    A bare number is seconds. Negative, infinite or malformed values give None; it never
    raises.
    """
    if not isinstance(cast(object, value), str):
        return None
    text = value.strip()
    if _NUMBER.fullmatch(text):
        seconds = float(text)
    elif _DURATION.fullmatch(text):
        seconds = sum(
            float(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PARTS.findall(text)
        )
    else:
        return None
    return seconds if math.isfinite(seconds) else None


def retry_after_from_headers(
    headers: Mapping[str, str], *, now: datetime | None = None
) -> float | None:
    """How long a throttled answer's headers ask to wait, in seconds (None: they do not say).

    Read in order, the first usable one wins: `retry-after-ms`; `retry-after` (seconds or
    an HTTP date); the rate-limit reset headers (OpenAI `x-ratelimit-reset-*`, Anthropic
    `anthropic-ratelimit-*-reset`), taking the longest reset among the exhausted
    allowances (remaining 0), or among all when none says it is exhausted. Names are
    matched in any case; negative or malformed values are skipped. Only meaningful on a
    throttled answer: a `retry-after` on a 200 asks nothing of us.
    """
    found = _pick(headers, _RETRY_NAMES)
    milliseconds = _number(found.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    retry_after = found.get("retry-after")
    if retry_after is not None:
        seconds = _number(retry_after)
        if seconds is None and isinstance(retry_after, str):
            seconds = _seconds_until(_http_date(retry_after), now)
        if seconds is not None:
            return seconds
    exhausted: list[float] = []
    resets: list[float] = []
    for remaining_name, reset_name in _RESET_HEADERS:
        reset = _reset_seconds(found.get(reset_name), now)
        if reset is None:
            continue
        resets.append(reset)
        remaining = _integer(found.get(remaining_name))
        if remaining is not None and remaining <= 0:
            exhausted.append(reset)
    if exhausted:
        return max(exhausted)
    return max(resets) if resets else None


def rate_limit_info_from_headers(
    headers: Mapping[str, str] | None, *, now: datetime | None = None
) -> RateLimitInfo | None:
    """The request allowance a response reports (OpenAI or Anthropic headers), else None.

    Called on every response: one pass over the headers, a few microseconds.
    """
    if not headers:
        return None
    found = _pick(headers, _REQUEST_NAMES)
    if not found:
        return None
    for limit_name, remaining_name, reset_name in _REQUEST_HEADERS:
        limit = found.get(limit_name)
        remaining = found.get(remaining_name)
        reset = found.get(reset_name)
        if limit is None and remaining is None and reset is None:
            continue
        return RateLimitInfo(
            limit_requests=_integer(limit),
            remaining_requests=_integer(remaining),
            reset_requests=_reset_seconds(reset, now),
        )
    return None  # pragma: no cover - `found` holds one of the names


def _pick(headers: Mapping[str, str], names: frozenset[str]) -> dict[str, object]:
    """The headers among `names`, keyed by lower-case name (any mapping, any case)."""
    picked: dict[str, object] = {}
    for key, value in headers.items():
        name = key.lower()
        if name in names:
            picked[name] = value
    return picked


def _number(value: object) -> float | None:
    """A non-negative decimal number (no sign, no exponent), else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def _integer(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(value.strip())
    except ValueError:
        number = _number(value)
        return int(number) if number is not None else None


def _http_date(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _timestamp(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def _seconds_until(moment: datetime | None, now: datetime | None) -> float | None:
    """Seconds from `now` to `moment`, at least 0; a naive datetime is taken as UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return max(0.0, (moment - now).total_seconds())


def _reset_seconds(value: object, now: datetime | None) -> float | None:
    """A reset header: a duration (OpenAI) or an RFC 3339 time (Anthropic)."""
    if not isinstance(value, str):
        return None
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    return _seconds_until(_timestamp(value), now)


# --- Gemini error bodies


def google_retry_delay(error_body: object) -> float | None:
    """`RetryInfo.retryDelay` of a Gemini error body, in seconds, else None.

    Takes the whole body (`{"error": {...}}`, as `google.genai.errors.APIError.details`
    holds it) or the inner error object.
    """
    for detail in _google_details(error_body, "google.rpc.RetryInfo"):
        delay = detail.get("retryDelay")
        if isinstance(delay, str):
            seconds = parse_duration(delay)
        elif isinstance(delay, Mapping):  # a decoded protobuf Duration
            seconds = _protobuf_duration(cast(Mapping[str, object], delay))
        else:
            seconds = None
        if seconds is not None:
            return seconds
    return None


def google_quota_is_daily(error_body: object) -> bool:
    """Whether a Gemini `QuotaFailure` names a per-day quota: waiting minutes will not help."""
    for detail in _google_details(error_body, "google.rpc.QuotaFailure"):
        violations = detail.get("violations")
        if not isinstance(violations, list):
            continue
        for violation in cast(list[object], violations):
            if not isinstance(violation, Mapping):
                continue
            violation = cast(Mapping[str, object], violation)
            for field in ("quotaId", "quotaMetric"):
                name = violation.get(field)
                if isinstance(name, str) and ("perday" in name.lower() or "per_day" in name):
                    return True
    return False


def _google_details(error_body: object, type_suffix: str) -> Iterable[Mapping[str, object]]:
    if not isinstance(error_body, Mapping):
        return
    body = cast(Mapping[str, object], error_body)
    error = body.get("error", body)
    if not isinstance(error, Mapping):
        return
    details = cast(Mapping[str, object], error).get("details")
    if not isinstance(details, list):
        return
    for detail in cast(list[object], details):
        if isinstance(detail, Mapping):
            detail = cast(Mapping[str, object], detail)
            kind = detail.get("@type")
            if isinstance(kind, str) and kind.endswith(type_suffix):
                yield detail


def _protobuf_duration(value: Mapping[str, object]) -> float | None:
    seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
    try:
        total = float(cast(Any, seconds)) + float(cast(Any, nanos)) / 1e9
    except (TypeError, ValueError):
        return None
    return total if math.isfinite(total) and total >= 0 else None


# --- tenacity strategies (each keeps tenacity's `__call__(retry_state)` contract)


def _throttle_of(retry_state: RetryCallState) -> ThrottleError | None:
    """The `ThrottleError` the last attempt raised, if that is how it failed."""
    outcome = retry_state.outcome
    if outcome is None or not outcome.failed:
        return None
    error = outcome.exception()
    return error if isinstance(error, ThrottleError) else None


class RetryIfRetrySafe(retry_base):
    """Retry a `ThrottleError` whose `details.retry_safe` is set; nothing else."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        error = _throttle_of(retry_state)
        return error is not None and error.details.retry_safe


class StopBeforeDeadline(stop_base):
    """Stop when the next wait would end at or past the deadline.

    Tenacity computes the wait (`retry_state.upcoming_sleep`) before it asks the stop.
    """

    def __init__(self, deadline: _HasRemaining) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return retry_state.upcoming_sleep >= self.deadline.remaining()


class StopOnLongRetryAfter(stop_base):
    """Stop when the provider asks to wait longer than `limit` seconds."""

    def __init__(self, limit: float) -> None:
        self.limit = limit

    def __call__(self, retry_state: RetryCallState) -> bool:
        error = _throttle_of(retry_state)
        if error is None or error.details.retry_after is None:
            return False
        return error.details.retry_after > self.limit


class WaitRetryAfter(wait_base):
    """Wait at least what the provider asked: max(its `retry_after`, the `fallback` wait).

    A max, not tenacity's `+` (which would add the two).
    """

    def __init__(self, fallback: wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self.fallback(retry_state)
        error = _throttle_of(retry_state)
        if error is None or error.details.retry_after is None:
            return wait
        return max(wait, error.details.retry_after)


class WaitJitter(wait_base):
    """`wait`, shortened by a random fraction of up to `fraction`, so retries spread out.

    Only ever shorter, so a maximum set on `wait` still holds.
    """

    def __init__(self, wait: wait_base, fraction: float) -> None:
        self.wait = wait
        self.fraction = fraction

    def __call__(self, retry_state: RetryCallState) -> float:
        return self.wait(retry_state) * (1.0 - self.fraction * random.random())


# --- the retry policy


def with_attempts(error: ThrottleError, attempts: int) -> ThrottleError:
    """A copy of `error` saying it came after `attempts` attempts (cause and traceback kept)."""
    copy = ThrottleError(
        error.message,
        prompt_name=error.prompt_name,
        details=replace(error.details, attempts=attempts),
        phase=error.phase,
        provider_payload=error.provider_payload,
    )
    copy.__cause__ = error.__cause__
    copy.__suppress_context__ = error.__suppress_context__
    return copy.with_traceback(error.__traceback__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How wink retries a throttled request; the one retry decision for every provider.

    Only a `ThrottleError` with `details.retry_safe` is retried (never an exhausted quota,
    never a rejected request). The wait before retry n is the larger of what the provider
    asked (`retry_after`) and an exponential backoff, `initial_delay * multiplier**(n-1)`
    capped at `max_delay` and shortened at random by up to `jitter` (a fraction).
    `max_attempts` counts the first attempt: `RetryPolicy(max_attempts=1)` never retries.

    It gives up, raising the last `ThrottleError` with `details.attempts` counted:

    * after `max_attempts` attempts;
    * when the next wait would end past the evaluation's deadline. The throttle is raised,
      not a deadline error, so the caller sees what the provider asked and decides;
    * when the provider asks to wait more than `max_retry_after` seconds (if set).

    Built from tenacity pieces (`retrying()`); the SDKs' own retries are off.
    """

    max_attempts: int = 5
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.1
    max_retry_after: float | None = None

    def __post_init__(self) -> None:
        attempts = cast(object, self.max_attempts)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ValueError(
                f"max_attempts must be an int >= 1 (1 = no retry), got {self.max_attempts!r}"
            )
        for name in ("initial_delay", "max_delay"):
            _check_number(name, getattr(self, name), minimum=0.0)
        if self.initial_delay > self.max_delay:
            raise ValueError(
                f"initial_delay ({self.initial_delay}) must not exceed max_delay ({self.max_delay})"
            )
        _check_number("multiplier", self.multiplier, minimum=1.0)
        _check_number("jitter", self.jitter, minimum=0.0, maximum=1.0)
        if self.max_retry_after is not None:
            _check_number("max_retry_after", self.max_retry_after, minimum=0.0)

    def retrying(
        self,
        *,
        deadline: _HasRemaining | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        on_retry: Callable[[ThrottleError, float], None] | None = None,
    ) -> AsyncRetrying:
        """The tenacity engine for this policy (`call` is the way to use it)."""
        stop: stop_base = stop_after_attempt(self.max_attempts)
        if deadline is not None:
            stop = stop | StopBeforeDeadline(deadline)
        if self.max_retry_after is not None:
            stop = stop | StopOnLongRetryAfter(self.max_retry_after)
        backoff = wait_exponential(
            multiplier=self.initial_delay, max=self.max_delay, exp_base=self.multiplier
        )

        def before_sleep(retry_state: RetryCallState) -> None:
            error = _throttle_of(retry_state)
            if error is None:
                return
            _log.debug("retrying in %.3fs: %s", retry_state.upcoming_sleep, error)
            if on_retry is not None:
                on_retry(error, retry_state.upcoming_sleep)

        return AsyncRetrying(
            sleep=sleep if sleep is not None else asyncio.sleep,
            stop=stop,
            wait=WaitRetryAfter(WaitJitter(backoff, self.jitter)),
            retry=RetryIfRetrySafe(),
            before_sleep=before_sleep,
        )

    async def call(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        deadline: _HasRemaining | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        on_retry: Callable[[ThrottleError, float], None] | None = None,
    ) -> T:
        """Run `fn`, retrying retry-safe throttles; raise the last one, attempts counted.

        Any other exception, and a throttle that is not retry-safe, propagates at once.
        `sleep` replaces `asyncio.sleep` (tests); `on_retry(error, wait)` runs before each
        wait. The first attempt runs outside tenacity, so a request that succeeds (the
        common case) pays nothing for it; a retry-safe failure seeds tenacity, which then
        decides every later step.
        """
        try:
            return await fn()
        except ThrottleError as error:
            if self.max_attempts == 1 or not error.details.retry_safe:
                raise
            first = error
        attempts = 0

        async def attempt() -> T:
            nonlocal attempts
            attempts += 1
            if attempts == 1:
                raise first
            return await fn()

        retrying = self.retrying(deadline=deadline, sleep=sleep, on_retry=on_retry)
        try:
            return cast(T, await retrying(attempt))
        except RetryError as gave_up:
            last = gave_up.last_attempt.exception()
            if not isinstance(last, ThrottleError):  # pragma: no cover - only throttles retry
                raise
            final = _counted(last, attempts)
        except ThrottleError as error:  # not retry-safe, after earlier retries
            final = _counted(error, attempts)
            if final is error:
                raise
        raise final from final.__cause__


def _counted(error: ThrottleError, attempts: int) -> ThrottleError:
    return error if error.details.attempts == attempts else with_attempts(error, attempts)


def _check_number(
    name: str, value: object, *, minimum: float, maximum: float | None = None
) -> None:
    valid = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= minimum
        and (maximum is None or value <= maximum)
    )
    if not valid:
        bound = f">= {minimum:g}" if maximum is None else f"in [{minimum:g}, {maximum:g}]"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


# --- pacing

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

    async def acquire(self, deadline: _HasRemaining | None = None) -> None:
        """Wait until this request may be sent; never sleeps past `deadline`.

        Report the answer from the same task (`on_response` / `on_throttle`).
        """
        if not self._active:
            return
        sleep = self._sleep if self._sleep is not None else asyncio.sleep
        with self._lock:
            mark = self._reserve(self._clock())
        if mark is None:
            return
        wake: float | None = mark + self._shift
        while wake is not None:
            delay = wake - self._clock()
            if deadline is not None and delay >= deadline.remaining():
                await sleep(max(0.0, deadline.remaining()))
                return
            if delay > 0:
                await sleep(delay)
            with self._lock:
                wake = self._release(self._clock(), mark)
        _released.set((self, self._last_release))

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
