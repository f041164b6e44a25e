"""Tools: typed handlers whose failures are values (`ToolResult`), not exceptions."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import sys
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel, TypeAdapter

from ..foundation.checks import kind_of
from ..foundation.errors import PromptValidationError
from ..foundation.results import ToolResult

if TYPE_CHECKING:
    from ..foundation.limits import Deadline
    from .resources import ResourceScope
    from .session import Session

__all__ = [
    "Tool",
    "ToolContext",
    "ToolHandler",
    "inline_schema_refs",
    "is_model_type",
    "validate_tool_name",
]

T = TypeVar("T")
V = TypeVar("V")
P = TypeVar("P")
R = TypeVar("R")

# The intersection of what OpenAI, Anthropic and Gemini accept as a function name.
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


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


def is_model_type(value: object) -> bool:
    """True for the classes wink takes as tool parameters and structured output: a
    dataclass or a pydantic `BaseModel` subclass."""
    return isinstance(value, type) and (
        dataclasses.is_dataclass(value) or issubclass(value, BaseModel)
    )


def validate_tool_name(name: str) -> None:
    if not isinstance(cast(object, name), str):
        raise PromptValidationError(f"a tool name is a string, got {kind_of(name)}")
    if not _TOOL_NAME.fullmatch(name):
        raise PromptValidationError(
            f"tool name {name!r} is not provider-safe: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or '_'"
        )


@dataclass(frozen=True, eq=False, init=False)
class Tool(Generic[P, R]):
    """A function the model may call.

    The handler is called as `handler(params, context=context)` and may be sync or async;
    its signature is checked here, so a handler that cannot be called that way fails at
    construction, not in the middle of an evaluation. The parameter type (a dataclass
    or a pydantic `BaseModel`) is read from the handler's first parameter annotation (or
    given as `params_type`) and the result type from its `ToolResult[R]` return
    annotation. String annotations
    (`from __future__ import annotations`) resolve against the handler's module, its
    closure and the locals of the function calling `Tool(...)`, so tools built inside a
    function work. `graceful=None` inherits the evaluation's `graceful_tool_errors`;
    `False` makes a raising handler abort the run.

    `requires_approval=True` makes every call wait for a person (docs/approvals.md); a
    function of the params instead asks only for the calls it returns True for.
    """

    name: str
    description: str
    handler: Callable[..., Any]
    params_type: type[Any]
    graceful: bool | None = None
    requires_approval: bool | Callable[[Any], bool] = False
    result_type: Any = field(init=False)
    is_async: bool = field(init=False)

    def __init__(
        self,
        name: str,
        description: str,
        handler: Callable[..., Any],
        graceful: bool | None = None,
        *,
        params_type: type[P] | None = None,
        requires_approval: bool | Callable[[Any], bool] = False,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "description", description)
        set_field(self, "handler", handler)
        set_field(self, "graceful", graceful)
        set_field(self, "requires_approval", requires_approval)
        validate_tool_name(name)
        if not isinstance(cast(object, requires_approval), bool) and not callable(
            requires_approval
        ):
            raise PromptValidationError(
                f"tool {name!r}: requires_approval takes True, False or a function of the "
                f"params, got {kind_of(requires_approval)}"
            )
        if not isinstance(cast(object, description), str):
            raise PromptValidationError(
                f"tool {name!r} description must be a string, got {kind_of(description)}"
            )
        if not description.strip():
            raise PromptValidationError(f"tool {name!r} needs a description")
        found_params, result_type = _read_signature(
            name, handler, params_type, _caller_locals(handler)
        )
        set_field(self, "params_type", found_params)
        set_field(self, "result_type", result_type)
        set_field(self, "is_async", _is_async_callable(handler))

    @property
    def source(self) -> str | None:
        """Where the tool lives: None for a handler in this process, the name of the
        server that offers it otherwise (an MCP server: `wink.mcp`)."""
        return None

    def needs_approval(self, params: P) -> bool:
        """Whether this call (its validated `params`) must wait for a person."""
        asked = self.requires_approval
        if isinstance(asked, bool):
            return asked
        answer = asked(params)
        if not isinstance(cast(object, answer), bool):
            raise TypeError(
                f"tool {self.name!r}: requires_approval returned {kind_of(answer)}, not a bool"
            )
        return answer

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


# --- reading the handler's signature

_CALL_SHAPE = "handler(params, *, context)"
_Parameter = inspect.Parameter


def _underlying_function(handler: Callable[..., Any]) -> Any:
    """The plain function whose annotations and globals describe `handler`."""
    target: Any = handler
    for _ in range(8):  # partial of a bound method of a decorated function, at most
        target = inspect.unwrap(target)
        if isinstance(target, functools.partial):
            target = cast(functools.partial[Any], target).func
        elif inspect.ismethod(target):
            target = target.__func__
        elif not inspect.isfunction(target) and callable(target):
            target = type(target).__call__
        else:
            break
    return target if inspect.isfunction(target) else None


def _caller_locals(handler: Callable[..., Any]) -> dict[str, Any]:
    """Locals of the function that called `Tool(...)`, when it defined the handler.

    A handler defined inside a function names that function's locals in its string
    annotations; Python keeps no link to them, so, like pydantic for models defined in
    functions, we read the caller's frame. `sys._getframe` is a CPython detail: without
    it only the handler's globals and closure are used.
    """
    function = _underlying_function(handler)
    getframe = getattr(sys, "_getframe", None)
    if function is None or getframe is None:
        return {}
    try:
        frame: FrameType | None = getframe(1)
    except ValueError:
        return {}
    try:
        while frame is not None and frame.f_globals.get("__name__") == __name__:
            frame = frame.f_back
        if frame is None or not function.__qualname__.startswith(
            f"{frame.f_code.co_qualname}.<locals>."
        ):
            return {}  # not defined in the caller: the caller's locals are not its scope
        return dict(frame.f_locals)
    finally:
        del frame


def _read_signature(
    name: str,
    handler: Callable[..., Any],
    explicit_params: type[Any] | None,
    caller_locals: Mapping[str, Any],
) -> tuple[type[Any], Any]:
    if not callable(handler):
        raise PromptValidationError(f"tool {name!r}: the handler {handler!r} is not callable")
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as error:
        raise PromptValidationError(
            f"tool {name!r}: cannot read the handler's signature ({error})"
        ) from error
    _check_call_shape(name, signature)
    function = _underlying_function(handler)
    closure = dict(inspect.getclosurevars(function).nonlocals) if function is not None else {}
    resolve = _AnnotationResolver(
        tool_name=name,
        globals=function.__globals__ if function is not None else {},
        locals={**caller_locals, **closure},
        explicit_params=explicit_params,
    )
    positional = _positional(signature)
    annotated = resolve(positional[0].annotation if positional else _Parameter.empty)
    params_type = annotated
    if explicit_params is not None:
        params_type = explicit_params
        if _conflicts(explicit_params, annotated):
            raise PromptValidationError(
                f"tool {name!r}: params_type={explicit_params.__name__} does not match the "
                f"handler's first parameter annotation {annotated.__name__}",
                dataclass_type=explicit_params,
            )
    if not is_model_type(params_type):
        where = (
            "params_type must be a dataclass or a pydantic BaseModel"
            if explicit_params is not None
            else "the handler's first parameter must be annotated with a dataclass or a "
            "pydantic BaseModel (or pass params_type=...)"
        )
        raise PromptValidationError(
            f"tool {name!r}: {where}, got {params_type!r}",
            dataclass_type=params_type if isinstance(params_type, type) else None,
        )
    return params_type, _result_type(resolve(signature.return_annotation))


def _conflicts(explicit: type[Any], annotated: Any) -> bool:
    """True when the handler's params annotation names a class `explicit` is not."""
    if not isinstance(annotated, type) or annotated is Any:
        return False
    try:
        return not issubclass(explicit, annotated)
    except TypeError:  # e.g. a Protocol that is not runtime-checkable: nothing to compare
        return False


