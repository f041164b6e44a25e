"""The Redis pace store (`RedisStore`, its Lua script) against the in-process one: the same
random scenarios (tests/helpers/pace_scenarios.py), on the same fake clock, must get the
same answers from both, to the last bit, and keep the same invariants."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import HealthCheck, given, settings

from tests.helpers.pace_scenarios import (
    Advance,
    Apply,
    Book,
    FakeClock,
    Release,
    Step,
    Trace,
    check_invariants,
    leads,
    play,
    scenarios,
)
from wink import RedisLimiter
from wink.core.throttling.pace_store import MemoryStore, PaceChange
from wink.core.throttling.redis import RedisStore
from wink.testing.redis_server import RedisServer


def play_both(redis_url: str, scenario: list[Step], lead: float = 0.0) -> tuple[Trace, Trace]:
    async def run() -> tuple[Trace, Trace]:
        memory_clock, redis_clock = FakeClock(), FakeClock()
        limiter = RedisLimiter(redis_url, namespace="scenarios")
        try:
            key = f"scenario:{uuid.uuid4().hex}"
            shared = RedisStore(limiter, key, clock=redis_clock, lead=lead)
            return (
                await play(MemoryStore(memory_clock, lead), memory_clock, scenario),
                await play(shared, redis_clock, scenario),
            )
        finally:
            await limiter.aclose()

    return asyncio.run(run())


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scenario=scenarios, lead=leads)
def test_redis_answers_every_scenario_as_the_memory_store_does(
    redis_server: RedisServer, scenario: list[Step], lead: float
) -> None:
    memory, shared = play_both(redis_server.url, scenario, lead)
    assert shared.answers() == memory.answers()
    check_invariants(shared, lead)


def test_a_queue_behind_a_hold_and_a_backoff_is_the_same_in_redis(
    redis_server: RedisServer,
) -> None:
    # written out: pacing starts at 0.25 s, three requests come (one goes, two queue), a
    # 429 holds everyone for 0.5 s and lengthens the interval to 0.3125 s; the sleepers
    # wake at the end of their waits
    scenario: list[Step] = [
        Apply(PaceChange(floor=0.25, urgent=True)),
        Book(10.0),
        Book(10.0),
        Book(10.0),
        Advance(0.125),
        Apply(PaceChange(hold=0.5, factor=1.25, urgent=True)),
        Release(0, 10.0),
        Release(0, 10.0),
        Release(0, 10.0),
        Release(0, 10.0),
    ]
    memory, shared = play_both(redis_server.url, scenario)
    assert shared.answers() == memory.answers()
    waits = [answer[0] for answer in memory.answers() if answer is not None]
    # the first sleeper wakes inside the hold and waits for its end, then goes; the
    # second, moved back as much, waits one new interval more
    assert waits == [None, 0.0, 0.25, 0.5, None, 0.375, 0.0, 0.3125, 0.0]
    assert [event.at for event in (memory.events[7], memory.events[9])] == [100.625, 100.9375]
