"""What the emulator holds between requests, under one lock: the script (queued turns
and faults, the script callable, the default turn), the faults waiting (scheduled by
request number, injected for the next requests), the rate limiter's bucket, how streams
are cut, the recorded requests and the counters.

`EmulatorState.admit` takes what one request uses up, in the order the emulator's
docstring gives; what it took is noted on a `Taken`, so that `put_back` returns it when
answering fails or the request is refused before any of it is looked at.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .faults import Fault, RateLimit
from .ratelimit import RateSnapshot, TokenBucket
from .records import EmulatorStats, Provider, RecordedRequest, redact_headers
from .routes import Route
from .scripting import ScriptFunction, ScriptItem, checked_items, script_items
from .server import RawRequest, Reply
from .streams import breaks_stream
from .turns import Turn


class Taken:
    """What one request took from the emulator's state, to put back if answering fails."""

    __slots__ = ("injected", "number", "popped", "provider")

    def __init__(self) -> None:
        self.number: int | None = None
        self.provider: Provider | None = None
        self.popped: list[ScriptItem] = []
        self.injected: Fault | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """One request's share of the state: its number, the rate limiter's token, the fault
    or turn it gets (None: ask the script callable) and the delay added so far, the turn a
    stream fault breaks (`under`), and how its stream is cut."""

    number: int
    rate: RateSnapshot | None
    pick: ScriptItem | None
    delay: float
    under: Turn | None
    chunking: tuple[int, float]


