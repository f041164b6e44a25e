"""Resources: what tools need (clients, file systems, ...), bound on a prompt, built lazily.

A `ResourceRegistry` maps a protocol (any class) to a `ResourceBinding`: a factory and
the scope that owns what it builds. Nothing is built until asked for: the loop opens one
evaluation `ResourceScope` per run and the executor one `tool_call` child per tool call,
and `scope.get(Protocol)` builds the instance on first use, once per owning scope.
Closing a scope closes what it built, newest first.

Resolution is thread-safe (tool handlers may run in threads) and re-entrant on one
thread, so a factory can ask its own scope for its dependencies; a dependency chain that
comes back to itself is reported as a `CircularDependencyError` instead of recursing.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVar, cast, get_args

from ..foundation.checks import kind_of
from ..foundation.errors import (
    CircularDependencyError,
    DuplicateBindingError,
    ProviderError,
    ResourceError,
    UnboundResourceError,
    WinkError,
)

__all__ = [
    "ResourceBinding",
    "ResourceFactory",
    "ResourceRegistry",
    "ResourceScope",
    "ScopeKind",
]

T = TypeVar("T")

ScopeKind = Literal["evaluation", "tool_call"]
ResourceFactory = Callable[[], Any] | Callable[["ResourceScope"], Any]

logger = logging.getLogger("wink.resources")

_SCOPE_KINDS: tuple[str, ...] = get_args(ScopeKind)
_MISSING = object()


def _name(protocol: type[Any]) -> str:
    return getattr(protocol, "__name__", repr(protocol))


def _takes_scope(factory: Callable[..., Any]) -> bool:
    """Whether to call `factory(scope)` rather than `factory()`.

    Only a *required* positional parameter receives the scope, so a class whose
    `__init__` has optional arguments can be its own factory.
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature take no scope
        return False
    required = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(required) > 1:
        raise ResourceError(
            f"resource factory {factory!r} must take no argument or one (the ResourceScope); "
            f"it requires {len(required)}"
        )
    return len(required) == 1


@dataclass(frozen=True, slots=True)
class ResourceBinding:
    """How to build one resource: a factory, and the scope that owns (and closes) it.

    `scope="evaluation"` builds once per evaluation, shared by every tool call;
    `scope="tool_call"` builds a fresh instance for each tool call. The factory takes no
    argument, or one: the `ResourceScope` to `.get()` its own dependencies from.
    """

    factory: Callable[..., Any]
    scope: ScopeKind = "evaluation"
    takes_scope: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise ResourceError(f"resource factory {self.factory!r} is not callable")
        if self.scope not in _SCOPE_KINDS:
            raise ResourceError(
                f"resource scope {self.scope!r} is not one of {', '.join(_SCOPE_KINDS)}"
            )
        object.__setattr__(self, "takes_scope", _takes_scope(self.factory))


