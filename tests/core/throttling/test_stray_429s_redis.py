"""The stray-429 rule through a `RedisLimiter` (test_stray_429s.py has it in
one process): a stray holds nobody in the fleet, a confirmed limit holds everyone."""

from __future__ import annotations

from tests.helpers.strays import LIMIT, OVERLOADED, RETRY_AFTER, neighbours_of
from wink import RedisLimiter
from wink.testing.redis_server import RedisServer


async def test_a_lone_429_does_not_stop_the_fleet(redis_server: RedisServer) -> None:
    async with RedisLimiter(redis_server.url, namespace="strays") as limiter:
        arrivals = await neighbours_of(OVERLOADED, limiter=limiter)
        assert redis_server.keys() == []  # nothing was ever worth telling the fleet
    assert max(arrivals.neighbours) < min(arrivals.retries)


async def test_a_confirmed_limit_holds_the_fleet(redis_server: RedisServer) -> None:
    async with RedisLimiter(redis_server.url, namespace="limit") as limiter:
        arrivals = await neighbours_of(LIMIT, limiter=limiter)
        assert redis_server.keys() != []  # the hold went through Redis
    assert min(arrivals.neighbours) >= arrivals.refused[0] + RETRY_AFTER


async def test_429s_close_together_hold_the_fleet(redis_server: RedisServer) -> None:
    async with RedisLimiter(redis_server.url, namespace="burst") as limiter:
        arrivals = await neighbours_of(OVERLOADED, refused=3, limiter=limiter)
    assert min(arrivals.neighbours) >= max(arrivals.refused) + RETRY_AFTER
