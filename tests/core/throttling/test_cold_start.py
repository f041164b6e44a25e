"""The pacer's cold start: a few requests out before any answer, one more per success.

Nothing sleeps for real: the waits are for answers the tests give by hand.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.throttling import FakeClock, FakeDeadline
from wink.core.foundation.messages import RateLimitInfo
from wink.core.throttling.pacing import Permit, RequestPacer

PLENTY = RateLimitInfo(limit_requests=30000, remaining_requests=29999, reset_requests=0.002)


async def settle() -> None:
    """Let woken tasks run (wake-ups go through `call_soon_threadsafe`)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def let_go(pacer: RequestPacer) -> Permit:
    permit = await pacer.acquire()
    assert permit is not None
    return permit


async def test_a_cold_pacer_lets_a_few_out_then_more_as_answers_come() -> None:
    pacer = RequestPacer(initial_window=2)
    assert pacer.cold
    assert not pacer.idle
    gone: list[int] = []
    answer = [asyncio.Event() for _ in range(6)]

    async def request(number: int) -> None:
        permit = await let_go(pacer)
        gone.append(number)
        await answer[number].wait()
        await pacer.on_response(permit, None)

    tasks = [asyncio.create_task(request(number)) for number in range(6)]
    await settle()
    assert gone == [0, 1]  # two in flight, the others wait
    answer[0].set()  # a success: its place frees up, and the window grows by one
    await settle()
    assert gone == [0, 1, 2, 3]
    for event in answer:
        event.set()
    await asyncio.gather(*tasks)
    assert gone == list(range(6))


async def test_the_cold_start_ends_when_the_headers_show_room() -> None:
    pacer = RequestPacer(initial_window=2)
    await pacer.on_response(await let_go(pacer), PLENTY)
    assert not pacer.cold
    assert pacer.idle


async def test_the_cold_start_ends_after_enough_answers() -> None:
    pacer = RequestPacer(initial_window=2)
    answers = 0
    while pacer.cold:
        await pacer.on_response(await let_go(pacer), None)
        answers += 1
    assert answers == 62  # the window grew from 2 to 64
    assert pacer.idle


def test_a_negative_window_is_refused() -> None:
    with pytest.raises(ValueError, match="initial_window"):
        RequestPacer(initial_window=-1)


async def test_a_cold_wait_never_outlasts_the_deadline() -> None:
    pacer = RequestPacer(initial_window=1)
    await let_go(pacer)  # in flight, never answered
    assert await pacer.acquire(FakeDeadline(0.0)) is None


async def test_a_stray_throttle_frees_its_place_but_does_not_end_the_cold_start() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=2)
    await let_go(pacer)  # in flight
    await pacer.on_throttle(await let_go(pacer), 0.001)  # one 429: a place frees up
    assert pacer.cold
    assert pacer.interval == 0.0
    clock.now += 0.001  # the hold is over
    await let_go(pacer)  # takes the freed place...
    assert await pacer.acquire(FakeDeadline(0.0)) is None  # ...and the window did not grow


async def test_frequent_throttles_end_the_cold_start_and_pace() -> None:
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep, initial_window=4)
    permits = [await let_go(pacer) for _ in range(4)]  # four out at once...
    await pacer.on_response(permits[0], None)  # ...one gets the token...
    for permit in permits[1:]:  # ...three are told the next one comes in 10 ms
        await pacer.on_throttle(permit, 0.01)
    assert not pacer.cold
    assert pacer.interval == pytest.approx(0.01)