def _positional(signature: inspect.Signature) -> list[inspect.Parameter]:
    kinds = (_Parameter.POSITIONAL_ONLY, _Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in signature.parameters.values() if p.kind in kinds]


def _check_call_shape(name: str, signature: inspect.Signature) -> None:
    """Fail unless `handler(params, context=context)` binds, saying exactly why."""
    parameters = list(signature.parameters.values())
    kinds = {p.kind for p in parameters}
    positional = _positional(signature)
    first = positional[0] if positional else None
    context = signature.parameters.get("context")
    problem: str | None = None
    if first is None and _Parameter.VAR_POSITIONAL not in kinds:
        problem = "it has no positional parameter to receive the params"
    elif first is not None and first.name == "context":
        problem = "its first parameter is 'context', where the params go"
    elif (context is None and _Parameter.VAR_KEYWORD not in kinds) or (
        context is not None
        and context.kind not in (_Parameter.POSITIONAL_OR_KEYWORD, _Parameter.KEYWORD_ONLY)
    ):
        problem = "it does not accept 'context' as a keyword argument"
    else:
        variadic = (_Parameter.VAR_POSITIONAL, _Parameter.VAR_KEYWORD)
        extra = [
            repr(p.name)
            for p in parameters
            if p is not first
            and p.name != "context"
            and p.default is p.empty
            and p.kind not in variadic
        ]
        if extra:
            plural = "s" if len(extra) > 1 else ""
            problem = f"required parameter{plural} {', '.join(extra)} would get no value"
    if problem is None:
        try:
            signature.bind(object(), context=object())
        except TypeError as error:
            problem = str(error)
    if problem is not None:
        raise PromptValidationError(
            f"tool {name!r}: the handler must be callable as {_CALL_SHAPE}, but {problem}"
        )


