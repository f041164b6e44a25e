"""Resources: bindings, registries, scopes, lazy resolution, cycles, closing, threads."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, strategies as st

from wink.core.foundation.errors import (
    CircularDependencyError,
    DuplicateBindingError,
    ProviderError,
    ResourceError,
    UnboundResourceError,
    WinkError,
)
from wink.core.prompting.resources import ResourceBinding, ResourceRegistry, ResourceScope


class Clock:
    pass


class Database:
    pass


class Cache:
    pass


@dataclass
class Closable:
    """Records its own closing in a shared journal."""

    name: str
    journal: list[str]
    fail: bool = False
    closed: bool = field(default=False, init=False)

    def close(self) -> None:
        self.closed = True
        self.journal.append(self.name)
        if self.fail:
            raise OSError(f"{self.name} would not close")


def counting(factory: Callable[[], Any]) -> tuple[Callable[[], Any], list[Any]]:
    """A factory that remembers every instance it built."""
    built: list[Any] = []

    def make() -> Any:
        instance = factory()
        built.append(instance)
        return instance

    return make, built


# --- bindings


def test_binding_defaults_to_evaluation_scope() -> None:
    binding = ResourceBinding(Clock)
    assert binding.scope == "evaluation"
    assert binding.takes_scope is False


def test_binding_detects_a_factory_that_takes_the_scope() -> None:
    def make(scope: ResourceScope) -> Clock:
        return Clock()

    assert ResourceBinding(make).takes_scope is True
    assert ResourceBinding(lambda: Clock()).takes_scope is False


def test_optional_parameters_do_not_receive_the_scope() -> None:
    class Client:
        def __init__(self, timeout: float = 5.0) -> None:
            self.timeout = timeout

    scope = ResourceRegistry.of({Client: Client}).open_scope()
    assert scope.get(Client).timeout == 5.0


def test_builtins_without_signature_are_called_without_arguments() -> None:
    scope = ResourceRegistry.of({dict: dict}).open_scope()
    assert scope.get(dict) == {}


@pytest.mark.parametrize(
    ("factory", "scope", "fragment"),
    [
        (42, "evaluation", "not callable"),
        (Clock, "request", "not one of"),
        (lambda a, b: None, "evaluation", "requires 2"),
    ],
)
def test_bad_bindings_are_resource_errors(factory: Any, scope: Any, fragment: str) -> None:
    with pytest.raises(ResourceError, match=fragment) as caught:
        ResourceBinding(factory, scope)
    assert type(caught.value) is ResourceError


# --- registries


def test_registry_accepts_factories_and_bindings() -> None:
    registry = ResourceRegistry.of({Clock: Clock, Database: ResourceBinding(Database, "tool_call")})
    assert registry[Clock] == ResourceBinding(Clock)
    assert registry[Database].scope == "tool_call"
    assert set(registry) == {Clock, Database}
    assert len(registry) == 2
    assert Clock in registry


def test_registry_rejects_a_key_that_is_not_a_class() -> None:
    with pytest.raises(ResourceError, match="not a class") as caught:
        ResourceRegistry.of({"Clock": Clock})  # type: ignore[dict-item]
    assert not isinstance(caught.value, DuplicateBindingError)


def test_registry_rejects_a_value_that_is_not_a_factory() -> None:
    with pytest.raises(ResourceError, match="Clock must be bound to a factory") as caught:
        ResourceRegistry.of({Clock: "now"})  # type: ignore[dict-item]
    assert type(caught.value) is ResourceError
    assert caught.value.protocol is Clock


def test_registry_is_immutable_and_hashable() -> None:
    registry = ResourceRegistry.of({Clock: Clock})
    with pytest.raises(TypeError):
        registry[Database] = ResourceBinding(Database)  # type: ignore[index]
    assert hash(registry) == hash(ResourceRegistry.of({Clock: Clock}))
    assert registry == ResourceRegistry.of({Clock: Clock})
    assert "Clock: evaluation" in repr(registry)


def test_merge_returns_a_new_registry() -> None:
    first = ResourceRegistry.of({Clock: Clock})
    merged = first.merge(ResourceRegistry.of({Database: Database}))
    also = merged.merge({Cache: Cache})
    assert set(first) == {Clock}
    assert set(merged) == {Clock, Database}
    assert set(also) == {Clock, Database, Cache}


def test_merge_rejects_a_protocol_bound_twice() -> None:
    first = ResourceRegistry.of({Clock: Clock, Database: Database})
    with pytest.raises(DuplicateBindingError, match="Database is already bound") as caught:
        first.merge({Database: Database})
    assert caught.value.protocol is Database
    assert isinstance(caught.value, ResourceError)


# --- resolving


def test_resources_are_built_lazily_and_once_per_evaluation() -> None:
    make, built = counting(Clock)
    scope = ResourceRegistry.of({Clock: make}).open_scope()
    assert built == []
    first = scope.get(Clock)
    assert scope.get(Clock) is first
    assert built == [first]


def test_each_evaluation_scope_builds_its_own() -> None:
    registry = ResourceRegistry.of({Clock: Clock})
    assert registry.open_scope().get(Clock) is not registry.open_scope().get(Clock)


def test_evaluation_resources_are_shared_with_tool_call_children() -> None:
    make, built = counting(Clock)
    scope = ResourceRegistry.of({Clock: make}).open_scope()
    with scope.child("tool_call") as one, scope.child() as two:
        assert one.get(Clock) is two.get(Clock) is scope.get(Clock)
    assert len(built) == 1


def test_tool_call_resources_are_built_once_per_child() -> None:
    make, built = counting(Database)
    scope = ResourceRegistry.of({Database: ResourceBinding(make, "tool_call")}).open_scope()
    one, two = scope.child(), scope.child()
    assert one.get(Database) is one.get(Database)
    assert one.get(Database) is not two.get(Database)
    assert len(built) == 2


def test_tool_call_resources_are_not_reachable_from_the_evaluation_scope() -> None:
    scope = ResourceRegistry.of({Database: ResourceBinding(Database, "tool_call")}).open_scope()
    with pytest.raises(ResourceError, match="per tool call") as caught:
        scope.get(Database)
    assert caught.value.protocol is Database
    assert not isinstance(caught.value, UnboundResourceError)


def test_an_evaluation_resource_cannot_capture_a_tool_call_one() -> None:
    def make_cache(scope: ResourceScope) -> Cache:
        scope.get(Database)
        return Cache()

    registry = ResourceRegistry.of(
        {Cache: make_cache, Database: ResourceBinding(Database, "tool_call")}
    )
    with pytest.raises(ResourceError, match="per tool call"):
        registry.open_scope().child().get(Cache)


def test_a_root_tool_call_scope_owns_every_binding() -> None:
    registry = ResourceRegistry.of({Clock: Clock, Database: ResourceBinding(Database, "tool_call")})
    scope = registry.open_scope("tool_call")
    assert isinstance(scope.get(Clock), Clock)
    assert isinstance(scope.get(Database), Database)


def test_a_factory_gets_its_dependencies_from_the_scope() -> None:
    @dataclass
    class Repository:
        database: Database
        clock: Clock

    registry = ResourceRegistry.of(
        {
            Clock: Clock,
            Database: Database,
            Repository: ResourceBinding(
                lambda scope: Repository(scope.get(Database), scope.get(Clock)), "tool_call"
            ),
        }
    )
    scope = registry.open_scope()
    repository = scope.child().get(Repository)
    assert repository.database is scope.get(Database)
    assert repository.clock is scope.get(Clock)


def test_unbound_protocol() -> None:
    with pytest.raises(UnboundResourceError, match="no resource is bound for Clock") as caught:
        ResourceScope.empty().get(Clock)
    assert caught.value.protocol is Clock


def test_an_unbound_dependency_is_reported_as_itself() -> None:
    scope = ResourceRegistry.of({Cache: lambda scope: scope.get(Database)}).open_scope()
    with pytest.raises(UnboundResourceError) as caught:
        scope.get(Cache)
    assert caught.value.protocol is Database


def test_a_cycle_is_reported_with_its_path() -> None:
    registry = ResourceRegistry.of(
        {
            Clock: lambda scope: scope.get(Database),
            Database: lambda scope: scope.get(Cache),
            Cache: lambda scope: scope.get(Clock),
        }
    )
    with pytest.raises(CircularDependencyError) as caught:
        registry.open_scope().get(Clock)
    assert caught.value.cycle == (Clock, Database, Cache, Clock)
    assert "Clock -> Database -> Cache -> Clock" in str(caught.value)
    assert caught.value.protocol is Clock


def test_a_cycle_starting_mid_chain_lists_only_the_loop() -> None:
    registry = ResourceRegistry.of(
        {
            Clock: lambda scope: scope.get(Database),
            Database: lambda scope: scope.get(Cache),
            Cache: lambda scope: scope.get(Database),
        }
    )
    with pytest.raises(CircularDependencyError) as caught:
        registry.open_scope().get(Clock)
    assert caught.value.cycle == (Database, Cache, Database)
    assert "Database -> Cache -> Database" in str(caught.value)


def test_a_factory_asking_for_itself_is_a_cycle() -> None:
    scope = ResourceRegistry.of({Clock: lambda scope: scope.get(Clock)}).open_scope()
    with pytest.raises(CircularDependencyError) as caught:
        scope.get(Clock)
    assert caught.value.cycle == (Clock, Clock)


def test_a_failed_resolution_leaves_the_scope_usable() -> None:
    scope = ResourceRegistry.of(
        {Clock: lambda scope: scope.get(Clock), Database: Database}
    ).open_scope()
    with pytest.raises(CircularDependencyError):
        scope.get(Clock)
    assert isinstance(scope.get(Database), Database)


def test_a_raising_factory_becomes_a_provider_error() -> None:
    def broken() -> Clock:
        raise ConnectionError("no route to host")

    with pytest.raises(ProviderError, match="Clock raised ConnectionError") as caught:
        ResourceRegistry.of({Clock: broken}).open_scope().get(Clock)
    assert caught.value.protocol is Clock
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_a_provider_error_of_a_dependency_is_not_wrapped_again() -> None:
    def broken() -> Database:
        raise ConnectionError("down")

    registry = ResourceRegistry.of({Database: broken, Cache: lambda scope: scope.get(Database)})
    with pytest.raises(ProviderError) as caught:
        registry.open_scope().get(Cache)
    assert caught.value.protocol is Database
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_a_failed_factory_is_tried_again_next_time() -> None:
    attempts: list[int] = []

    def flaky() -> Clock:
        attempts.append(1)
        if len(attempts) == 1:
            raise TimeoutError("first call fails")
        return Clock()

    scope = ResourceRegistry.of({Clock: flaky}).open_scope()
    with pytest.raises(ProviderError):
        scope.get(Clock)
    assert isinstance(scope.get(Clock), Clock)


def test_a_none_instance_is_cached_too() -> None:
    calls: list[int] = []

    def nothing() -> None:
        calls.append(1)

    scope = ResourceRegistry.of({Clock: nothing}).open_scope()
    assert scope.get(Clock) is None
    assert scope.get(Clock) is None
    assert calls == [1]


# --- closing


def test_close_runs_newest_first_and_only_once() -> None:
    journal: list[str] = []
    registry = ResourceRegistry.of(
        {
            Clock: lambda: Closable("clock", journal),
            Database: lambda scope: (scope.get(Clock), Closable("database", journal))[1],
            Cache: lambda: Closable("cache", journal),
        }
    )
    with registry.open_scope() as scope:
        scope.get(Database)  # builds clock first, then database
        scope.get(Cache)
    assert journal == ["cache", "database", "clock"]
    scope.close()
    assert journal == ["cache", "database", "clock"]
    assert scope.closed


def test_close_logs_failures_and_keeps_going(caplog: pytest.LogCaptureFixture) -> None:
    journal: list[str] = []
    registry = ResourceRegistry.of(
        {
            Clock: lambda: Closable("clock", journal),
            Database: lambda: Closable("database", journal, fail=True),
        }
    )
    scope = registry.open_scope()
    scope.get(Clock)
    scope.get(Database)
    with caplog.at_level(logging.ERROR, logger="wink.resources"):
        scope.close()
    assert journal == ["database", "clock"]
    assert "closing resource Database failed" in caplog.text
    assert "would not close" in caplog.text


def test_instances_without_close_are_skipped() -> None:
    scope = ResourceRegistry.of({Clock: Clock, Cache: lambda: 3}).open_scope()
    scope.get(Clock)
    scope.get(Cache)
    scope.close()


def test_a_child_closes_only_what_it_built() -> None:
    journal: list[str] = []
    registry = ResourceRegistry.of(
        {
            Clock: lambda: Closable("clock", journal),
            Database: ResourceBinding(lambda: Closable("database", journal), "tool_call"),
        }
    )
    with registry.open_scope() as scope:
        with scope.child() as child:
            child.get(Clock)
            child.get(Database)
        assert journal == ["database"]
        assert scope.get(Clock).closed is False
    assert journal == ["database", "clock"]


def test_a_closed_scope_refuses_to_build() -> None:
    scope = ResourceRegistry.of({Clock: Clock}).open_scope()
    scope.get(Clock)
    scope.close()
    with pytest.raises(ResourceError, match="scope is closed") as caught:
        scope.get(Clock)
    assert caught.value.protocol is Clock


def test_scope_repr_says_what_it_holds() -> None:
    scope = ResourceRegistry.of({Clock: Clock}).open_scope()
    scope.get(Clock)
    assert repr(scope) == "ResourceScope(kind='evaluation', 1 built)"
    scope.close()
    assert "closed" in repr(scope)


def test_an_unknown_scope_kind_is_refused() -> None:
    with pytest.raises(ResourceError, match="not one of"):
        ResourceScope.empty().child("request")  # type: ignore[arg-type]


# --- threads


def test_concurrent_gets_build_one_instance() -> None:
    def slow() -> Clock:
        time.sleep(0.02)
        return Clock()

    make, built = counting(slow)
    scope = ResourceRegistry.of({Clock: make}).open_scope()
    with ThreadPoolExecutor(max_workers=8) as pool:
        instances = list(pool.map(lambda _: scope.child().get(Clock), range(16)))
    assert len(built) == 1
    assert all(instance is built[0] for instance in instances)


def test_concurrent_tool_calls_get_their_own_instances() -> None:
    make, built = counting(Database)
    scope = ResourceRegistry.of({Database: ResourceBinding(make, "tool_call")}).open_scope()
    children = [scope.child() for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        instances = list(pool.map(lambda child: child.get(Database), children))
    assert len({id(instance) for instance in instances}) == 8
    assert len(built) == 8


def test_a_cycle_in_one_thread_does_not_confuse_another() -> None:
    """The stack of resources being built is per thread, so parallel builds are not cycles."""
    started = threading.Event()
    release = threading.Event()

    def slow_clock() -> Clock:
        started.set()
        release.wait(timeout=5)
        return Clock()

    registry = ResourceRegistry.of(
        {Clock: slow_clock, Database: ResourceBinding(lambda scope: scope.get(Clock), "tool_call")}
    )
    scope = registry.open_scope()
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(scope.get, Clock)
        assert started.wait(timeout=5)
        second = pool.submit(lambda: scope.child().get(Database))
        release.set()
        assert first.result(timeout=5) is second.result(timeout=5)


# --- properties


@given(st.integers(min_value=1, max_value=12))
def test_a_dependency_chain_builds_each_link_once_and_closes_dependents_first(
    length: int,
) -> None:
    links = [type(f"Link{index}", (), {}) for index in range(length)]
    journal: list[str] = []

    def factory(index: int) -> Callable[[ResourceScope], Closable]:
        def make(scope: ResourceScope) -> Closable:
            if index + 1 < length:
                scope.get(links[index + 1])
            return Closable(f"link{index}", journal)

        return make

    registry = ResourceRegistry.of({link: factory(i) for i, link in enumerate(links)})
    with registry.open_scope() as scope:
        top = scope.get(links[0])
        assert scope.get(links[0]) is top
    assert journal == [f"link{index}" for index in range(length)]


@given(st.integers(min_value=1, max_value=8), st.integers(min_value=0, max_value=7))
def test_any_loop_is_reported_from_its_first_member(length: int, back_to: int) -> None:
    back_to = back_to % length
    links = [type(f"Node{index}", (), {}) for index in range(length)]

    def factory(index: int) -> Callable[[ResourceScope], object]:
        target = links[index + 1] if index + 1 < length else links[back_to]
        return lambda scope: scope.get(target)

    registry = ResourceRegistry.of({link: factory(i) for i, link in enumerate(links)})
    with pytest.raises(CircularDependencyError) as caught:
        registry.open_scope().get(links[0])
    assert caught.value.cycle == (*links[back_to:], links[back_to])
    assert isinstance(caught.value, WinkError)
