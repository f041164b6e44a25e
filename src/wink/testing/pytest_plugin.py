"""pytest fixtures for the provider emulator (registered as the `wink` pytest11 plugin).

Importing this module is cheap: the emulator is imported when a fixture is first used.
An emulator that failed to answer a request (an internal error: a bug in it or in the
script callable) fails the test during which it happened, at its teardown, however the
emulator was made, so an emulator bug never passes for a provider fault.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .emulator import ProviderEmulator

__all__ = ["provider_emulator", "provider_emulator_factory"]


@pytest.fixture
def provider_emulator_factory() -> Iterator[Callable[..., ProviderEmulator]]:
    """Start emulators with any `ProviderEmulator` arguments; all are closed after the test
    (and the test fails if one of them had an internal error)."""
    from .emulator import ProviderEmulator
    from .internal import EmulatorInternalError

    started: list[ProviderEmulator] = []

    def start(*args: Any, **kwargs: Any) -> ProviderEmulator:
        emulator = ProviderEmulator(*args, **kwargs).start()
        started.append(emulator)
        return emulator

    yield start
    failures: list[str] = []
    for emulator in started:
        try:
            emulator.close()
        except EmulatorInternalError as error:
            failures.append(str(error))
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


@pytest.fixture
def provider_emulator(
    provider_emulator_factory: Callable[..., ProviderEmulator],
) -> ProviderEmulator:
    """A started emulator with an empty script: `enqueue()` the turns the test needs."""
    return provider_emulator_factory()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the test's own teardown: any internal error still unreported, of any
    emulator in the process, is this test's error."""
    internal = sys.modules.get("wink.testing.internal")
    if internal is None:  # no emulator was ever made: nothing to look at
        return
    errors = internal.LOG.take()
    if errors:
        pytest.fail(str(internal.EmulatorInternalError(errors)), pytrace=False)
