"""The in-process pace store (`MemoryStore`): its semantics by example, and the invariants
of every store over random scenarios. test_pace_store_redis.py plays the same
scenarios on the Redis store and requires the same answers."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers.pace_scenarios import (
    FakeClock,
    Step,
    changes,
    check_invariants,
    leads,
    play,
    scenarios,
)
from wink.core.throttling.pace_store import MemoryStore, PaceChange


def test_not_pacing_every_booking_goes_at_once_and_books_nothing() -> None:
    store = MemoryStore(FakeClock())
    assert [store.book_now(1.0).wait for _ in range(3)] == [0.0] * 3
    store.apply_now(PaceChange(floor=0.5))
    assert store.book_now(10.0).wait == 0.0  # nothing booked before: the first goes now


def test_slots_are_one_interval_apart_and_a_late_caller_books_none() -> None:
    clock = FakeClock()
    store = MemoryStore(clock)
    store.apply_now(PaceChange(floor=0.25))
    waits = [store.book_now(1.0).wait for _ in range(4)]
    assert waits == [0.0, 0.25, 0.5, 0.75]
    assert store.book_now(1.0).wait is None  # the slot at 1.0 is not within 1.0
    assert store.book_now(2.0).wait == 1.0  # the refused one did not take it


def test_a_hold_keeps_everyone_out_and_moves_the_queue_back_behind_it() -> None:
    clock = FakeClock()
    store = MemoryStore(clock)
    store.apply_now(PaceChange(floor=0.25))
    store.book_now(9.0)  # goes at once
    first, second = store.book_now(9.0), store.book_now(9.0)  # due at +0.25 and +0.5
    store.apply_now(PaceChange(hold=1.0))  # a 429: nobody before +1.0
    clock.now += 0.25
    held = store.release_now(first.mark, 9.0)
    assert held.wait == 0.75
    assert held.held_for == 0.75
    clock.now += 0.75
    assert store.release_now(first.mark, 9.0).wait == 0.0  # at the end of the hold...
    assert store.release_now(second.mark, 9.0).wait == 0.25  # ...and the next one after
    clock.now += 0.25
    assert store.release_now(second.mark, 9.0).wait == 0.0


def test_a_longer_interval_spaces_the_sleepers_already_booked() -> None:
    clock = FakeClock()
    store = MemoryStore(clock)
    store.apply_now(PaceChange(floor=0.25))
    store.book_now(9.0)
    booked = store.book_now(9.0)  # due at +0.25
    store.apply_now(PaceChange(factor=2.0))  # a backoff: 0.5 from now on
    clock.now += 0.25
    assert store.release_now(booked.mark, 9.0).wait == 0.25  # one new interval after


def test_a_change_is_a_hold_and_an_affine_step_of_the_interval() -> None:
    store = MemoryStore(FakeClock())
    assert store.apply_now(PaceChange(floor=0.5)).interval == 0.5
    assert store.apply_now(PaceChange(factor=0.5)).interval == 0.25
    assert store.apply_now(PaceChange(factor=0.9, floor=0.3)).interval == 0.3
    assert store.apply_now(PaceChange(factor=0.0)).interval == 0.0  # stop pacing
    assert store.apply_now(PaceChange(hold=2.0)).held_for == 2.0
    assert "interval=0.000000" in repr(store)
    assert PaceChange().empty
    assert not PaceChange(hold=0.1).empty


@given(st.lists(changes, min_size=1, max_size=6), st.floats(0.0, 10.0))
def test_changes_fold_into_one(folded: list[PaceChange], start: float) -> None:
    one_by_one, at_once = MemoryStore(FakeClock()), MemoryStore(FakeClock())
    one_by_one.apply_now(PaceChange(floor=start))
    at_once.apply_now(PaceChange(floor=start))
    total = PaceChange()
    for change in folded:
        one_by_one.apply_now(change)
        total = total.then(change)
    folded_state, stepped_state = at_once.apply_now(total), one_by_one.apply_now(PaceChange())
    assert folded_state.interval == pytest.approx(stepped_state.interval)
    assert folded_state.held_for == pytest.approx(stepped_state.held_for)


@settings(max_examples=300, deadline=None)
@given(scenarios, leads)
def test_the_memory_store_keeps_every_invariant(scenario: list[Step], lead: float) -> None:
    clock = FakeClock()
    check_invariants(asyncio.run(play(MemoryStore(clock, lead), clock, scenario)), lead)


def test_a_slot_due_within_the_lead_is_the_callers_at_once() -> None:
    clock = FakeClock()
    store = MemoryStore(clock, lead=0.125)
    store.apply_now(PaceChange(floor=0.25))
    assert store.book_now(9.0, store.lead).go  # goes now
    later = store.book_now(9.0, store.lead)
    assert (later.wait, later.go) == (0.25, False)  # further than the lead: ask again then
    clock.now += 0.1875
    woke = store.release_now(later.mark, 9.0, store.lead)
    assert (woke.wait, woke.go) == (0.0625, True)  # its slot, with the wait left
    # the next slot counts from the one given, not from when it was given
    assert store.book_now(9.0).wait == 0.3125
