"""The public surface: one sorted `__all__`, every name present, no SDK imported."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

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


@pytest.mark.slow
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


def _stub_names() -> dict[str, str]:
    """name -> defining module (relative), as `__init__.pyi` lists them."""
    import ast
    from pathlib import Path

    stub = Path(wink.__file__).with_suffix(".pyi")
    names: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name} is re-exported as itself"
                names[alias.name] = "." * node.level + node.module
    return names


def test_the_lazy_map_is_the_stub_s_list() -> None:
    """`__init__.py`'s literal map and `__init__.pyi` name the same names, each from the
    same module, and `__all__` is exactly those names."""
    lazy: dict[str, str] = wink._DYNAMIC_IMPORTS  # pyright: ignore[reportPrivateUsage]
    assert lazy == _stub_names()
    assert sorted(wink.__all__) == sorted(lazy)


@pytest.mark.slow
def test_import_wink_from_a_zip(tmp_path: Path) -> None:
    """A zipapp or a PyInstaller bundle imports wink from an archive, where no file of the
    package can be read as a file: every public name still resolves."""
    import zipfile

    source = Path(wink.__file__).parent
    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in source.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                bundle.write(path, Path("wink") / path.relative_to(source))
    code = (
        "import sys\n"
        "sys.path.insert(0, sys.argv[1])  # before the installed wink; its dependencies stay\n"
        "import wink\n"
        "assert wink.__file__.startswith(sys.argv[1]), wink.__file__\n"
        "missing = [name for name in wink.__all__ if getattr(wink, name, None) is None]\n"
        "print(len(wink.__all__), missing, wink.Tool.__module__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(archive)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(wink.__all__)), "[]", "wink.core.prompting.tools"]
