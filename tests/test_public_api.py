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


def test_import_wink_loads_nothing_until_a_name_is_used() -> None:
    # every name is resolved on first access
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


def test_the_stub_lists_every_public_name_with_its_home() -> None:
    """`__init__.pyi` is the one list: each name imports from the module it names, and
    `wink.errors` / `wink.events` hold the same objects."""
    import ast
    from pathlib import Path

    import wink.errors
    import wink.events

    stub = ast.parse(Path(wink.__file__).with_suffix(".pyi").read_text(encoding="utf-8"))
    listed = {
        alias.asname or alias.name: f"wink.{node.module}"
        for node in stub.body
        if isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names
    }
    assert sorted(listed) == wink.__all__
    for name, module in listed.items():
        assert getattr(wink, name) is getattr(__import__(module, fromlist=[name]), name)
    for namespace in (wink.errors, wink.events):
        for name in namespace.__all__:
            if name in listed:
                assert getattr(namespace, name) is getattr(wink, name)
    assert "WinkError" in wink.errors.__all__
    assert "TextDelta" in wink.events.__all__


def test_a_provider_loads_its_stream_decoder_and_batch_wire_when_first_used() -> None:
    # an adapter that never streams or batches does not import their machinery
    code = (
        "import sys\n"
        "import wink.providers.openai, wink.providers.anthropic, wink.providers.google\n"
        "lazy = ('wink.core.foundation.events', 'wink.core.transport.decoding',\n"
        "        'wink.core.transport.batches', 'wink.providers.openai.chat_stream',\n"
        "        'wink.providers.anthropic.batch', 'wink.providers.google.stream')\n"
        "print(','.join(m for m in lazy if m in sys.modules))\n"
        "from wink.providers.anthropic import Anthropic\n"
        "decoder = Anthropic.stream_format.decoder('p', (), lambda body: body)\n"
        "print(type(decoder).__name__, 'wink.providers.anthropic.stream' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["", "AnthropicStreamDecoder True"]
