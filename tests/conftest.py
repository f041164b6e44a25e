"""Fixtures every test folder may use (the `wink` pytest plugin adds `provider_emulator`)."""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Callable

import pytest

from wink.testing import ProviderEmulator, Turn

# Bedrock needs a region for its URL and its signatures; a test that is about the region
# unsets it. Set here, not per test: subprocesses the tests start inherit it too.
os.environ.setdefault("AWS_REGION", "us-east-1")

# Many tests start Python children (`python -m wink`, a fleet's workers, MCP servers), and
# each imports wink afresh. Where PYTHONDONTWRITEBYTECODE keeps bytecode out of the tree,
# each child would compile wink from source again (about half a second of CPU): they keep
# it in a cache under the temp folder instead, shared by every run, never in the tree.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX",
        os.path.join(tempfile.gettempdir(), f"wink-pycache-{getpass.getuser()}"),
    )


@pytest.fixture
def emulator(provider_emulator_factory: Callable[..., ProviderEmulator]) -> ProviderEmulator:
    """A started emulator with an empty script: a request no turn was queued for is a 400."""
    return provider_emulator_factory()


@pytest.fixture
def ok_emulator(provider_emulator_factory: Callable[..., ProviderEmulator]) -> ProviderEmulator:
    """A started emulator that answers "ok" to every request its script leaves over."""
    return provider_emulator_factory(default_turn=Turn.text("ok"))
