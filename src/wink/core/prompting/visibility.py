"""Which sections of a prompt are shown in full or as their summary: a session slice.

Progressive disclosure (docs/prompts.md): a section with a `summary` is shown as that
summary until it is opened, through the session (`apply_visibility`) or `render`'s
`overrides`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from ..foundation.checks import kind_of
from ..foundation.errors import InvalidArgumentError, PromptValidationError

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "SectionPath",
    "SetVisibility",
    "Visibility",
    "VisibilityOverrides",
    "apply_visibility",
    "check_overrides",
    "check_session",
    "reduce_visibility",
]

Visibility = Literal["full", "summary"]
SectionPath = tuple[str, ...]

_VISIBILITIES: tuple[str, ...] = get_args(Visibility)


def check_overrides(overrides: Mapping[Any, Any]) -> dict[SectionPath, Visibility]:
    if not isinstance(cast(object, overrides), Mapping):
        raise PromptValidationError(
            "visibility overrides are a mapping {('guide', 'details'): 'full'}, "
            f"got {kind_of(overrides)}"
        )
    checked: dict[SectionPath, Visibility] = {}
    for key, visibility in overrides.items():
        parts = cast(tuple[object, ...], key) if isinstance(key, tuple) else ()
        if not parts or not all(isinstance(part, str) for part in parts):
            raise PromptValidationError(
                f"visibility override keys are section paths like ('guide', 'details'); got {key!r}"
            )
        path = cast(SectionPath, parts)
        if visibility not in _VISIBILITIES:
            raise PromptValidationError(
                f"visibility must be 'full' or 'summary', got {visibility!r}",
                section_path=path,
            )
        checked[path] = visibility
    return checked


@dataclass(frozen=True)
class VisibilityOverrides:
    """The session slice saying which sections are open ("full") or closed ("summary").

    Read it with `session.get(VisibilityOverrides, None)`; change it with
    `apply_visibility`. The mapping is a private copy and is never mutated.
    """

    overrides: Mapping[SectionPath, Visibility] = field(
        default_factory=lambda: dict[SectionPath, Visibility]()
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", check_overrides(self.overrides))


@dataclass(frozen=True)
class SetVisibility:
    """Event: show these sections in full (or summarized) from now on."""

    overrides: Mapping[SectionPath, Visibility]

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", check_overrides(self.overrides))


def reduce_visibility(
    current: VisibilityOverrides | None, event: SetVisibility
) -> VisibilityOverrides:
    """Fold a `SetVisibility` into the slice; later overrides of a path win."""
    merged: dict[SectionPath, Visibility] = {}
    if current is not None:
        merged.update(current.overrides)
    merged.update(event.overrides)
    return VisibilityOverrides(merged)


_sessions_with_reducer: weakref.WeakSet[object] = weakref.WeakSet()
_registration_lock = threading.Lock()


def apply_visibility(session: Session, overrides: Mapping[SectionPath, Visibility]) -> None:
    """Record overrides in the session so the next render of any prompt honours them.

    Registers `reduce_visibility` on the session the first time it is used there.
    """
    check_session(session, "register_reducer", "dispatch")
    event = SetVisibility(overrides)
    with _registration_lock:
        if session not in _sessions_with_reducer:
            session.register_reducer(
                SetVisibility, reduce_visibility, slice_type=VisibilityOverrides
            )
            _sessions_with_reducer.add(session)
    session.dispatch(event)


def check_session(session: object, *methods: str) -> None:
    """Anything with the session methods used here (a `Session`, or a test's stand-in)."""
    if not all(callable(getattr(session, method, None)) for method in methods):
        raise InvalidArgumentError(
            f"session must be a wink Session, got {kind_of(session)}", argument="session"
        )
