"""Throttles and a deadline to drive the retry policy, its tenacity strategies and the
pacer with, without a provider or a real clock; and the provider models the pacing
simulations run against (a token bucket, stray 429s, a server of limited speed)."""

from __future__ import annotations

import asyncio
import math
import random
import selectors
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, RetryCallState

from wink.core.foundation.errors import ThrottleDetails, ThrottleError, ThrottleKind
from wink.core.throttling.pace_store import MemoryStore, PaceChange, PaceState
from wink.core.throttling.pacing import Permit, RequestPacer
from wink.core.throttling.retry import RetryPolicy


def throttled(
    kind: ThrottleKind = "rate_limit",
    *,
    retry_after: float | None = None,
    retry_safe: bool = True,
    message: str = "HTTP 429: slow down",
    limit_reached: bool = False,
) -> ThrottleError:
    """A 429 as an adapter raises it, for the prompt "greet" (`limit_reached`: its
    answer said a limit was hit)."""
    return ThrottleError(
        message,
        prompt_name="greet",
        details=ThrottleDetails(
            kind=kind,
            retry_after=retry_after,
            retry_safe=retry_safe,
            status_code=429,
            limit_reached=limit_reached,
        ),
        provider_payload={"error": {"type": "rate_limit_error"}},
    )


@dataclass
class FakeDeadline:
    """A deadline that always has `left` seconds to go."""

    left: float

    def remaining(self) -> float:
        return self.left


def make_state(
    attempt: int = 1, *, error: BaseException | None = None, upcoming_sleep: float = 0.0
) -> RetryCallState:
    """A tenacity call state after `attempt` attempts that ended with `error` (else "ok")."""
    state = RetryCallState(retry_object=AsyncRetrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    if error is None:
        state.set_result("ok")
    else:
        state.set_exception((type(error), error, None))
    state.upcoming_sleep = upcoming_sleep
    return state


@dataclass
class FakeClock:
    """A monotonic clock that moves only when slept on."""

    now: float = 100.0
    slept: list[float] = field(default_factory=list[float])

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def fake_pacer() -> tuple[RequestPacer, FakeClock]:
    """A pacer on a fake clock that starts at 100.0."""
    clock = FakeClock()
    return RequestPacer(clock=clock, sleep=clock.sleep, initial_window=0), clock  # no cold start


async def throttle(
    pacer: RequestPacer, clock: FakeClock, retry_after: float | None, *, limit_reached: bool = True
) -> None:
    """Report a 429 for a request that went just now (and was not paced); by default one
    whose answer said a limit was hit, which holds everyone."""
    await pacer.on_throttle(Permit(clock.now), retry_after, limit_reached=limit_reached)


class _VirtualSelector(selectors.DefaultSelector):
    """Never blocks: a wait for a timer moves the virtual clock to it instead."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and timeout > 0:
            self.now += math.ceil(timeout * 1000) / 1000  # epoll waits whole milliseconds
        return super().select(0)


@contextmanager
def virtual_time_loop(seed: int) -> Generator[asyncio.AbstractEventLoop]:
    """An event loop on a virtual clock, with the global `random` seeded (and restored)."""
    selector = _VirtualSelector()
    loop = asyncio.SelectorEventLoop(selector)
    loop.time = lambda: selector.now  # type: ignore[method-assign]
    state = random.getstate()
    random.seed(seed)
    try:
        yield loop
    finally:
        random.setstate(state)
        loop.close()


async def work_through(
    policy: RetryPolicy, request: Callable[[], Awaitable[None]], *, jobs: int, workers: int
) -> int:
    """Send `jobs` requests from `workers` concurrent workers, each request retried by
    `policy`; the number that failed."""
    pending = iter(range(jobs))
    failed = 0

    async def worker() -> None:
        nonlocal failed
        for _ in pending:
            try:
                await policy.call(request)
            except ThrottleError:
                failed += 1

    await asyncio.gather(*(worker() for _ in range(workers)))
    return failed


def run_jobs(
    loop: asyncio.AbstractEventLoop,
    policy: RetryPolicy,
    request: Callable[[], Awaitable[None]],
    *,
    jobs: int = 300,
    workers: int = 50,
) -> tuple[float, int]:
    """(the loop's time when done, requests that failed): `work_through` on `loop`."""

    async def run_all() -> tuple[float, int]:
        failed = await work_through(policy, request, jobs=jobs, workers=workers)
        return loop.time(), failed

    return loop.run_until_complete(run_all())


def redis_step(store: MemoryStore, args: list[str]) -> PaceState:
    """What the Redis script does with the arguments of `RedisLimiter._run`, on a
    `MemoryStore` (whose semantics it shares): the change, then the action; the state as
    Redis answers it. For stand-ins of Redis that test `RedisStore` without one."""
    _, _, _, hold, factor, floor, action, most, mark, lead = args
    store.apply_now(PaceChange(float(hold), float(factor), float(floor)))
    if action == "book":
        state = store.book_now(float(most), float(lead))
    elif action == "release":
        state = store.release_now(float(mark), float(most), float(lead))
    else:
        state = store.apply_now(PaceChange())
    return PaceState(
        state.wait, state.mark, state.interval, state.held_for, shared=True, go=state.go
    )
