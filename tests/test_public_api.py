"""The public surface: one sorted `__all__`, every name present, no SDK imported."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import wink


def test_all_is_sorted_and_complete() -> None:
    assert list(wink.__all__) == sorted(wink.__all__)
    for name in wink.__all__:
        assert getattr(wink, name) is not None


def test_public_names_match_module_namespace() -> None:
    helpers = {"annotations", "TYPE_CHECKING", "Any"}
    eager = {
        name
        for name in dir(wink)
        if not name.startswith("_")
        and name not in helpers
        and not isinstance(getattr(wink, name), types.ModuleType)
    }
    lazy = {"AnthropicAdapter", "GoogleAdapter", "OpenAIAdapter", "OpenAIResponsesAdapter"}
    assert eager == set(wink.__all__) - lazy


def test_import_wink_loads_no_provider_sdk() -> None:
    code = (
        "import sys, wink, wink.testing\n"
        "sdks = ('openai', 'anthropic', 'google.genai', 'httpx2', 'rich')\n"
        "bad = [m for m in sdks if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        wink.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
