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
    helpers = {"annotations", "TYPE_CHECKING", "Any", "importlib"}
    public = {
        name
        for name in dir(wink)
        if not name.startswith("_")
        and name not in helpers
        and not isinstance(getattr(wink, name), types.ModuleType)
    }
    assert public == set(wink.__all__)


def test_import_wink_loads_only_the_error_tree() -> None:
    # every other name is resolved on first access; the error tree is always there
    code = (
        "import sys, wink\n"
        "heavy = ('pydantic', 'tenacity', 'httpx', 'asyncio', 'wink.core.agent.loop')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
        "from wink import Tool, WinkError\n"
        "print(Tool.__module__, WinkError.__module__, 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "",
        "wink.core.prompting.tools wink.core.foundation.errors True",
    ]


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