class ResourceRegistry(Mapping[type[Any], ResourceBinding]):
    """An immutable mapping protocol -> `ResourceBinding`; `merge` returns a new registry.

    Values may be given as bare factories (bound at evaluation scope) or as bindings.
    """

    __slots__ = ("_bindings",)

    def __init__(
        self, bindings: Mapping[type[Any], ResourceBinding | ResourceFactory] | None = None
    ) -> None:
        if bindings is not None and not isinstance(cast(object, bindings), Mapping):
            raise ResourceError(
                "resources are a mapping {Protocol: factory or ResourceBinding}, "
                f"got {kind_of(bindings)}"
            )
        normalized: dict[type[Any], ResourceBinding] = {}
        for protocol, value in (bindings or {}).items():
            normalized[_check_protocol(protocol)] = _to_binding(protocol, value)
        self._bindings = normalized

    @classmethod
    def of(
        cls, bindings: Mapping[type[Any], ResourceBinding | ResourceFactory]
    ) -> ResourceRegistry:
        """A registry from `{Protocol: factory_or_binding}`."""
        return cls(bindings)

    def merge(
        self, other: ResourceRegistry | Mapping[type[Any], ResourceBinding | ResourceFactory]
    ) -> ResourceRegistry:
        """Both registries' bindings; a protocol bound in both is a `DuplicateBindingError`."""
        incoming = other if isinstance(other, ResourceRegistry) else ResourceRegistry(other)
        for protocol in incoming:
            if protocol in self._bindings:
                raise DuplicateBindingError(
                    f"resource {_name(protocol)} is already bound", protocol=protocol
                )
        merged = ResourceRegistry()
        merged._bindings = {**self._bindings, **incoming._bindings}
        return merged

    def open_scope(self, kind: ScopeKind = "evaluation") -> ResourceScope:
        """A new root scope over these bindings; close it (or use `with`) when done."""
        return ResourceScope(self, kind)

    def __getitem__(self, protocol: type[Any]) -> ResourceBinding:
        return self._bindings[protocol]

    def __iter__(self) -> Iterator[type[Any]]:
        return iter(self._bindings)

    def __len__(self) -> int:
        return len(self._bindings)

    def __hash__(self) -> int:
        return hash(frozenset(self._bindings.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{_name(p)}: {b.scope}" for p, b in self._bindings.items())
        return f"ResourceRegistry({{{inner}}})"


def _check_protocol(protocol: object) -> type[Any]:
    if not isinstance(protocol, type):
        raise ResourceError(f"resources are bound by class; {protocol!r} is not a class")
    return protocol


def _to_binding(protocol: type[Any], value: object) -> ResourceBinding:
    if isinstance(value, ResourceBinding):
        return value
    if not callable(value):
        raise ResourceError(
            f"resource {_name(protocol)} must be bound to a factory or a ResourceBinding, "
            f"got {value!r}",
            protocol=protocol,
        )
    return ResourceBinding(cast(Callable[..., Any], value))


class _Resolution(threading.local):
    """Per-thread stack of protocols being built, shared by a whole scope tree."""

    def __init__(self) -> None:
        self.building: list[type[Any]] = []


class ResourceScope:
    """Where resources live: built on first `get`, shared within the scope, closed with it.

    A root scope comes from `ResourceRegistry.open_scope()`; `child("tool_call")` opens a
    scope for one tool call. An evaluation-scoped binding is owned by the nearest
    evaluation scope (or the root), so children share it; a tool_call-scoped binding is
    owned by the nearest tool_call scope and asking for it outside one is a
    `ResourceError` (an evaluation-wide resource must not capture a per-call one).
    """

    def __init__(
        self,
        registry: ResourceRegistry,
        kind: ScopeKind = "evaluation",
        *,
        parent: ResourceScope | None = None,
    ) -> None:
        if kind not in _SCOPE_KINDS:
            raise ResourceError(f"scope kind {kind!r} is not one of {', '.join(_SCOPE_KINDS)}")
        self.registry = registry
        self.kind: ScopeKind = kind
        self.parent = parent
        self._resolution = parent._resolution if parent is not None else _Resolution()
        self._lock = threading.RLock()
        self._instances: dict[type[Any], Any] = {}
        self._created: list[tuple[type[Any], Any]] = []
        self._closed = False

    @classmethod
    def empty(cls) -> ResourceScope:
        """A scope with nothing bound, for prompts without resources."""
        return cls(ResourceRegistry())

    @property
    def closed(self) -> bool:
        return self._closed

    def child(self, kind: ScopeKind = "tool_call") -> ResourceScope:
        """A nested scope (by default for one tool call) that sees this scope's resources."""
        return ResourceScope(self.registry, kind, parent=self)

    def get(self, protocol: type[T]) -> T:
        """The instance bound to `protocol`, built on first use in its owning scope."""
        binding = self.registry.get(protocol)
        if binding is None:
            raise UnboundResourceError(
                f"no resource is bound for {_name(protocol)}", protocol=protocol
            )
        owner = self._owner(protocol, binding)
        return cast(T, owner._resolve(protocol, binding))

    def _owner(self, protocol: type[Any], binding: ResourceBinding) -> ResourceScope:
        scope: ResourceScope | None = self
        root = self
        while scope is not None:
            if scope.kind == binding.scope:
                return scope
            root = scope
            scope = scope.parent
        if binding.scope == "evaluation":
            return root
        raise ResourceError(
            f"resource {_name(protocol)} is bound per tool call; it can only be reached "
            "from a tool call's scope",
            protocol=protocol,
        )

    def _resolve(self, protocol: type[Any], binding: ResourceBinding) -> Any:
        building = self._resolution.building
        if protocol in building:
            cycle = [*building[building.index(protocol) :], protocol]
            raise CircularDependencyError(
                "circular resource dependency: " + " -> ".join(_name(p) for p in cycle),
                cycle=cycle,
            )
        with self._lock:
            if self._closed:
                raise ResourceError(
                    f"cannot get {_name(protocol)}: the {self.kind} scope is closed",
                    protocol=protocol,
                )
            instance = self._instances.get(protocol, _MISSING)
            if instance is not _MISSING:
                return instance
            building.append(protocol)
            try:
                instance = self._build(protocol, binding)
            finally:
                building.pop()
            self._instances[protocol] = instance
            self._created.append((protocol, instance))
            return instance

    def _build(self, protocol: type[Any], binding: ResourceBinding) -> Any:
        try:
            return binding.factory(self) if binding.takes_scope else binding.factory()
        except WinkError:
            raise  # a nested resolution failure already says what went wrong
        except Exception as error:
            raise ProviderError(
                f"the factory for {_name(protocol)} raised {type(error).__name__}: {error}",
                protocol=protocol,
            ) from error

    def close(self) -> None:
        """Close what this scope built (`.close()` where present), newest first.

        Errors from `close()` are logged, not raised, so every resource gets its turn.
        Closing twice does nothing; `get` on a closed scope raises `ResourceError`.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            created, self._created = self._created, []
            self._instances.clear()
        for protocol, instance in reversed(created):
            close = getattr(instance, "close", None)
            if not callable(close):
                continue
            try:
                close()
            except Exception:
                logger.exception("closing resource %s failed", _name(protocol))

    def __enter__(self) -> ResourceScope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._instances)} built"
        return f"ResourceScope(kind={self.kind!r}, {state})"
