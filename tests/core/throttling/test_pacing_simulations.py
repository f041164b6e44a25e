"""The pacer against simulated providers, on a virtual-time event loop: the emulator's own
token bucket (with and without rate headers), stray 429s from a provider with no limit
behind them, a burst of streams, and a fleet of pacers sharing one store.

The clock is virtual (`virtual_time_loop`): the figures are deterministic, not timings.
"""

from __future__ import annotations

import asyncio
import random
import statistics
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.helpers.throttling import redis_step, run_jobs, virtual_time_loop, work_through
from wink.core.foundation.errors import ThrottleDetails, ThrottleError
from wink.core.throttling import redis as redis_store
from wink.core.throttling.headers import (
    allowance_spent,
    rate_limit_info_from_headers,
    retry_after_from_headers,
)
from wink.core.throttling.pace_store import MemoryStore, PaceState, PaceStore
from wink.core.throttling.pacing import RequestPacer
from wink.core.throttling.retry import RetryPolicy
from wink.providers.openai import client as openai
from wink.testing import Fault, RateLimit
from wink.testing.ratelimit import TokenBucket
from wink.testing.wire.base import retry_headers
from wink.testing.wire.openai import OpenAIChatWire

PATIENT = RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=1.0, jitter=0.0)
IDEAL = 3.0  # 300 requests at 100 per second


def refused(retry_after: float | None) -> ThrottleError:
    details = ThrottleDetails(kind="rate_limit", retry_after=retry_after)
    return ThrottleError("HTTP 429", prompt_name="sim", details=details)


# --- a token bucket of 100 requests per second, burst 1: 300 requests, 50 at a time


def bucket_run(
    *,
    headers: bool,
    pace: bool = True,
    initial_window: int = 4,
    seed: int = 7,
    rate: float = 100.0,
    pacer_seen: list[RequestPacer] | None = None,
    named: bool = False,
) -> tuple[float, int, int]:
    """(wall time, 429s, failed requests), 1 to 1.5 ms each way. `named`: each 429
    names the limit (as the emulator's and OpenAI's bodies do); else only its headers,
    if any, and the 429s around it confirm the limit."""
    with virtual_time_loop(seed) as loop:
        bucket = TokenBucket(RateLimit(rate, burst=1, headers=headers), now=loop.time())
        throttled = 0
        pacer = RequestPacer(clock=loop.time, initial_window=initial_window)
        policy = PATIENT if pace else RetryPolicy(max_attempts=50)
        network = random.Random(seed)

        async def request() -> None:  # what the runner does around one SDK call
            nonlocal throttled
            permit = await pacer.acquire() if pace else None
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            rate = bucket.take(loop.time())
            sent = dict(OpenAIChatWire().rate_headers(rate, loop.time())) if headers else {}
            await asyncio.sleep(0.001 + network.random() * 0.0005)
            if rate.retry_after is not None:
                throttled += 1
                sent |= retry_headers(Fault.rate_limit(rate.retry_after, header_style="both"))
                retry_after = retry_after_from_headers(sent, openai.RATE_LIMIT_HEADERS)
                said = named or allowance_spent(sent, openai.RATE_LIMIT_HEADERS)
                if permit is not None:
                    await pacer.on_throttle(permit, retry_after, limit_reached=said)
                raise refused(retry_after)
            if permit is not None:
                info = rate_limit_info_from_headers(sent, openai.RATE_LIMIT_HEADERS)
                await pacer.on_response(permit, info)

        if pacer_seen is not None:
            pacer_seen.append(pacer)
        jobs = round(IDEAL * rate)
        wall, failed = run_jobs(loop, policy, request, jobs=jobs, workers=min(50, jobs))
        return wall, throttled, failed


@pytest.mark.parametrize("named", [True, False], ids=["body-names-the-limit", "bare-429s"])
def test_pacing_from_429s_alone_is_near_ideal_with_few_throttles(named: bool) -> None:
    wall, throttles, failed = bucket_run(headers=False, named=named)
    assert failed == 0
    assert wall <= 1.2 * IDEAL
    assert throttles <= 15
    # without the cold start, the first 50 go out together and 49 of them are refused
    _, herd_throttles, herd_failed = bucket_run(headers=False, initial_window=0)
    assert herd_failed == 0
    assert herd_throttles >= 49


def test_pacing_to_rate_headers_is_near_ideal_and_beats_retrying_alone() -> None:
    wall, throttles, failed = bucket_run(headers=True)
    assert failed == 0
    assert wall <= 1.15 * IDEAL
    assert throttles <= 10
    naive_wall, naive_throttles, naive_failed = bucket_run(headers=True, pace=False)
    assert naive_failed == 0
    assert naive_throttles > 5 * throttles
    assert naive_wall > 2 * wall


