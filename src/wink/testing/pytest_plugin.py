"""pytest fixtures for the provider emulator (registered as the `wink` pytest11 plugin).

Importing this module is cheap: the emulator is imported when a fixture is first used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .emulator import ProviderEmulator

__all__ = ["provider_emulator", "provider_emulator_factory"]


@pytest.fixture
def provider_emulator_factory() -> Iterator[Callable[..., ProviderEmulator]]:
    """Start emulators with any `ProviderEmulator` arguments; all are closed after the test."""
    from .emulator import ProviderEmulator

    started: list[ProviderEmulator] = []

    def start(*args: Any, **kwargs: Any) -> ProviderEmulator:
        emulator = ProviderEmulator(*args, **kwargs).start()
        started.append(emulator)
        return emulator

    yield start
    for emulator in started:
        emulator.close()


@pytest.fixture
def provider_emulator(
    provider_emulator_factory: Callable[..., ProviderEmulator],
) -> ProviderEmulator:
    """A started emulator with an empty script: `enqueue()` the turns the test needs."""
    return provider_emulator_factory()
