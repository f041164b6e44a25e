"""The request pacer (`wink.core.throttling.pacing`) on a fake clock and on threads, and its learner
(`PaceLearner`), the pure state machine that says what each answer means for the pace.

The pacer against simulated providers is in test_pacing_simulations.py.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from datetime import timedelta

import pytest

from tests.helpers.threads import on_threads
from tests.helpers.throttling import FakeDeadline, fake_pacer, throttle
from tests.helpers.wire import load_recording
from wink.core.foundation.messages import RateLimitInfo
from wink.core.throttling.headers import rate_limit_info_from_headers
from wink.core.throttling.pace_store import PaceChange
from wink.core.throttling.pacing import BACKOFF, PROBE, PaceLearner, Permit, RequestPacer
from wink.providers.anthropic import messages as anthropic

BUCKET_EMPTY = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.01)
OPENAI_MINUTE = RateLimitInfo(limit_requests=30000, remaining_requests=29999, reset_requests=0.002)


# --- RequestPacer, on a fake clock


async def test_a_new_pacer_is_idle_and_never_waits() -> None:
    pacer, clock = fake_pacer()
    assert pacer.idle
    permit = await pacer.acquire()
    assert permit is not None
    assert not permit.paced
    assert clock.slept == []


async def test_per_minute_limits_with_room_to_spare_add_no_wait() -> None:
    pacer, clock = fake_pacer()
    for _ in range(10):
        permit = await pacer.acquire()
        assert permit is not None
        await pacer.on_response(permit, OPENAI_MINUTE)
    assert pacer.idle
    assert pacer.interval == 0.0
    assert clock.slept == []


async def test_a_retry_after_on_a_200_causes_no_wait() -> None:
    answer = load_recording("anthropic/text_with_ratelimit_headers.json")["response"]
    headers = answer["headers"]
    assert headers["retry-after"] == "5"
    pacer, clock = fake_pacer()
    info = rate_limit_info_from_headers(headers, anthropic.RATE_LIMIT_HEADERS)
    await pacer.on_response(Permit(clock.now), info)
    assert pacer.idle


async def test_an_empty_allowance_spaces_requests_one_refill_apart() -> None:
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)
    assert not pacer.idle
    assert pacer.interval == pytest.approx(0.01)
    releases: list[float] = []
    for _ in range(5):
        permit = await pacer.acquire()
        assert permit is not None
        assert permit.paced
        releases.append(clock.now)
    gaps = [later - earlier for earlier, later in itertools.pairwise(releases)]
    assert releases[0] == pytest.approx(100.01)  # the first waits for the refill
    assert gaps == pytest.approx([0.01] * 4)


async def test_a_reset_sent_as_a_clock_time_gets_back_the_trip_home() -> None:
    # Anthropic says *when* the allowance is full; counted from the answer's arrival that
    # is short by the trip back, about half the round trip
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)
    permit = await pacer.acquire()
    assert permit is not None
    clock.now += 0.004  # the round trip
    anthropic_style = RateLimitInfo(
        limit_requests=1, remaining_requests=0, reset_requests=0.008, reset_is_time=True
    )
    await pacer.on_response(permit, anthropic_style)
    assert pacer.interval == pytest.approx(0.010)
    permit = await pacer.acquire()
    assert permit is not None
    clock.now += 0.004
    openai_style = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.0105)
    await pacer.on_response(permit, openai_style)  # a duration is taken as it is
    assert pacer.interval == pytest.approx(0.0105)


async def test_room_to_spare_stops_the_pacing() -> None:
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)
    assert pacer.interval > 0.0
    await pacer.on_response(Permit(clock.now), OPENAI_MINUTE)  # half the limit or more left
    assert pacer.interval == 0.0
    clock.now += 0.01  # the empty allowance's refill
    assert await pacer.acquire() is not None
    assert pacer.idle


async def test_a_throttle_holds_every_request_for_the_window() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, 0.2)
    assert not pacer.idle
    await pacer.acquire()
    assert clock.now == pytest.approx(100.2)


async def test_a_throttle_without_retry_after_holds_briefly() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, None)
    await pacer.acquire()
    assert clock.now == pytest.approx(100.5)


async def test_a_retry_after_may_come_as_a_timedelta() -> None:
    pacer, clock = fake_pacer()
    await pacer.on_throttle(Permit(clock.now), timedelta(milliseconds=250), limit_reached=True)
    await pacer.acquire()
    assert clock.now == pytest.approx(100.25)


async def test_a_lone_throttle_holds_everyone_and_then_lets_them_all_go() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, 42.0)
    assert pacer.interval == 0.0  # one 429 says nothing of a rate
    releases = [await pacer.acquire() for _ in range(3)]
    assert all(permit is not None for permit in releases)
    assert clock.now == pytest.approx(142.0)  # all three at the end of the hold
    assert pacer.idle


async def test_a_stray_throttle_holds_nobody() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, 42.0, limit_reached=False)  # nothing confirms a limit
    assert pacer.idle
    assert await pacer.acquire() is not None
    assert clock.slept == []  # the others go on; its own request waits in the retry policy


async def test_throttles_close_together_confirm_a_limit_and_hold_everyone() -> None:
    pacer, clock = fake_pacer()
    for _ in range(2):
        await throttle(pacer, clock, 42.0, limit_reached=False)
        assert pacer.idle
    await throttle(pacer, clock, 42.0, limit_reached=False)  # the third in a row: a limit
    assert not pacer.idle
    await pacer.acquire()
    assert clock.now == pytest.approx(142.0)


async def test_a_throttle_while_pacing_holds_everyone() -> None:
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)  # the headers set a pace
    permit = await pacer.acquire()
    assert permit is not None
    started = clock.now
    await pacer.on_throttle(permit, 0.5)  # the limit the pace follows: no stray
    await pacer.acquire()
    assert clock.now >= started + 0.5


async def test_acquire_never_sleeps_past_the_deadline() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, 10.0)
    assert await pacer.acquire(FakeDeadline(0.5)) is None
    assert clock.slept == []  # a wait that cannot end in a request is not started
    assert await pacer.acquire(FakeDeadline(30.0)) is not None
    assert clock.slept


async def test_frequent_throttles_start_pacing_at_the_retry_after() -> None:
    pacer, clock = fake_pacer()
    for _ in range(3):  # three requests refused in a row, each told to wait 20 ms
        await throttle(pacer, clock, 0.02)
    assert pacer.interval == pytest.approx(0.02)
    releases: list[float] = []
    for _ in range(3):
        permit = await pacer.acquire()
        assert permit is not None
        assert permit.paced
        releases.append(clock.now)
    assert [later - earlier for earlier, later in itertools.pairwise(releases)] == [
        pytest.approx(0.02)
    ] * 2


async def test_paced_successes_without_headers_probe_until_pacing_stops() -> None:
    pacer, clock = fake_pacer()
    for _ in range(3):
        await throttle(pacer, clock, 0.001)
    start = pacer.interval
    successes = 0
    while pacer.interval > 0.0:
        permit = await pacer.acquire()
        assert permit is not None
        await pacer.on_response(permit, None)
        successes += 1
    # each success shortened the interval by PROBE until spacing was no longer worth it
    assert successes == math.ceil(math.log(1e-4 / start) / math.log(1 - PROBE))
    # the last refill (slots this close went without a sleep: under half a timer tick)
    clock.now += 2e-4
    permit = await pacer.acquire()
    assert permit is not None
    assert not permit.paced
    assert pacer.idle


async def test_a_slot_due_within_half_a_timer_tick_goes_now() -> None:
    # the event loop's timer wakes a sleeper up to 1 ms late: a sleep of 0.3 ms would
    # end later than going now is early; the pace still counts from the slot
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)  # 10 ms apart, from 100.01
    assert await pacer.acquire() is not None
    assert clock.now == pytest.approx(100.01)
    clock.now += 0.0097  # the next slot is 0.3 ms away
    early = await pacer.acquire()
    assert early is not None
    assert early.at == pytest.approx(100.0197)  # sent now, not after a sleep
    assert clock.slept == [pytest.approx(0.01)]
    assert await pacer.acquire() is not None
    assert clock.now == pytest.approx(100.03)  # one interval after the early one's slot
    almost = await pacer.acquire()  # a slot 0.7 ms away is slept for
    assert almost is not None
    clock.now += 0.0093
    assert await pacer.acquire() is not None
    assert clock.slept[-1] == pytest.approx(0.0007)


def test_one_pacer_serves_several_threads_and_event_loops() -> None:
    pacer = RequestPacer()
    started = time.monotonic()
    asyncio.run(pacer.on_throttle(Permit(started), 0.05, limit_reached=True))
    assert on_threads(lambda: asyncio.run(pacer.acquire()), timeout=5) == []
    assert time.monotonic() - started >= 0.05


@pytest.mark.parametrize(
    "info",
    [
        RateLimitInfo(limit_requests=1, remaining_requests=None, reset_requests=0.01),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=None),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=-1.0),
        RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=math.inf),
    ],
)
async def test_headers_that_say_too_little_set_no_pace(info: RateLimitInfo) -> None:
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), info)
    assert pacer.idle
    assert pacer.interval == 0.0
    await pacer.acquire()
    assert clock.slept == []


async def test_a_refill_too_fast_to_be_worth_spacing_ends_the_pacing() -> None:
    pacer, clock = fake_pacer()
    await pacer.on_response(Permit(clock.now), BUCKET_EMPTY)
    assert pacer.interval == pytest.approx(0.01)
    fast = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=1e-6)
    for _ in range(50):  # a smaller figure lowers the interval gently, 10% an answer
        await pacer.on_response(Permit(clock.now), fast)
    assert pacer.interval == 0.0
    assert "interval=0.000000" in repr(pacer)


# --- PaceLearner: what each answer means, as a pure state machine


def effect(change: PaceChange) -> tuple[float, float, float]:
    """(hold, factor, floor): what a change does to the pace."""
    return change.hold, change.factor, change.floor


def learner_after(answers: str, *, gap: float = 0.01) -> PaceLearner:
    """A learner that saw `answers` ("s": a success, "t": a 429 asking 1 ms), `gap`
    seconds apart."""
    learner = PaceLearner()
    for index, answer in enumerate(answers):
        permit, now = Permit(index * gap), index * gap
        if answer == "s":
            learner.answered(permit, None, now, 0.0)
        else:
            learner.throttled(permit, 0.001, now, 0.0)
    return learner


def test_a_429_nothing_confirms_changes_nothing_for_the_others() -> None:
    # a provider granting a success every 10 ms refuses one request: the answer names no
    # limit, the adapter is not pacing, the 429s before it were long ago
    learner = learner_after("s" * 20)
    assert learner.throttled(Permit(1.0), 0.05, 1.0, 0.0).empty
    assert learner.throttled(Permit(1.0), None, 1.0, 0.0).empty
    for _ in range(20):
        learner.answered(Permit(1.0), None, 1.0, 0.0)
    assert learner.throttled(Permit(1.0), 0.05, 1.0, 0.0).empty  # forgotten: a stray again


def test_what_confirms_a_limit() -> None:
    said = learner_after("s" * 20)  # the answer said so (headers at 0, a body naming it)
    assert effect(said.throttled(Permit(1.0), 0.05, 1.0, 0.0, limit_reached=True)) == (
        0.05,
        1.0,
        0.0,
    )
    pacing = learner_after("s" * 20)  # the pace follows a limit already
    assert pacing.throttled(Permit(1.0), 0.05, 1.0, 0.01).hold == 0.05
    close = learner_after("s" * 20)  # three in a row, or three in four answers
    assert close.throttled(Permit(1.0), 0.05, 1.0, 0.0).empty
    close.answered(Permit(1.0), None, 1.0, 0.0)
    assert close.throttled(Permit(1.0), 0.05, 1.0, 0.0).empty
    assert close.throttled(Permit(1.0), 0.05, 1.0, 0.0).hold == 0.05


def test_a_429_whose_wait_no_refill_could_explain_holds_but_never_paces() -> None:
    # the provider has granted a success every 10 ms; a 429 asking for 50 ms cannot be
    # its next refill: confirmed, it holds everyone, and never slows the pace
    learner = learner_after("s" * 20)
    for _ in range(5):
        change = learner.throttled(Permit(1.0), 0.05, 1.0, 0.0, limit_reached=True)
        assert effect(change) == (0.05, 1.0, 0.0)
    assert effect(learner.throttled(Permit(1.0), 0.05, 1.0, 0.01)) == (0.05, 1.0, 0.0)


def test_a_rare_429_only_holds_and_frequent_ones_start_the_pace() -> None:
    learner = learner_after("s" * 20)
    first = learner.throttled(Permit(1.0), 0.008, 1.0, 0.0, limit_reached=True)
    assert effect(first) == (0.008, 1.0, 0.0)
    second = learner.throttled(Permit(1.0), 0.006, 1.0, 0.0, limit_reached=True)
    # it starts at the longest recent wait (about one refill: a 429's wait is the time
    # left to the next one, anywhere in it)
    assert effect(second) == (0.006, 1.0, pytest.approx(0.008 * (1 - 1 / 8)))
    assert second.urgent  # news for a fleet: sent at once


def test_pacing_never_starts_slower_than_the_provider_has_been_answering() -> None:
    learner = learner_after("sssstt", gap=0.004)  # a success every 4 ms, two 429s
    change = learner.throttled(Permit(1.0), 0.004, 1.0, 0.0)  # the third: confirmed
    assert change.floor == pytest.approx(0.004)
    cold = PaceLearner()  # nothing answered yet: the retry-after is all there is
    cold.throttled(Permit(0.0), 0.01, 0.0, 0.0, limit_reached=True)
    second = cold.throttled(Permit(0.0), 0.01, 0.0, 0.0, limit_reached=True)
    assert second.floor == pytest.approx(0.01)


def test_a_long_retry_after_spaces_requests_at_most_a_second_apart() -> None:
    learner = PaceLearner()
    learner.throttled(Permit(0.0), 42.0, 0.0, 0.0, limit_reached=True)
    change = learner.throttled(Permit(0.0), 42.0, 0.0, 0.0, limit_reached=True)
    assert effect(change) == (42.0, 1.0, 1.0)


def test_a_paced_429_backs_off_once_per_round() -> None:
    learner = PaceLearner()
    # both sent at 10 ms, in flight when the first 429 comes
    early, late = Permit(1.0, paced=True, interval=0.01), Permit(1.0, paced=True, interval=0.01)
    assert effect(learner.throttled(early, 0.002, 1.01, 0.01)) == (0.002, BACKOFF, 0.0)
    # sent before that backoff: it says nothing of the new interval
    assert effect(learner.throttled(late, 0.002, 1.012, 0.011)) == (0.002, 1.0, 0.0)
    after = Permit(1.02, paced=True, interval=0.011)
    assert learner.throttled(after, 0.002, 1.03, 0.011).factor == BACKOFF


def test_a_429_sent_before_another_process_backed_off_is_already_counted() -> None:
    # a fleet: two processes' learners, one store. Both sent a request at 10 ms; the
    # first 429 reaches process A, which slows the shared pace to 11 ms; then process
    # B's 429 comes: the same round, already counted (it went before the backoff)
    first, second = PaceLearner(), PaceLearner()
    sent = Permit(1.0, paced=True, interval=0.01)
    assert first.throttled(sent, 0.002, 1.01, 0.01).factor == BACKOFF
    assert effect(second.throttled(sent, 0.002, 1.011, 0.011)) == (0.002, 1.0, 0.0)
    # a request B sent at the new pace backs off again; so does one sent while probes
    # had shortened the pace (no backoff came between)
    assert second.throttled(Permit(1.02, True, None, 0.011), 0.002, 1.03, 0.011).factor == BACKOFF
    probed = Permit(1.1, True, None, 0.0121)
    assert first.throttled(probed, 0.002, 1.11, 0.0120).factor == BACKOFF


def test_a_429_that_does_not_say_how_long_slows_the_pace_only_when_frequent() -> None:
    learner = learner_after("s" * 20)
    first = learner.throttled(Permit(1.0), None, 1.0, 0.0, limit_reached=True)
    assert effect(first) == (0.5, 1.0, 0.0)
    second = learner.throttled(Permit(1.0), None, 1.0, 0.0, limit_reached=True)
    assert effect(second) == (0.5, 1.0, 0.01)


def test_only_paced_successes_without_headers_probe() -> None:
    learner = PaceLearner()
    assert learner.answered(Permit(0.0, paced=True), None, 0.0, 0.01).factor == 1 - PROBE
    assert learner.answered(Permit(0.0), None, 0.0, 0.01).empty  # not spaced: says nothing
    assert learner.answered(Permit(0.0, paced=True), None, 0.0, 0.0).empty  # not pacing
    learner.answered(Permit(0.0), OPENAI_MINUTE, 0.0, 0.0)  # the provider sends headers...
    assert learner.answered(Permit(0.0, paced=True), None, 0.0, 0.01).empty  # ...they rule


def test_a_slow_answer_holds_the_next_request_one_refill_after_a_late_arrival() -> None:
    # the provider's refill clock starts when a request arrives; an answer 3 ms slower
    # than the fastest may have arrived 3 ms late, so the next one goes 10 ms after that
    learner = PaceLearner()
    fast = learner.answered(Permit(1.0, paced=True), None, 1.002, 0.01)
    assert fast.hold == pytest.approx(0.008)  # 10 ms after it went (2 ms ago)
    slow = learner.answered(Permit(2.0, paced=True), None, 2.005, 0.01)
    assert slow.hold == pytest.approx(0.008, abs=1e-4)  # 10 ms after it arrived, 3 ms late
    empty = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.01)
    assert learner.answered(Permit(3.0), empty, 3.002, 0.01).hold == pytest.approx(0.008)


def test_the_learner_says_what_it_knows() -> None:
    learner = learner_after("sst", gap=0.002)
    assert repr(learner) == (
        "PaceLearner(throttled_share=0.125, success_gap=0.002000, headers=False)"
    )