def test_the_simulations_are_deterministic() -> None:
    assert bucket_run(headers=False, seed=3) == bucket_run(headers=False, seed=3)
    assert stray_run(seed=3) == stray_run(seed=3)


# --- stray 429s: a provider that serves 400 requests per second, and refuses some at random


def stray_run(
    *, share: float = 0.05, retry_after: float | None = 0.05, seed: int = 7
) -> tuple[float, int, float, int]:
    """(wall time, 429s, the interval at the end, 429s that held everyone) for 200 tool
    loops (two requests each), 100 at a time, after as many to warm up, against a server
    that answers one request at a time in 2.5 ms and refuses `share` of them at random
    with a 429 that names no limit."""
    with virtual_time_loop(seed) as loop:
        pacer = RequestPacer(clock=loop.time)
        dice = random.Random(seed)
        server = asyncio.Lock()
        throttled = held = 0

        async def request() -> None:
            nonlocal throttled, held
            permit = await pacer.acquire()
            assert permit is not None
            async with server:
                await asyncio.sleep(0.0025)
            await asyncio.sleep(0.001)
            if dice.random() < share:
                throttled += 1
                await pacer.on_throttle(permit, retry_after)
                held += not pacer.idle
                raise refused(retry_after)
            await pacer.on_response(permit, None)

        async def tool_loops(count: int) -> float:
            gate = asyncio.Semaphore(100)

            async def one() -> None:
                async with gate:
                    await PATIENT.call(request)
                    await PATIENT.call(request)

            started = loop.time()
            await asyncio.gather(*(one() for _ in range(count)))
            return loop.time() - started

        loop.run_until_complete(tool_loops(100))
        throttled = held = 0
        return loop.run_until_complete(tool_loops(200)), throttled, pacer.interval, held


def test_stray_429s_neither_hold_nor_slow_the_others() -> None:
    clean, *_ = stray_run(share=0.0)
    wall, throttles, interval, held = stray_run()
    assert throttles >= 15  # 5% of about 420 requests
    # each cost its own request its 50 ms, nobody else's (three that come close together
    # by chance are taken for a limit: twice in this run, where holding each was 23)...
    assert held <= 2
    assert interval == 0.0  # ...and the pace never slowed
    assert wall <= 1.1 * clean


def test_stray_429s_that_ask_for_less_than_a_refill_only_pace_faster_than_the_server() -> None:
    clean, *_ = stray_run(share=0.0)
    wall, _, interval, _ = stray_run(retry_after=0.001)
    assert interval < 0.0025  # if it paces at all, faster than the server answers
    assert wall <= 1.25 * clean


def test_a_real_limit_asking_the_same_wait_as_the_strays_is_paced() -> None:
    # 20 requests per second: a 429 asks for up to 50 ms, as the strays above did; but
    # it comes back whenever requests come faster, and its wait is one refill
    seen: list[RequestPacer] = []
    wall, throttles, failed = bucket_run(headers=False, rate=20.0, pacer_seen=seen)
    assert failed == 0
    assert wall <= 1.2 * IDEAL
    assert throttles <= 10
    assert 0.04 <= seen[0].interval <= 0.06


# --- a burst of streams: the answer's head is the provider's "go"


def burst_run(*, report_at_head: bool, streams: int = 200) -> list[float]:
    """Seconds to each stream's response head, for `streams` opened at once on a cold
    pacer; each head comes 3 ms after the request, the body 1 s later, no 429."""
    with virtual_time_loop(7) as loop:
        pacer = RequestPacer(clock=loop.time)
        heads: list[float] = []

        async def stream() -> None:
            started = loop.time()
            permit = await pacer.acquire()
            assert permit is not None
            await asyncio.sleep(0.003)
            heads.append(loop.time() - started)
            if report_at_head:
                await pacer.on_response(permit, None)
            await asyncio.sleep(1.0)
            if not report_at_head:
                await pacer.on_response(permit, None)

        async def burst() -> None:
            await asyncio.gather(*(stream() for _ in range(streams)))

        loop.run_until_complete(burst())
        return sorted(heads)


def test_a_burst_of_streams_opens_at_once_when_heads_report_success() -> None:
    heads = burst_run(report_at_head=True)
    assert len(heads) == 200
    # the cold start widens with each head: 4, 8, 16, 32, 64 in flight, then no limit
    assert heads[-1] <= 0.03
    assert statistics.median(heads) <= 0.02
    # told only at each stream's end, the same window would hold most streams for seconds
    assert statistics.median(burst_run(report_at_head=False)) >= 1.0


# --- a fleet: four pacers sharing one store (as through Redis), against one bucket


