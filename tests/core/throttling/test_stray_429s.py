"""A stray 429 costs its own request, not everyone's; a confirmed limit holds everyone.
In one process, on the emulator, told apart by who was sent before whom: neighbours that
go, one after another, before the refused request's retry were not held by its
`retry-after` (held, the first of them would have gone with that retry). The same with
a `RedisLimiter` is in test_stray_429s_redis.py."""

from __future__ import annotations

from tests.helpers.strays import LIMIT, OVERLOADED, RETRY_AFTER, neighbours_of


async def test_a_lone_429_does_not_stop_its_neighbours() -> None:
    arrivals = await neighbours_of(OVERLOADED)
    # all five neighbours went, one after another, before the refused request's retry,
    # which waited its 0.5 s
    assert max(arrivals.neighbours) < min(arrivals.retries)
    assert min(arrivals.retries) >= arrivals.refused[0] + RETRY_AFTER


async def test_a_429_whose_answer_says_a_limit_was_hit_holds_everyone() -> None:
    arrivals = await neighbours_of(LIMIT)  # headers at 0 remaining, a body naming it
    # nobody went before the window the 429 asked for had passed
    assert min(arrivals.neighbours) >= arrivals.refused[0] + RETRY_AFTER


async def test_429s_close_together_confirm_a_limit_and_hold_everyone() -> None:
    arrivals = await neighbours_of(OVERLOADED, refused=3)  # three in a row, none naming it
    assert min(arrivals.neighbours) >= max(arrivals.refused) + RETRY_AFTER


async def test_two_strays_are_still_strays() -> None:
    arrivals = await neighbours_of(OVERLOADED, refused=2)
    assert max(arrivals.neighbours) < min(arrivals.retries)
