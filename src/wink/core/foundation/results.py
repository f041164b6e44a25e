"""`ToolResult`: the outcome of one tool call, success or failure alike, as a value.

The ground floor of the contract: a tool's failure is one of these, sent back to the
model, never an exception (docs/tools.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from .content import Attachment, Audio, Document, Image, attachments_of

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

    Images, documents and audio go to the model as parts: as the `value` (one part, or
    a list of them) or in `attachments`, beside any value; they follow the message
    (docs/multimodal.md says where each provider puts them).
    """

    message: str
    value: T | None = None
    success: bool = True
    exclude_value_from_context: bool = False
    code: ErrorCode | None = None
    attachments: Sequence[Attachment] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        parts = attachments_of(self.attachments, "attachments", "ToolResult(attachments=...)")
        object.__setattr__(self, "attachments", parts)

    def parts(self) -> tuple[Attachment, ...]:
        """What the model gets as parts: a value that is a part (or a list of parts, not
        excluded from the context), then `attachments`."""
        value: Any = self.value
        found: tuple[Attachment, ...] = ()
        if self.success and not self.exclude_value_from_context:
            if isinstance(value, Image | Document | Audio):
                found = (value,)
            elif _all_parts(value):
                found = tuple(cast(Sequence[Attachment], value))
        return (*found, *self.attachments)

    @classmethod
    def ok(
        cls,
        value: V,
        message: str = "",
        *,
        exclude_value_from_context: bool = False,
        attachments: Sequence[Attachment] = (),
    ) -> ToolResult[V]:
        # Generic in its own variable, so `ToolResult.ok(x)` infers the type from `x`.
        return ToolResult(
            message=message,
            value=value,
            success=True,
            exclude_value_from_context=exclude_value_from_context,
            attachments=attachments,
        )

    @classmethod
    def error(cls, message: str, *, code: ErrorCode | None = None) -> ToolResult[Any]:
        return ToolResult(message=message, value=None, success=False, code=code)


def _all_parts(value: object) -> bool:
    """A non-empty list or tuple of parts only (sent as parts, not as JSON)."""
    if not isinstance(value, list | tuple) or not value:
        return False
    items = cast(Sequence[object], value)
    return all(isinstance(item, Image | Document | Audio) for item in items)
