"""Plain functions as tools: `def get_weather(city: str) -> str` with a docstring.

A function becomes a `Tool` whose parameters are a dataclass made from its signature,
so everything after that — validation, the executor, failures sent back in the
provider's form — is the `Tool` path unchanged. The JSON schema comes from the type
hints through pydantic (defaults, `Literal`, `Annotated[..., Field(...)]`, models and
dataclasses as parameters); the descriptions from the docstring (Google `Args:`, Sphinx
`:param`, numpy `Parameters`), read by `docstring_parser`. A parameter annotated
`ToolContext` receives the context and is not in the schema. A plain return value is
`ToolResult.ok(value)`; a returned `ToolResult` is kept as it is.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast, overload

from pydantic import Field, PydanticSchemaGenerationError, TypeAdapter

from ..foundation.checks import kind_of
from ..foundation.errors import ConfigurationError, PromptValidationError
from ..foundation.results import ToolResult
from .tools import Tool, ToolContext, validate_tool_name

__all__ = ["as_tool", "function_tool", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__wink_tool__"  # where `@tool` keeps the function's `Tool`
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def function_tool(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    graceful: bool | None = None,
) -> Tool[Any, Any]:
    """The `Tool` for a plain function, sync or async (see the module docstring).

    `name` defaults to the function's name, `description` to its docstring without the
    parameter sections. A function the model could not call — hints pydantic cannot turn
    into a schema, `*args`, no description — is a `ConfigurationError` naming the
    function and the parameter."""
    if not callable(function):
        raise ConfigurationError(f"a tool must be a Tool or a function, got {kind_of(function)}")
    label = _label(function)
    tool_name = name if name is not None else getattr(function, "__name__", "")
    try:
        validate_tool_name(tool_name)
    except PromptValidationError as error:
        raise ConfigurationError(f"function {label}: {error}", option="tools") from error
    if graceful is not None and not isinstance(cast(object, graceful), bool):
        raise ConfigurationError(
            f"function {label}: graceful must be True, False or None, got {kind_of(graceful)}",
            option="tools",
        )
    try:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as error:  # a string annotation naming nothing, a builtin
        raise ConfigurationError(
            f"function {label}: cannot read its signature and type hints ({error})",
            option="tools",
        ) from error
    import docstring_parser  # only when a function is made into a tool

    doc = docstring_parser.parse(inspect.getdoc(function) or "")
    documented = {param.arg_name: param.description for param in doc.params}
    fields: list[tuple[str, Any, Any]] = []
    context_name: str | None = None
    positional: list[str] = []
    for parameter in signature.parameters.values():
        hint = hints.get(parameter.name, Any)
        if hint is ToolContext:
            context_name = parameter.name
            continue
        if parameter.kind in _VARIADIC:
            raise ConfigurationError(
                f"function {label}: parameter {parameter.name!r} is variadic; a tool's "
                "arguments are named, so give each one a name and a type",
                option="tools",
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(parameter.name)
        typed = _described(hint, documented.get(parameter.name))
        _check_schema(label, parameter.name, typed)
        fields.append((parameter.name, typed, _default(parameter.default)))
    summary = "\n\n".join(
        part for part in (doc.short_description, doc.long_description) if part
    ).strip()
    text = description if description is not None else summary
    if not isinstance(cast(object, text), str) or not text.strip():
        raise ConfigurationError(
            f"function {label}: a tool needs a description for the model; give the "
            "function a docstring or pass description=",
            option="tools",
        )
    params = _params_class(tool_name, fields)
    handler = _handler(function, params, context_name, positional, hints.get("return"))
    try:
        return Tool(
            tool_name,
            text,
            handler,
            graceful,
            params_type=params,
            requires_approval=requires_approval,
        )
    except PromptValidationError as error:  # a bad name or requires_approval
        raise ConfigurationError(f"function {label}: {error}", option="tools") from error


def as_tool(given: object) -> Tool[Any, Any]:
    """`given` if it is a `Tool`; the tool of a function (`@tool`'s, or `function_tool`'s,
    made once per function)."""
    if isinstance(given, Tool):
        return cast(Tool[Any, Any], given)
    marked = getattr(given, _MARK, None)
    if isinstance(marked, Tool):
        return cast(Tool[Any, Any], marked)
    if not callable(given):
        raise ConfigurationError(
            f"tools takes Tools and functions, got {kind_of(given)}", option="tools"
        )
    try:
        return _cached_tool(given)
    except TypeError:  # a callable that cannot be a dict key
        return function_tool(cast(Callable[..., Any], given))


@functools.lru_cache(maxsize=1024)
def _cached_tool(function: Callable[..., Any]) -> Tool[Any, Any]:
    return function_tool(function)


@overload
def tool(function: F, /) -> F: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    graceful: bool | None = None,
) -> Callable[[F], F]: ...
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    graceful: bool | None = None,
) -> Any:
    """Mark a function as a tool, with its name, description or approval rule: `@tool`
    or `@tool(requires_approval=True)`. The function stays a plain function (call it in
    your tests); pass it wherever tools are taken. Checked here, at decoration."""

    def mark(target: Callable[..., Any]) -> Callable[..., Any]:
        made = function_tool(
            target,
            name=name,
            description=description,
            requires_approval=requires_approval,
            graceful=graceful,
        )
        try:
            setattr(target, _MARK, made)
        except (AttributeError, TypeError) as error:
            raise ConfigurationError(
                f"@tool cannot mark {kind_of(target)}; pass function_tool(...) instead",
                option="tools",
            ) from error
        return target

    return mark(function) if function is not None else mark


# --- the pieces


def _label(function: object) -> str:
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    return repr(name) if isinstance(name, str) else repr(function)


def _described(hint: Any, description: str | None) -> Any:
    """The hint with the docstring's description, under any `Field` given in the hint
    itself (which wins)."""
    if not description:
        return hint
    if typing.get_origin(hint) is Annotated:
        base, *metadata = typing.get_args(hint)
        return Annotated[base, Field(description=description), *metadata]  # type: ignore[valid-type]
    return Annotated[hint, Field(description=description)]


def _check_schema(label: str, parameter: str, hint: Any) -> None:
    """A parameter whose type has no JSON schema fails now, named, not at the first call."""
    try:
        TypeAdapter(hint).json_schema()
    except (PydanticSchemaGenerationError, TypeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigurationError(
            f"function {label}: parameter {parameter!r} has a type the model cannot be given "
            f"a JSON schema for ({first})",
            option="tools",
        ) from error


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return dataclasses.MISSING
    if type(value).__hash__ is None:  # a dataclass takes no mutable (unhashable) default
        kept = cast(object, value)
        return dataclasses.field(default_factory=lambda: copy.deepcopy(kept))
    return value


def _params_class(tool_name: str, fields: list[tuple[str, Any, Any]]) -> type[Any]:
    spec = [
        (field_name, hint) if default is dataclasses.MISSING else (field_name, hint, default)
        for field_name, hint, default in fields
    ]
    made = dataclasses.make_dataclass(tool_name or "params", spec, frozen=True, kw_only=True)
    made.__doc__ = None  # no made-up description in the schema
    return made


def _as_result(value: object) -> ToolResult[Any]:
    """A returned `ToolResult` as it is; any other value is `ToolResult.ok(value)`."""
    if isinstance(value, ToolResult):
        return cast(ToolResult[Any], value)
    return ToolResult[Any].ok(value)


def _handler(
    function: Callable[..., Any],
    params: type[Any],
    context_name: str | None,
    positional: list[str],
    returns: Any,
) -> Callable[..., Any]:
    names = [f.name for f in dataclasses.fields(params) if f.name not in positional]

    def arguments(values: Any, context: ToolContext) -> tuple[list[Any], dict[str, Any]]:
        given = {name: getattr(values, name) for name in names}
        if context_name is not None:
            given[context_name] = context
        return [getattr(values, name) for name in positional], given

    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__
    ):

        async def run_async(values: Any, *, context: ToolContext) -> ToolResult[Any]:
            args, kwargs = arguments(values, context)
            result: object = await function(*args, **kwargs)
            return _as_result(result)

        handler: Callable[..., Any] = run_async
    else:

        def run(values: Any, *, context: ToolContext) -> ToolResult[Any]:
            args, kwargs = arguments(values, context)
            result: object = function(*args, **kwargs)
            return _as_result(result)

        handler = run
    # the logs name the user's function, not this wrapper
    handler.__name__ = getattr(function, "__name__", handler.__name__)
    handler.__qualname__ = getattr(function, "__qualname__", handler.__qualname__)
    handler.__module__ = getattr(function, "__module__", handler.__module__)
    if returns is None:
        result: Any = ToolResult[Any]
    elif typing.get_origin(returns) is ToolResult or returns is ToolResult:
        result = returns
    else:
        result = ToolResult[returns]
    handler.__annotations__ = {"values": params, "context": ToolContext, "return": result}
    return handler