@dataclass(frozen=True, slots=True)
class _AnnotationResolver:
    """Evaluates one string annotation against the handler's globals and `locals`.

    A name found nowhere is an error, unless `params_type` was given: then the
    annotations only inform, and an unreadable one counts as absent (None).
    """

    tool_name: str
    globals: dict[str, Any]
    locals: Mapping[str, Any]
    explicit_params: type[Any] | None

    def __call__(self, annotation: Any) -> Any:
        if annotation is _Parameter.empty or annotation is inspect.Signature.empty:
            return None
        if not isinstance(annotation, str):
            return annotation
        try:
            return eval(annotation, self.globals, dict(self.locals))
        except Exception as error:
            if self.explicit_params is not None:
                return None
            raise PromptValidationError(
                f"tool {self.tool_name!r}: cannot read the handler's annotation "
                f"{annotation!r} ({error}); define the types it names at module level or "
                "pass params_type=... to Tool"
            ) from error


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
    """`schema` with its local references (`#/$defs/...`, and draft-07's
    `#/definitions/...`) inlined: Gemini's schema dialect takes none, and a nested
    model's schema is clearer to a model written out where it is used.

    A recursive type cannot be written out: its references stay, and so do the
    definitions they need (where they were, at the root), so the schema stays whole. A
    reference to nothing (a schema from elsewhere, an MCP server's) is left as it is.
    """
    tables: dict[str, Mapping[str, Any]] = {
        prefix: schema.get(key, {})
        for prefix, key in (("#/$defs/", "$defs"), ("#/definitions/", "definitions"))
        if isinstance(schema.get(key), Mapping)
    }
    kept: set[tuple[str, str]] = set()

    def target(ref: object) -> tuple[str, str] | None:
        for prefix, table in tables.items():
            if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in table:
                return prefix, ref[len(prefix) :]
        return None

    def resolve(node: Any, seen: frozenset[tuple[str, str]]) -> Any:
        if isinstance(node, Mapping):
            mapping = typing.cast(Mapping[str, Any], node)
            found = target(mapping.get("$ref"))
            if found is not None:
                if found in seen:  # recursive type: leave the reference as is
                    kept.add(found)
                    return dict(mapping)
                merged = {k: v for k, v in mapping.items() if k != "$ref"}
                return {**resolve(tables[found[0]][found[1]], seen | {found}), **merged}
            return {k: resolve(v, seen) for k, v in mapping.items()}
        if isinstance(node, list):
            return [resolve(item, seen) for item in typing.cast(list[Any], node)]
        return node

    root = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    inlined: dict[str, Any] = resolve(root, frozenset())
    kept_defs: dict[tuple[str, str], Any] = {}
    while kept - kept_defs.keys():
        found = min(kept - kept_defs.keys())
        kept_defs[found] = resolve(tables[found[0]][found[1]], frozenset({found}))
    for (prefix, key), definition in sorted(kept_defs.items()):
        inlined.setdefault(prefix.strip("#/"), {})[key] = definition
    return inlined