def fleet_against_a_bucket(
    loop: asyncio.AbstractEventLoop,
    stores: Callable[[], Sequence[PaceStore | None]],
    *,
    seed: int,
    named: bool,
) -> tuple[float, int, int]:
    """(wall time, 429s, failed) for a pacer on each of `stores` (made on the running
    loop) x 75 requests, 50 at a time each, a cold start of 1 each (as `RedisLimiter`),
    1 to 3 ms each way, 100/s burst 1 headerless. `named`: each 429's body names the
    limit; else only the 429s around it confirm it."""
    bucket = TokenBucket(RateLimit(100.0, burst=1, headers=False), now=loop.time())
    network = random.Random(seed)
    throttled = 0

    async def process(pacer: RequestPacer) -> int:
        async def request() -> None:
            nonlocal throttled
            permit = await pacer.acquire()
            assert permit is not None
            await asyncio.sleep(0.001 + network.random() * 0.002)
            rate = bucket.take(loop.time())
            await asyncio.sleep(0.001 + network.random() * 0.002)
            if rate.retry_after is not None:
                throttled += 1
                await pacer.on_throttle(permit, rate.retry_after, limit_reached=named)
                raise refused(rate.retry_after)
            await pacer.on_response(permit, None)

        return await work_through(PATIENT, request, jobs=75, workers=50)

    async def everyone() -> tuple[float, int]:
        pacers = [RequestPacer(store, clock=loop.time, initial_window=1) for store in stores()]
        failures = await asyncio.gather(*(process(pacer) for pacer in pacers))
        return loop.time(), sum(failures)

    wall, failed = loop.run_until_complete(everyone())
    return wall, throttled, failed


def fleet_run(*, shared: bool, seed: int = 7, named: bool = True) -> tuple[float, int, int]:
    """Four pacers against one bucket, sharing one store (as through Redis) or each alone."""
    with virtual_time_loop(seed) as loop:
        store = MemoryStore(loop.time)
        return fleet_against_a_bucket(
            loop, lambda: [store if shared else None] * 4, seed=seed, named=named
        )


@pytest.mark.parametrize("named", [True, False], ids=["body-names-the-limit", "bare-429s"])
def test_a_fleet_sharing_one_store_paces_as_one(named: bool) -> None:
    wall, throttles, failed = fleet_run(shared=True, named=named)
    alone_wall, alone_throttles, alone_failed = fleet_run(shared=False, named=named)
    assert failed == alone_failed == 0
    assert wall <= 1.25 * IDEAL
    assert throttles <= 0.2 * alone_throttles
    assert alone_wall > 2 * wall


# --- the same fleet through Redis a round trip away


class RemoteStore:
    """`RedisLimiter._run` on a shared `MemoryStore` (Redis's), `way` to 3 x `way`
    seconds away each way on the virtual clock: a step is applied on arrival, and its
    reply comes back as late again."""

    available = True
    refresh = 0.1

    def __init__(self, loop: asyncio.AbstractEventLoop, way: float, seed: int) -> None:
        self.loop, self.way = loop, way
        self.store = MemoryStore(loop.time)
        self.dice = random.Random(seed)

    async def _run(self, key: str, args: list[str]) -> tuple[PaceState, float]:
        sent = self.loop.time()
        await asyncio.sleep(self.way * (1 + 2 * self.dice.random()))
        reply = redis_step(self.store, args)
        await asyncio.sleep(self.way * (1 + 2 * self.dice.random()))
        return reply, self.loop.time() - sent


def remote_fleet_run(monkeypatch: pytest.MonkeyPatch, seed: int = 7) -> tuple[float, int, int]:
    """`fleet_run(shared=True)`, each pacer over a `RedisStore` of a Redis whose round
    trip takes 1 to 3 ms (a busy machine's)."""
    with virtual_time_loop(seed) as loop:
        monkeypatch.setattr(redis_store, "time", SimpleNamespace(monotonic=loop.time))
        remote = cast(redis_store.RedisLimiter, cast(Any, RemoteStore(loop, 0.0005, seed)))
        return fleet_against_a_bucket(
            loop,
            lambda: [redis_store.RedisStore(remote, "key") for _ in range(4)],
            seed=seed,
            named=True,
        )


def test_a_fleet_through_a_distant_redis_loses_no_round_trip_a_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each wait counts from the reply (Redis counted it half a round trip earlier), and a
    # request that must ask again asks to land just before its slot: counted from Redis's
    # clock, the second ask a round trip after the slot, this run took 1.54x (now 1.38x)
    wall, throttles, failed = remote_fleet_run(monkeypatch)
    assert failed == 0
    assert wall <= 1.45 * IDEAL
    assert throttles <= 25
