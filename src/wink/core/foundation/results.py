"""`ToolResult`: the outcome of one tool call, success or failure alike, as a value.

The ground floor of the contract: a tool's failure is one of these, sent back to the
model, never an exception (docs/tools.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

__all__ = ["ErrorCode", "ToolResult"]

T = TypeVar("T")
V = TypeVar("V")

ErrorCode = Literal[
    "not_found",
    "invalid_input",
    "timeout",
    "rate_limited",
    "external_service_error",
    "internal_error",
]


@dataclass(frozen=True, slots=True)
class ToolResult(Generic[T]):
    """The outcome of one tool call, success or failure alike.

    `message` is what the model reads. On failure (`success=False`) `value` is None and
    the message goes back to the model in the provider's native error form, so the model
    can correct itself instead of the run crashing. `code` lets telemetry and prompts
    branch on the kind of failure. `exclude_value_from_context` keeps a large `value`
    out of what the model sees (only `message` is sent).
    """

    message: str
    value: T | None = None
    success: bool = True
    exclude_value_from_context: bool = False
    code: ErrorCode | None = None

    @classmethod
    def ok(
        cls, value: V, message: str = "", *, exclude_value_from_context: bool = False
    ) -> ToolResult[V]:
        # Generic in its own variable, so `ToolResult.ok(x)` infers the type from `x`.
        return ToolResult(
            message=message,
            value=value,
            success=True,
            exclude_value_from_context=exclude_value_from_context,
        )

    @classmethod
    def error(cls, message: str, *, code: ErrorCode | None = None) -> ToolResult[Any]:
        return ToolResult(message=message, value=None, success=False, code=code)
