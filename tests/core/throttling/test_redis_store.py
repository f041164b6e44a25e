"""`RedisStore`'s own logic, with a stand-in for Redis whose answers the test releases one
by one (the script's semantics are `MemoryStore`'s, tested against Redis elsewhere): what
goes to Redis at once and what waits, and a mirror that answers may reach out of order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, cast

import pytest

from tests.helpers.throttling import FakeClock, redis_step
from wink.core.throttling.pace_store import HALF_TICK, MemoryStore, PaceChange, PaceState
from wink.core.throttling.redis import RedisLimiter, RedisStore


class SlowRedis:
    """`RedisLimiter._run` on a shared `MemoryStore` on a fake clock (Redis's), each answer
    held back until the test lets it through (`answer(n)`), so answers can overtake one
    another; each says it took `trip` seconds there and back."""

    available = True
    refresh = 0.1

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.store = MemoryStore(self.clock)
        self.trip = 0.0
        self.sent: list[list[str]] = []
        self._gates: list[asyncio.Event] = []

    async def _run(self, key: str, args: list[str]) -> tuple[PaceState, float] | None:
        reply = redis_step(self.store, args)
        self.sent.append(args)
        gate = asyncio.Event()
        self._gates.append(gate)
        await gate.wait()
        return reply, self.trip

    def answer(self, number: int) -> None:
        self._gates[number].set()


def store_on(redis: SlowRedis) -> RedisStore:
    return RedisStore(cast(RedisLimiter, cast(Any, redis)), "key")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_stale_answer_does_not_undo_a_newer_change_in_the_mirror() -> None:
    redis = SlowRedis()
    store = store_on(redis)
    read = asyncio.create_task(store.book(10.0))  # asks Redis: nothing is paced yet
    await settle()
    start = asyncio.create_task(store.apply(PaceChange(floor=0.5, urgent=True)))
    await settle()
    assert store.local.apply_now(PaceChange()).interval == 0.5
    redis.answer(0)  # the read, from before pacing started, answers first...
    await read
    # ...and the mirror still paces (it would let a herd go if it took that answer as is)
    assert store.local.apply_now(PaceChange()).interval == 0.5
    redis.answer(1)
    assert (await start).interval == 0.5


async def test_urgent_changes_go_at_once_and_probes_with_the_next_step() -> None:
    redis = SlowRedis()
    store = store_on(redis)
    started = asyncio.create_task(store.apply(PaceChange(floor=0.25, urgent=True)))
    await settle()
    assert len(redis.sent) == 1
    redis.answer(0)
    await started
    await store.apply(PaceChange(factor=0.5))  # a probe: not worth a round trip of its own
    assert len(redis.sent) == 1
    assert store.local.apply_now(PaceChange()).interval == 0.125  # the mirror has it
    booking = asyncio.create_task(store.book(10.0))  # the next step carries it
    await settle()
    assert redis.sent[1][4:7] == ["0.5", "0.0", "book"]
    redis.answer(1)
    assert (await booking).interval == 0.125


async def test_the_lead_is_the_measured_round_trip_and_goes_with_each_step() -> None:
    redis = SlowRedis()
    store = store_on(redis)
    assert store.lead == HALF_TICK  # nothing measured: half a timer tick, as in-process
    redis.trip = 0.02  # Redis takes its time answering
    started = asyncio.create_task(store.apply(PaceChange(floor=0.25, urgent=True)))
    await settle()
    redis.answer(0)
    await started
    assert redis.sent[0][9] == repr(HALF_TICK)
    assert store.lead == pytest.approx(0.02 / 8)  # the mean moves 1/8 of the way
    for _ in range(20):
        await answered(redis, store.apply(PaceChange(hold=0.1, urgent=True)))
    assert store.lead == 0.005  # a slower Redis does not widen it further
    booked = asyncio.create_task(store.book(10.0))
    await settle()
    assert redis.sent[-1][9] == repr(store.lead)
    redis.answer(len(redis.sent) - 1)
    await booked


async def answered(redis: SlowRedis, step: Awaitable[PaceState]) -> PaceState:
    """`step`, every Redis call it makes answered as it comes."""
    task = asyncio.ensure_future(step)
    done = len(redis.sent)
    while not task.done():
        await settle()
        if len(redis.sent) > done:
            redis.answer(done)
            done += 1
    return await task


def on(redis: SlowRedis, lead: float) -> RedisStore:
    return RedisStore(cast(RedisLimiter, cast(Any, redis)), "key", lead=lead)


async def test_a_wait_counts_from_the_reply_not_from_redis() -> None:
    # Redis counts a wait from its own now, half a round trip before its reply arrives:
    # a caller who may go sleeps that much less (it sends at its slot); one who must ask
    # again, a round trip and its lead less, so that its next step reaches Redis just
    # before the slot is due (within the lead: it goes), not a round trip after it
    redis = SlowRedis()
    redis.store.apply_now(PaceChange(floor=0.25))
    assert (await answered(redis, on(redis, 0.3).book(10.0))).wait == 0.0  # the first
    redis.trip = 0.02
    given = await answered(redis, on(redis, 0.3).book(10.0))  # in 0.25 s: within the lead
    assert given.go
    assert given.wait == pytest.approx(0.25 - 0.01)
    asked = await answered(redis, on(redis, 0.0).book(10.0))  # in 0.5 s, beyond its lead
    assert not asked.go
    assert asked.wait == pytest.approx(0.5 - 0.02)
    led = await answered(redis, on(redis, 0.1).book(10.0))  # in 0.75 s, beyond its lead
    assert not led.go
    assert led.wait == pytest.approx(0.75 - 0.02 - 0.1)
    redis.clock.now += led.wait + 0.02  # it wakes; its step reaches Redis 0.1 s early
    released = await answered(redis, on(redis, 0.1).release(led, 10.0))
    assert released.go  # within the lead: its slot, at once
    assert released.wait == pytest.approx(0.1 - 0.01)


async def test_a_hold_sent_to_redis_is_shortened_by_its_way_there() -> None:
    redis = SlowRedis()
    redis.trip = 0.02
    store = store_on(redis)
    await answered(redis, store.apply(PaceChange(floor=0.25, urgent=True)))
    assert store.lead == pytest.approx(0.0025)  # a round trip measured
    await store.apply(PaceChange(hold=0.5))  # the next refill after a success: not urgent
    sent = len(redis.sent)
    await answered(redis, store.book(10.0))  # the next step carries it
    # Redis starts it when the step arrives, half a round trip after it was sent
    assert 0.5 - 0.0025 / 2 - 0.01 < float(redis.sent[sent][3]) <= 0.5 - 0.0025 / 2
