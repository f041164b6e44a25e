"""A `WinkError` as JSON and back, for what waits on disk (a batch job's failed items).

The class is named (one of `wink.core.foundation.errors`), with its message and the
attributes JSON can carry (`phase`, `status_code`, `provider_payload`, a throttle's
`details`...); what it cannot carry (a content part, a type) comes back as None. wink's
errors hold no secret: their messages and payloads were cleaned when they were made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from . import errors
from .errors import InvalidArgumentError, PromptEvaluationError, ThrottleDetails, WinkError

__all__ = ["error_from_json", "error_to_json"]

_ERROR_TYPES: dict[str, type[WinkError]] = {
    name: value
    for name in errors.__all__
    if isinstance(value := getattr(errors, name), type) and issubclass(value, WinkError)
}
_DETAILS = "details"


def error_to_json(error: WinkError) -> dict[str, Any]:
    """`{"type": class name, "message": ..., "attributes": {...}}`."""
    kind = type(error)
    while kind.__name__ not in _ERROR_TYPES:  # a subclass of the user's: its wink base
        kind = cast(type[WinkError], kind.__mro__[1])
    attributes: dict[str, Any] = {}
    for name, value in vars(error).items():
        if name.startswith("_"):
            continue
        if isinstance(value, ThrottleDetails):
            value = {
                "kind": value.kind,
                "retry_after": value.retry_after_seconds,
                "attempts": value.attempts,
                "retry_safe": value.retry_safe,
                "status_code": value.status_code,
                "limit_reached": value.limit_reached,
            }
        attributes[name] = value if _carried(value) else None
    message = error.message if isinstance(error, PromptEvaluationError) else str(error)
    return {"type": kind.__name__, "message": message, "attributes": attributes}


def error_from_json(data: object, where: str) -> WinkError:
    """The error `error_to_json` wrote; anything else is an `InvalidArgumentError` that
    starts with `where` (what is read, and the place in it)."""
    if not isinstance(data, Mapping):
        raise _invalid(where, "is not an object")
    fields = cast(Mapping[str, Any], data)
    kind = _ERROR_TYPES.get(str(fields.get("type")))
    message, attributes = fields.get("message"), fields.get("attributes", {})
    if kind is None or not isinstance(message, str) or not isinstance(attributes, Mapping):
        raise _invalid(where, f"is not a wink error (type {fields.get('type')!r})")
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    for name, value in cast(Mapping[object, Any], attributes).items():
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise _invalid(where, f"has an attribute no wink error has: {name!r}")
        if name == _DETAILS and isinstance(value, Mapping):
            value = _details(cast(Mapping[str, Any], value), where)
        setattr(error, name, value)
    return error


def _details(value: Mapping[str, Any], where: str) -> ThrottleDetails:
    try:
        return ThrottleDetails(
            value["kind"],
            value.get("retry_after"),
            value.get("attempts", 1),
            value.get("retry_safe", True),
            value.get("status_code"),
            value.get("limit_reached", False) is True,
        )
    except (KeyError, WinkError) as error:
        raise _invalid(where, f"has throttle details that do not read: {error}") from error


def _carried(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _invalid(where: str, problem: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"{where} {problem}", argument="text")
