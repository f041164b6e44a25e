"""What callers pass in, checked at the call, so a bad value is a typed `WinkError`.

A value of the wrong type is an `InvalidArgumentError` (also a `TypeError`); a value of
the right type that cannot be used (negative, not finite, empty) is a
`ConfigurationError` (also a `ValueError`). So `except WinkError` catches both, and so do
the `except TypeError` / `except ValueError` a caller may already have. `where` names
the call in the message, e.g. "RateLimit(burst=...)".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from .errors import ConfigurationError, InvalidArgumentError

__all__ = [
    "a_callable",
    "a_mapping",
    "a_number",
    "a_string",
    "a_whole_number",
    "an_instance",
    "kind_of",
]

T = TypeVar("T")


def kind_of(value: object) -> str:
    """What a message says was given: "None", "a str", "an int", "a MarkdownSection"."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeio' else 'a'} {name}"


def _wrong_type(where: str, name: str, expected: str, value: object) -> InvalidArgumentError:
    return InvalidArgumentError(f"{where} takes {expected}, got {kind_of(value)}", argument=name)


def a_number(
    value: object,
    where: str,
    name: str,
    *,
    minimum: float | None = None,
    positive: bool = False,
    finite: bool = True,
) -> float:
    """`value` as a float: an int or a float (not a bool), not NaN, finite unless
    `finite=False`, and at least `minimum` (above zero when `positive`)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _wrong_type(where, name, "a number", value)
    number = float(cast(float, value))
    if math.isnan(number) or (finite and math.isinf(number)):
        raise ConfigurationError(f"{where} takes a finite number, got {value!r}", option=name)
    if positive and not number > 0:
        raise ConfigurationError(f"{where} takes a number above 0, got {value!r}", option=name)
    if minimum is not None and number < minimum:
        raise ConfigurationError(
            f"{where} takes a number >= {minimum:g}, got {value!r}", option=name
        )
    return number


def a_whole_number(
    value: object,
    where: str,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """`value` as an int (not a bool), from `minimum` to `maximum`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong_type(where, name, "an int", value)
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"{where} takes an int >= {minimum}, got {value!r}", option=name)
    if maximum is not None and value > maximum:
        raise ConfigurationError(f"{where} takes an int <= {maximum}, got {value!r}", option=name)
    return value


def a_string(value: object, where: str, name: str, *, empty: bool = False) -> str:
    """`value` as a str, not empty (nor only spaces) unless `empty=True`."""
    if not isinstance(value, str):
        raise _wrong_type(where, name, "a string", value)
    if not empty and not value.strip():
        raise ConfigurationError(f"{where} takes a non-empty string, got {value!r}", option=name)
    return value


def a_mapping(value: object, where: str, name: str) -> Mapping[Any, Any]:
    """`value` as a mapping (a dict)."""
    if not isinstance(value, Mapping):
        raise _wrong_type(where, name, "a mapping (a dict)", value)
    return cast(Mapping[Any, Any], value)


def a_callable(value: object, where: str, name: str) -> Callable[..., Any]:
    """`value` when it can be called."""
    if not callable(value):
        raise _wrong_type(where, name, "a callable", value)
    return value


def an_instance(value: object, kind: type[T], where: str, name: str, expected: str) -> T:
    """`value` when it is a `kind`; `expected` says what to pass ("a Fault (Fault.rate_limit(),
    ...)")."""
    if not isinstance(value, kind):
        raise _wrong_type(where, name, expected, value)
    return value
