"""Scenarios for the pace stores (`wink.core.throttling.pace_store`): random sequences of
steps, played on a fake clock against any store, and the invariants every store's trace
must keep.

The same scenario played on `MemoryStore` and on `RedisStore` must give the same trace.
Times and numbers are multiples of 1/1024 (and factors powers of two or 1.25), so every
sum and product is exact in binary: the two stores' doubles must agree to the last bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

from wink.core.throttling.pace_store import PaceChange, PaceState, PaceStore

TICK = 1 / 1024


@dataclass(frozen=True)
class Advance:
    seconds: float


@dataclass(frozen=True)
class Apply:
    change: PaceChange


@dataclass(frozen=True)
class Book:
    most: float


@dataclass(frozen=True)
class Release:
    """A sleeper wakes (the clock moves on to the end of its wait) and asks to go."""

    which: int  # among the requests still sleeping, modulo their number
    most: float


Step = Advance | Apply | Book | Release

ticks = st.integers(min_value=0, max_value=64).map(lambda n: n * TICK)
limits = st.one_of(
    st.just(math.inf),
    st.just(math.inf),
    st.integers(min_value=0, max_value=96).map(lambda n: n * TICK),
)
# urgent: a Redis store sends each at once (one that may wait for the next step is aged
# by the time it waited, an approximation `tests/core/throttling/test_redis_store.py` covers)
changes = st.builds(
    PaceChange,
    hold=st.one_of(st.just(0.0), st.just(0.0), ticks),
    factor=st.sampled_from([1.0, 1.0, 1.0, 0.5, 1.25, 2.0, 0.0]),
    floor=st.one_of(st.just(0.0), st.integers(1, 24).map(lambda n: n * TICK)),
    urgent=st.just(True),
)
steps: st.SearchStrategy[Step] = st.one_of(
    st.builds(Advance, ticks),
    st.builds(Apply, changes),
    st.builds(Book, limits),
    st.builds(Book, limits),
    st.builds(Release, st.integers(0, 7), limits),
    st.builds(Release, st.integers(0, 7), limits),
)
scenarios = st.lists(steps, min_size=6, max_size=40)
# a store's lead (a slot due this soon is given at once): 0 in process, a round trip in Redis
leads = st.sampled_from([0.0, 0.0, TICK, 8 * TICK])


@dataclass
class FakeClock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Event:
    """One step as played: what it was, when, and the store's answer."""

    step: Step
    at: float
    state: PaceState | None  # None for Advance


@dataclass
class Trace:
    events: list[Event] = field(default_factory=list[Event])

    def answers(self) -> list[tuple[float | None, float, float, float, bool] | None]:
        """The store's answers, without the store's origin (`shared`)."""
        return [
            None
            if event.state is None
            else (
                event.state.wait,
                event.state.mark,
                event.state.interval,
                event.state.held_for,
                event.state.go,
            )
            for event in self.events
        ]


async def play(store: PaceStore, clock: FakeClock, scenario: list[Step]) -> Trace:
    """Play `scenario` on `store`; a sleeper wakes only when a Release step says so, at
    the end of its wait (or now, if the clock has passed it). A caller told to `go` is
    gone: it sends at the end of its wait, without asking again."""
    trace = Trace()
    sleeping: list[tuple[PaceState, float]] = []  # (its last answer, when it wakes)
    for step in scenario:
        state: PaceState | None = None
        if isinstance(step, Advance):
            clock.now += step.seconds
        elif isinstance(step, Apply):
            state = await store.apply(step.change)
        elif isinstance(step, Book):
            state = await store.book(step.most)
            if state.wait is not None and not state.go:
                sleeping.append((state, clock.now + state.wait))
        elif sleeping:
            index = step.which % len(sleeping)
            booked, wakes = sleeping[index]
            clock.now = max(clock.now, wakes)
            state = await store.release(booked, step.most)
            if state.wait is not None and not state.go:
                sleeping[index] = (state, clock.now + state.wait)
            else:
                del sleeping[index]
        trace.events.append(Event(step, clock.now, state))
    return trace


def check_invariants(trace: Trace, lead: float = 0.0) -> None:
    """What every store must keep, whatever the scenario."""
    last_go: float | None = None  # when the last request let go while pacing sends
    for event in trace.events:
        state, step = event.state, event.step
        if state is None or not isinstance(step, Book | Release) or state.wait is None:
            continue
        assert state.wait >= 0.0
        assert state.wait == 0.0 or state.wait < step.most  # no sleep that reaches the limit
        if not state.go:
            assert state.wait > lead  # a slot due within the lead is given at once
            continue
        assert state.wait <= lead
        assert state.held_for <= state.wait  # nobody goes inside a hold
        if state.interval > 0.0:
            # one interval (the current one) after the last request let go
            sends = event.at + state.wait
            assert last_go is None or sends - last_go >= state.interval
            last_go = sends
