"""What a script is made of, and how the emulator asks a script callable for a turn."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import cast

from ..core.foundation.checks import kind_of
from ..core.foundation.errors import InvalidArgumentError
from .faults import Fault
from .records import EmulatedRequest
from .turns import Turn

__all__ = [
    "ScriptFailure",
    "ScriptFunction",
    "ScriptItem",
    "call_script",
    "checked_items",
    "script_items",
]

ScriptItem = Turn | Fault
"""One step of a script: the model's `Turn`, or a `Fault` the server answers with."""
ScriptFunction = Callable[[EmulatedRequest], Turn | Fault | None]
"""A script that decides per request: the `Turn` or `Fault` to answer, or None for the
`default_turn`."""


class ScriptFailure(Exception):
    """The script callable raised, or returned something it may not: its bug, not ours."""


def checked_items(items: Iterable[object]) -> list[ScriptItem]:
    """The items, if each is a Turn or a Fault (a script typo should fail here, not later)."""
    checked: list[ScriptItem] = []
    for item in items:
        if isinstance(item, Turn | Fault):
            checked.append(item)
        else:
            raise InvalidArgumentError(
                f"a script holds Turn and Fault values, not {type(item).__name__}",
                argument="script",
            )
    return checked


def script_items(script: object) -> Iterable[object]:
    """A script that is neither a callable nor a list (a str, a single Turn) is named."""
    if isinstance(script, str | bytes | Turn | Fault) or not isinstance(script, Iterable):
        raise InvalidArgumentError(
            "a script is a list of Turn and Fault values or a function of the request, "
            f"got {kind_of(script)}",
            argument="script",
        )
    return cast(Iterable[object], script)


def call_script(
    function: ScriptFunction, request: EmulatedRequest
) -> tuple[ScriptItem | None, float]:
    """Run the script callable; latency becomes a delay. If it raises, or returns what a
    script may not, that is the script's bug: `ScriptFailure`, an internal error."""
    try:
        item = cast(object, function(request))  # whatever it returns, checked below
    except Exception as exc:
        raise ScriptFailure() from exc
    if isinstance(item, Fault) and item.kind == "latency":
        return None, item.seconds
    if item is None or isinstance(item, Turn | Fault):
        return item, 0.0
    raise ScriptFailure(f"it returned {type(item).__name__}, not a Turn, a Fault or None")
