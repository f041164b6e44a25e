"""Tools: typed handlers whose failures are values (`ToolResult`), not exceptions."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import TypeAdapter

from .errors import PromptValidationError

if TYPE_CHECKING:
    from .limits import Deadline
    from .resources import ResourceScope
    from .session import Session

__all__ = [
    "ErrorCode",
    "Tool",
    "ToolContext",
    "ToolHandler",
    "ToolResult",
    "inline_schema_refs",
    "validate_tool_name",
]

T = TypeVar("T")
V = TypeVar("V")
P = TypeVar("P")
R = TypeVar("R")

ErrorCode = Literal[
    "not_found",
    "invalid_input",
    "timeout",
    "rate_limited",
    "external_service_error",
    "internal_error",
]

# The intersection of what OpenAI, Anthropic and Gemini accept as a function name.
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


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


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may reach: the session, resources, deadline and its call identity."""

    session: Session
    resources: ResourceScope
    prompt_name: str
    call_id: str
    tool_name: str
    deadline: Deadline | None = None
    adapter: str = ""

    @property
    def remaining_time(self) -> float | None:
        """Seconds left before the evaluation's deadline (None without a deadline)."""
        return self.deadline.remaining() if self.deadline is not None else None


ToolHandler = Callable[..., "ToolResult[Any] | Awaitable[ToolResult[Any]]"]


def validate_tool_name(name: str) -> None:
    if not _TOOL_NAME.fullmatch(name):
        raise PromptValidationError(
            f"tool name {name!r} is not provider-safe: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or '_'"
        )


@dataclass(frozen=True, eq=False)
class Tool(Generic[P, R]):
    """A function the model may call.

    The parameter dataclass is read from the handler's first parameter annotation and
    the result type from its `ToolResult[R]` return annotation. The handler is called as
    `handler(params, context=context)`; it may be sync or async. `graceful=None` inherits
    the evaluation's `graceful_tool_errors`; `False` makes a raising handler abort the run.
    """

    name: str
    description: str
    handler: Callable[..., Any]
    graceful: bool | None = None
    params_type: type[Any] = field(init=False)
    result_type: Any = field(init=False)
    is_async: bool = field(init=False)

    def __post_init__(self) -> None:
        validate_tool_name(self.name)
        if not self.description.strip():
            raise PromptValidationError(f"tool {self.name!r} needs a description")
        params_type, result_type = _read_signature(self.name, self.handler)
        object.__setattr__(self, "params_type", params_type)
        object.__setattr__(self, "result_type", result_type)
        object.__setattr__(self, "is_async", _is_async_callable(self.handler))

    @cached_property
    def params_adapter(self) -> TypeAdapter[Any]:
        return TypeAdapter(self.params_type)

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        """JSON schema of the parameters, as pydantic generates it (refs inlined)."""
        return inline_schema_refs(self.params_adapter.json_schema())


def _is_async_callable(handler: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        type(handler).__call__
    )


def _read_signature(name: str, handler: Callable[..., Any]) -> tuple[type[Any], Any]:
    try:
        signature = inspect.signature(handler)
        hints = typing.get_type_hints(handler)
    except (TypeError, ValueError, NameError) as error:
        raise PromptValidationError(
            f"tool {name!r}: cannot read the handler's annotations ({error})"
        ) from error
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if not positional:
        raise PromptValidationError(
            f"tool {name!r}: the handler must take the params dataclass as first parameter"
        )
    if "context" not in signature.parameters:
        raise PromptValidationError(
            f"tool {name!r}: the handler must accept a keyword parameter 'context'"
        )
    params_type = hints.get(positional[0].name)
    if not (isinstance(params_type, type) and dataclasses.is_dataclass(params_type)):
        raise PromptValidationError(
            f"tool {name!r}: the first parameter must be annotated with a dataclass, "
            f"got {params_type!r}",
            dataclass_type=params_type if isinstance(params_type, type) else None,
        )
    result_type = _result_type(hints.get("return"))
    return params_type, result_type


def _result_type(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (Awaitable, typing.Coroutine) or str(origin).endswith("Coroutine'>"):
        args = typing.get_args(annotation)
        annotation = args[-1] if args else None
        origin = typing.get_origin(annotation)
    if origin is ToolResult:
        args = typing.get_args(annotation)
        return args[0] if args else Any
    return Any


def inline_schema_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Inline `$defs` references: Gemini's schema dialect has no `$ref`."""
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, Mapping):
            mapping = typing.cast(Mapping[str, Any], node)
            ref = mapping.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                key = ref.removeprefix("#/$defs/")
                if key in seen:  # recursive type: leave the reference as is
                    return dict(mapping)
                merged = {k: v for k, v in mapping.items() if k != "$ref"}
                return {**resolve(defs[key], seen | {key}), **merged}
            return {k: resolve(v, seen) for k, v in mapping.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(item, seen) for item in typing.cast(list[Any], node)]
        return node

    return resolve(schema, frozenset())
