"""Session: slices, reducers, snapshots, transactions and rollback."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from wink import Session, SnapshotRestoreError, ToolInvoked, ToolResult
from wink.core.foundation.errors import RestoreFailedError


@dataclass(frozen=True)
class Added:
    value: int


@dataclass(frozen=True)
class Total:
    value: int


def add_to_total(current: Total | None, event: Added) -> Total:
    return Total((current.value if current else 0) + event.value)


def make_session() -> Session:
    session = Session()
    session.register_reducer(Added, add_to_total, slice_type=Total)
    return session


def test_events_land_in_their_type_slice_and_reducers() -> None:
    session = make_session()
    session.dispatch(Added(2))
    session.dispatch(Added(3))
    assert session[Added] == (Added(2), Added(3))
    assert session[Total] == Total(5)
    assert session[ToolInvoked] == ()
    assert session.events == (Added(2), Added(3))


def test_reduced_slice_is_none_before_any_event() -> None:
    assert make_session()[Total] is None
    assert make_session().get(Total, Total(0)) == Total(0)


def test_failed_tool_results_are_kept() -> None:
    session = Session()
    event = ToolInvoked(
        prompt_name="p",
        adapter="a",
        name="t",
        call_id="1",
        params=None,
        result=ToolResult.error("boom"),
    )
    session.dispatch(event)
    assert session[ToolInvoked] == (event,)
    assert session[ToolInvoked][0].result.value is None


def test_snapshot_and_restore() -> None:
    session = make_session()
    session.dispatch(Added(1))
    snapshot = session.snapshot()
    session.dispatch(Added(10))
    session.restore(snapshot)
    assert session[Total] == Total(1)
    assert session.events == (Added(1),)


def test_restore_rejects_a_foreign_snapshot() -> None:
    with pytest.raises(SnapshotRestoreError):
        make_session().restore(make_session().snapshot())


def test_mutable_slices_are_copied_into_snapshots() -> None:
    session = Session()

    def collect(current: list[int] | None, event: Added) -> list[int]:
        return [*(current or []), event.value]

    session.register_reducer(Added, collect, slice_type=list)
    session.dispatch(Added(1))
    snapshot = session.snapshot()
    session[list].append(99)  # a misbehaving caller mutates the live slice
    session.restore(snapshot)
    assert session[list] == [1]


def test_rollback_removes_only_the_failed_transaction() -> None:
    session = make_session()
    failed, other = object(), object()
    with session.transaction(failed) as snapshot:
        session.dispatch(Added(100))
    with session.transaction(other):
        session.dispatch(Added(5))
    session.rollback(snapshot, failed)
    assert session[Total] == Total(5)
    assert session.events == (Added(5),)


def test_rollback_without_changes_is_a_no_op() -> None:
    session = make_session()
    key = object()
    with session.transaction(key) as snapshot:
        pass
    session.dispatch(Added(1))
    session.rollback(snapshot, key)
    assert session[Total] == Total(1)


def test_failed_replay_raises_restore_failed() -> None:
    session = Session()
    calls = {"n": 0}

    def fragile(current: int | None, event: Added) -> int:
        calls["n"] += 1
        if calls["n"] > 2:
            raise RuntimeError("reducer broke on replay")
        return (current or 0) + event.value

    session.register_reducer(Added, fragile, slice_type=int)
    failed, other = object(), object()
    with session.transaction(failed) as snapshot:
        session.dispatch(Added(1))
    with session.transaction(other):
        session.dispatch(Added(2))
    with pytest.raises(RestoreFailedError) as info:
        session.rollback(snapshot, failed)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_dispatch_is_thread_safe() -> None:
    session = make_session()

    def work() -> None:
        for _ in range(500):
            session.dispatch(Added(1))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert session[Total] == Total(2000)
    assert len(session) == 2000


def test_subscribers_see_every_event() -> None:
    session = Session()
    seen: list[object] = []
    session.subscribe(seen.append)
    session.dispatch(Added(1))
    assert seen == [Added(1)]


def test_interleaved_rollbacks_do_not_resurrect_events() -> None:
    """Tool B's snapshot saw tool A's event; A rolls back first, then B: A stays gone."""
    session = make_session()
    a, b, c = object(), object(), object()
    with session.transaction(a) as snapshot_a:
        session.dispatch(Added(100))
    with session.transaction(b) as snapshot_b:
        session.dispatch(Added(1000))
    with session.transaction(c):
        session.dispatch(Added(7))
    session.rollback(snapshot_a, a)
    session.rollback(snapshot_b, b)
    assert session[Total] == Total(7)
    assert session.events == (Added(7),)


def test_restore_after_a_rollback_below_the_snapshot() -> None:
    session = make_session()
    a = object()
    with session.transaction(a) as snapshot_a:
        session.dispatch(Added(100))
    session.dispatch(Added(1))
    later = session.snapshot()
    session.dispatch(Added(2))
    session.rollback(snapshot_a, a)
    session.restore(later)
    assert session[Total] == Total(1)
    assert session.events == (Added(1),)
