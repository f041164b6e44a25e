"""The pytest fixtures, and that importing the plugin (every pytest run) stays cheap."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import httpx
import pytest

import wink.testing
from wink.testing import ProviderEmulator, Turn


def test_provider_emulator_fixture_is_started(provider_emulator: ProviderEmulator) -> None:
    provider_emulator.enqueue(Turn.text("hi"))
    body = {"model": "m", "messages": []}
    response = httpx.post(provider_emulator.base_url("openai") + "/chat/completions", json=body)
    assert response.json()["choices"][0]["message"]["content"] == "hi"


def test_factory_passes_arguments(
    provider_emulator_factory: Callable[..., ProviderEmulator],
) -> None:
    one = provider_emulator_factory(default_turn=Turn.text("one"))
    two = provider_emulator_factory([Turn.text("two")])
    assert one.port != two.port
    assert two.pending == 1


def test_importing_wink_testing_loads_no_provider_sdk() -> None:
    code = (
        "import sys, wink.testing, wink.testing.pytest_plugin\n"
        "sdks = ('openai', 'anthropic', 'google.genai', 'httpx2')\n"
        "print(','.join(m for m in sdks if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_importing_the_plugin_loads_no_emulator_module() -> None:
    # pytest imports the plugin in every run of an environment where wink is installed
    code = (
        "import sys, wink.testing.pytest_plugin\n"
        "loaded = [m for m in sys.modules if m.startswith('wink.testing.')]\n"
        "print(','.join(sorted(loaded)), 'wink.testing.emulator' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["wink.testing.pytest_plugin", "False"]


def test_every_public_name_resolves_on_first_access() -> None:
    assert list(wink.testing.__all__) == sorted(wink.testing.__all__)
    assert set(wink.testing.__all__) <= set(dir(wink.testing))
    for name in wink.testing.__all__:
        assert getattr(wink.testing, name) is not None
    assert callable(wink.testing.serve)  # the function, not a module of the same name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        wink.testing.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
