"""The pytest fixtures, and that importing wink.testing stays SDK-free."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import httpx

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