class EmulatorState:
    """The emulator's mutable state; every method takes the lock itself. Arguments are
    checked by `ProviderEmulator`, which owns one of these."""

    def __init__(self, chunking: tuple[int, float], record_limit: int | None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[ScriptItem] = deque()
        self._function: ScriptFunction | None = None
        self._count = 0
        self._schedule: dict[int, Fault] = {}
        self._injected: deque[tuple[Fault, int]] = deque()
        self._bucket: TokenBucket | None = None
        self._chunking = chunking
        self._recorded: deque[RecordedRequest] = deque(maxlen=record_limit)
        self._reset_stats()

    # --- script and faults

    @property
    def function(self) -> ScriptFunction | None:
        return self._function

    def set_script(self, script: Iterable[ScriptItem] | ScriptFunction | None) -> None:
        with self._lock:
            self._queue.clear()
            self._function = None
            if callable(script):
                self._function = script
            elif script is not None:
                self._queue.extend(checked_items(script_items(script)))

    def enqueue(self, items: Iterable[ScriptItem]) -> None:
        with self._lock:
            self._queue.extend(checked_items(items))

    def inject(self, fault: Fault, times: int) -> None:
        with self._lock:
            self._injected.append((fault, times))

    def schedule(self, plan: Mapping[int, Fault]) -> None:
        with self._lock:
            for number, fault in plan.items():
                self._schedule[self._count + number] = fault

    @property
    def chunking(self) -> tuple[int, float]:
        return self._chunking

    def set_chunking(self, chunking: tuple[int, float]) -> None:
        with self._lock:
            self._chunking = chunking

    def set_rate_limit(self, limit: RateLimit | None) -> None:
        with self._lock:
            self._bucket = TokenBucket(limit, time.monotonic()) if limit else None

    @property
    def rate_headers(self) -> bool:
        """Whether answers carry the rate limiter's headers (any, with no limiter)."""
        bucket = self._bucket
        return bucket is None or bucket.limit.headers

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    # --- observation

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._recorded)

    @property
    def stats(self) -> EmulatorStats:
        with self._lock:
            return EmulatorStats(
                requests=self._stat_requests,
                responses=dict(sorted(self._stat_responses.items())),
                throttled=self._stat_throttled,
                dropped=self._stat_dropped,
                hung=self._stat_hung,
                internal_errors=self._stat_internal,
            )

    def clear(self) -> None:
        """Forget recorded requests and reset the counters."""
        with self._lock:
            self._recorded.clear()
            self._reset_stats()

    def reset(self) -> None:
        """`clear()`, and drop queued turns, pending faults and the schedule."""
        with self._lock:
            self._recorded.clear()
            self._reset_stats()
            self._queue.clear()
            self._injected.clear()
            self._schedule.clear()

    def _reset_stats(self) -> None:
        self._stat_requests = self._stat_throttled = self._stat_dropped = self._stat_hung = 0
        self._stat_internal = 0
        self._stat_responses: dict[int, int] = {}

    # --- one request (on the server thread)

    def admit(
        self,
        raw: RawRequest,
        route: Route,
        body: object,
        received: float,
        batch: str | None,
        taken: Taken,
        default_turn: Turn | None,
    ) -> Admission:
        """Record a request to a generation route and take its token, fault or turn (a
        batch's item, `batch` set, takes no token and no injected or scheduled fault)."""
        with self._lock:
            number = taken.number = self._record(raw, route.provider, body, received, batch)
            taken.provider = route.provider
            rate = self._take_token(route) if batch is None else None
            pick, delay = self._pick(number, route, rate, taken, batch is None)
            under = (
                self._peek(default_turn)
                if isinstance(pick, Fault) and breaks_stream(pick)
                else None
            )
            return Admission(number, rate, pick, delay, under, self._chunking)

    def admit_endpoint(
        self, raw: RawRequest, provider: Provider, body: object, received: float, taken: Taken
    ) -> tuple[RateSnapshot | None, Fault | None, float]:
        """Record a request outside the generation routes (a batch's, a token count's):
        its rate-limit token, its fault (the limit's, scheduled or injected) and delay."""
        with self._lock:
            number = taken.number = self._record(raw, provider, body, received, None)
            taken.provider = provider
            rate = None
            if self._bucket is not None:
                rate = self._bucket.take(time.monotonic())
                self._stat_throttled += rate.retry_after is not None
            fault, delay = self._fault(number, rate, taken)
            return rate, fault, delay

    def put_back(self, taken: Taken) -> None:
        """Return what a request took (it was refused before any of it was looked at)."""
        with self._lock:
            self._put_back(taken)

    def failed(self, taken: Taken) -> int:
        """Count a request the emulator failed to answer (as a request too, if it failed
        before it was counted) and return what it took; its number."""
        with self._lock:
            if taken.number is None:
                self._count += 1
                self._stat_requests += 1
                taken.number = self._count
            self._stat_internal += 1
            self._put_back(taken)
            return taken.number

    def finish(self, reply: Reply) -> Reply:
        """Count the reply about to be sent."""
        with self._lock:
            if reply.action == "hang":
                self._stat_hung += 1
            elif reply.action == "drop" or reply.reset_after is not None:
                self._stat_dropped += 1
            else:
                self._stat_responses[reply.status] = self._stat_responses.get(reply.status, 0) + 1
        return reply

    # --- under the lock

    def _put_back(self, taken: Taken) -> None:
        self._queue.extendleft(reversed(taken.popped))
        if taken.injected is not None:
            self._injected.appendleft((taken.injected, 1))

    def _record(
        self, raw: RawRequest, provider: Provider | None, body: object, at: float, batch: str | None
    ) -> int:
        """Count and record a request; its number."""
        self._count += 1
        self._stat_requests += 1
        number = self._count
        headers = redact_headers(raw.headers)
        self._recorded.append(
            RecordedRequest(
                number, provider, raw.method, raw.path, raw.query, body, headers, at, batch
            )
        )
        return number

    def _take_token(self, route: Route) -> RateSnapshot | None:
        if self._bucket is None or route.provider is None or route.not_found:
            return None
        rate = self._bucket.take(time.monotonic())
        if rate.retry_after is not None:
            self._stat_throttled += 1
        return rate

    def _pick(
        self, number: int, route: Route, rate: RateSnapshot | None, taken: Taken, faults: bool
    ) -> tuple[ScriptItem | None, float]:
        """The fault or turn for this request (None: ask the callable); and extra delay.
        `faults`: it takes the rate limit's, scheduled and injected faults first."""
        if route.provider is None or route.not_found:
            return None, 0.0
        delay = 0.0
        if faults:
            fault, delay = self._fault(number, rate, taken)
            if fault is not None:
                return fault, delay
        if route.problem is not None:
            return Fault.bad_request(route.problem), delay
        if route.rejection is not None:
            return route.rejection, delay
        while self._queue:
            item = self._queue.popleft()
            taken.popped.append(item)
            if isinstance(item, Fault) and item.kind == "latency":
                delay += item.seconds
                continue
            return item, delay
        return None, delay

    def _fault(
        self, number: int, rate: RateSnapshot | None, taken: Taken
    ) -> tuple[Fault | None, float]:
        """The rate limit's 429, else the scheduled or injected fault for this request,
        if any; and the latency it adds."""
        if rate is not None and rate.retry_after is not None:
            style = "both" if self.rate_headers else "seconds"
            return Fault.rate_limit(rate.retry_after, header_style=style), 0.0
        fault = self._schedule.pop(number, None)
        if fault is None:
            fault = taken.injected = self._take_injected()
        if fault is not None and fault.kind == "latency":
            return None, fault.seconds
        return fault, 0.0

    def _take_injected(self) -> Fault | None:
        if not self._injected:
            return None
        fault, times = self._injected[0]
        if times <= 1:
            self._injected.popleft()
        else:
            self._injected[0] = (fault, times - 1)
        return fault

    def _peek(self, default_turn: Turn | None) -> Turn | None:
        """The turn a stream fault streams before it breaks (not used up)."""
        head = self._queue[0] if self._queue else None
        if isinstance(head, Turn):
            return head
        return default_turn
