"""`RedisStore`'s own logic, with a stand-in for Redis whose answers the test releases one
by one (the script's semantics are `MemoryStore`'s, tested against Redis elsewhere): what
goes to Redis at once and what waits, and a mirror that answers may reach out of order."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from wink.core.throttling.pace_store import MemoryStore, PaceChange, PaceState
from wink.core.throttling.redis import RedisLimiter, RedisStore


class SlowRedis:
    """`RedisLimiter._run` on a shared `MemoryStore`, each answer held back until the
    test lets it through (`answer(n)`), so answers can overtake one another."""

    available = True
    refresh = 0.1

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.sent: list[list[str]] = []
        self._gates: list[asyncio.Event] = []

    async def _run(self, key: str, args: list[str]) -> PaceState | None:
        _, _, _, hold, factor, floor, action, most, mark, lead = args
        self.store.apply_now(PaceChange(float(hold), float(factor), float(floor)))
        if action == "book":
            state = self.store.book_now(float(most), float(lead))
        elif action == "release":
            state = self.store.release_now(float(mark), float(most), float(lead))
        else:
            state = self.store.apply_now(PaceChange())
        self.sent.append(args)
        gate = asyncio.Event()
        self._gates.append(gate)
        await gate.wait()
        return PaceState(
            state.wait, state.mark, state.interval, state.held_for, shared=True, go=state.go
        )

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
    assert store.lead == 0.0  # nothing measured: every slot is asked for again
    started = asyncio.create_task(store.apply(PaceChange(floor=0.25, urgent=True)))
    await settle()
    await asyncio.sleep(0.02)  # Redis takes its time answering
    redis.answer(0)
    await started
    assert redis.sent[0][9] == "0.0"
    assert 0.02 / 8 <= store.lead <= 0.005  # a slower Redis does not widen it further
    booked = asyncio.create_task(store.book(10.0))
    await settle()
    assert redis.sent[1][9] == repr(store.lead)
    redis.answer(1)
    await booked
