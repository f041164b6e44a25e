"""Session: an append-only event log, reduced into typed slices.

Every event dispatched lands in the slice of its own type (`session[ToolInvoked]` is the
tuple of all `ToolInvoked` events); reducers registered for an event type derive further
slices. Slices are replaced, never mutated, so a snapshot is a cheap copy of references.

A tool's changes run inside a transaction: events it dispatches are tagged with its call,
and when the tool fails they are removed and the rest replayed, so a failed tool leaves
no trace even while other tools of the same turn ran in parallel.
"""

from __future__ import annotations

import contextvars
import copy
import logging
import threading
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast, overload

from ..foundation.checks import a_callable, an_instance
from ..foundation.errors import RestoreFailedError, SnapshotError, SnapshotRestoreError

__all__ = ["Reducer", "Session", "Snapshot"]

S = TypeVar("S")
E = TypeVar("E")
D = TypeVar("D")

Reducer = Callable[[Any, Any], Any]

_transaction: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "wink_session_transaction", default=None
)
_MUTABLE = (list, dict, set, bytearray)
logger = logging.getLogger("wink.session")


# --- snapshots


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state of a session at one point: its slices and the length of its log."""

    session_id: int
    sequence: int
    generation: int
    slices: Mapping[type[Any], Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class _Registration:
    slice_type: type[Any]
    reducer: Reducer


class Session:
    """Event log plus reducers; `session[T]` reads a slice, `snapshot`/`restore` travel in time."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # (sequence number, transaction, event); sequence numbers only grow.
        self._log: list[tuple[int, object | None, object]] = []
        self._next_sequence = 0
        # For each removal from the log, the lowest sequence number it removed: a
        # snapshot taken before a removal below its own sequence is stale.
        self._removals: list[int] = []
        self._slices: dict[type[Any], Any] = {}
        self._reducers: dict[type[Any], list[_Registration]] = {}
        self._subscribers: list[Callable[[object], None]] = []

    # ---- reading

    @overload
    def __getitem__(self, slice_type: type[S]) -> Any: ...
    @overload
    def __getitem__(self, slice_type: Any) -> Any: ...
    def __getitem__(self, slice_type: Any) -> Any:
        """The slice for `slice_type`: the reduced value, or the tuple of events of that type."""
        with self._lock:
            if slice_type in self._slices:
                return self._slices[slice_type]
        if self._is_reduced_slice(slice_type):
            return None
        return ()

    def get(self, slice_type: type[S], default: D) -> S | D:
        _check_type("get", "slice_type", slice_type)
        with self._lock:
            return cast(S | D, self._slices.get(slice_type, default))

    @property
    def events(self) -> tuple[object, ...]:
        with self._lock:
            return tuple(event for _, _, event in self._log)

    def __len__(self) -> int:
        return len(self._log)

    def __repr__(self) -> str:
        return f"Session(events={len(self._log)}, slices={len(self._slices)})"

    # ---- writing

    def register_reducer(
        self, event_type: type[E], reducer: Callable[[Any, E], Any], *, slice_type: type[Any]
    ) -> None:
        """Fold every future `event_type` into `session[slice_type]` with `reducer(current, event)`.

        `current` is None before the first event. Return a new value; do not mutate the old one
        (snapshots share it).
        """
        _check_type("register_reducer", "event_type", event_type)
        _check_type("register_reducer", "slice_type", slice_type)
        a_callable(reducer, "Session.register_reducer(reducer=...)", "reducer")
        with self._lock:
            self._reducers.setdefault(event_type, []).append(
                _Registration(slice_type, cast(Reducer, reducer))
            )

    def subscribe(self, callback: Callable[[object], None]) -> None:
        """Call `callback(event)` after every dispatch (to watch a run as it happens).

        A subscriber observes; it cannot fail the run. An exception it raises is logged
        at ERROR on `wink.session` with its traceback, and the other subscribers and the
        evaluation go on (as `logging` treats a failing handler). A reducer's exception,
        by contrast, propagates: the state it computes would be wrong.
        """
        a_callable(callback, "Session.subscribe(callback=...)", "callback")
        self._subscribers.append(callback)

    def dispatch(self, event: object) -> None:
        """Record `event` and update the slices it feeds."""
        with self._lock:
            self._apply(_transaction.get(), event)
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception:
                logger.exception(
                    "session subscriber %r raised on %s; the run goes on",
                    callback,
                    type(event).__name__,
                )

    def _apply(
        self, transaction: object | None, event: object, sequence: int | None = None
    ) -> None:
        event_type = type(event)
        updates: dict[type[Any], Any] = {event_type: (*self._slices.get(event_type, ()), event)}
        for registration in self._reducers.get(event_type, ()):
            key = registration.slice_type
            current = updates[key] if key in updates else self._slices.get(key)
            updates[key] = registration.reducer(current, event)
        self._slices.update(updates)
        if sequence is None:
            sequence = self._next_sequence
            self._next_sequence += 1
        self._log.append((sequence, transaction, event))

    def _is_reduced_slice(self, slice_type: Any) -> bool:
        return any(
            registration.slice_type is slice_type
            for registrations in self._reducers.values()
            for registration in registrations
        )

    # ---- snapshots and transactions

    def snapshot(self) -> Snapshot:
        """Capture the current state; mutable slice values are deep-copied."""
        with self._lock:
            slices: dict[type[Any], Any] = {}
            for key, value in self._slices.items():
                if isinstance(value, _MUTABLE):
                    try:
                        value = copy.deepcopy(cast(object, value))
                    except Exception as error:
                        raise SnapshotError(
                            f"cannot snapshot slice {key.__name__}: {error}"
                        ) from error
                slices[key] = value
            return Snapshot(
                session_id=id(self),
                sequence=self._next_sequence,
                generation=len(self._removals),
                slices=slices,
            )

    def restore(self, snapshot: Snapshot) -> None:
        """Return to `snapshot`, dropping every event recorded after it."""
        _check_snapshot("restore", snapshot)
        with self._lock:
            if snapshot.session_id != id(self) or snapshot.sequence > self._next_sequence:
                raise SnapshotRestoreError("the snapshot was not taken from this session's past")
            try:
                self._remove(
                    lambda sequence, _: sequence >= snapshot.sequence, snapshot, always=True
                )
            except Exception as error:
                raise SnapshotRestoreError(f"restoring the snapshot failed: {error}") from error

    @contextmanager
    def transaction(self, key: object) -> Generator[Snapshot]:
        """Tag events dispatched inside the block (and in tasks it starts) with `key`."""
        snapshot = self.snapshot()
        token = _transaction.set(key)
        try:
            yield snapshot
        finally:
            _transaction.reset(token)

    def rollback(self, snapshot: Snapshot, key: object) -> None:
        """Undo the events of transaction `key` since `snapshot`, keeping everyone else's."""
        _check_snapshot("rollback", snapshot)
        with self._lock:
            try:
                self._remove(
                    lambda sequence, transaction: (
                        transaction is key and sequence >= snapshot.sequence
                    ),
                    snapshot,
                )
            except Exception as error:
                raise RestoreFailedError(f"rolling back a failed tool failed: {error}") from error

    def _remove(
        self,
        doomed: Callable[[int, object | None], bool],
        base: Snapshot,
        *,
        always: bool = False,
    ) -> None:
        """Drop the entries `doomed` selects and rebuild the slices without them.

        The rebuild starts from `base` when it is still exact (nothing below its sequence
        was removed since it was taken), else from an empty session, replaying the log.
        """
        removed = [entry[0] for entry in self._log if doomed(entry[0], entry[1])]
        if not removed and not always:
            return
        kept = [entry for entry in self._log if not doomed(entry[0], entry[1])]
        stale = any(lowest < base.sequence for lowest in self._removals[base.generation :])
        replay_from = 0 if stale else base.sequence
        self._slices = {} if stale else dict(base.slices)
        self._log = [entry for entry in kept if entry[0] < replay_from]
        if removed:
            self._removals.append(min(removed))
        for sequence, transaction, event in kept:
            if sequence >= replay_from:
                self._apply(transaction, event, sequence)


def _check_type(method: str, name: str, value: object) -> None:
    """Slices and events are keyed by class: anything else is a mistake, said here."""
    an_instance(value, type, f"Session.{method}({name}=...)", name, "a class")


def _check_snapshot(method: str, snapshot: object) -> None:
    where = f"Session.{method}(snapshot=...)"
    an_instance(snapshot, Snapshot, where, "snapshot", "a Snapshot (session.snapshot())")
