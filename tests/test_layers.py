"""The layers of `src/wink` and what may import what (docs/architecture.md): each module's
imports, read from its source (runtime, lazy and type-only imports alike), must point down
or sideways, never up; nothing in the core imports the package's face; no underscore name
is imported from another module."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Each layer, and the layers it may import (itself always). Longest prefix wins.
LAYERS: dict[str, frozenset[str]] = {
    "wink.core.foundation": frozenset(),
    "wink.core.prompting": frozenset({"wink.core.foundation"}),
    "wink.core.throttling": frozenset({"wink.core.foundation"}),
    "wink.core.telemetry": frozenset({"wink.core.foundation"}),
    "wink.core.transport": frozenset(
        {"wink.core.foundation", "wink.core.throttling", "wink.core.telemetry"}
    ),
    "wink.core.agent": frozenset(
        {
            "wink.core.foundation",
            "wink.core.prompting",
            "wink.core.throttling",
            "wink.core.telemetry",
        }
    ),
    "wink.providers": frozenset(
        {"wink.core.foundation", "wink.core.throttling", "wink.core.transport"}
    ),
    "wink.adapters": frozenset(
        {
            "wink.core.foundation",
            "wink.core.prompting",
            "wink.core.throttling",
            "wink.core.telemetry",
            "wink.core.transport",
            "wink.core.agent",
            "wink.providers",
        }
    ),
}
FACE = "wink"  # the package itself, its namespaces, the CLI, the demo, the emulator

# Face modules that may not import the adapters: the MCP servers and the emulator serve
# every adapter's tests and a loop of their own, never the other way round ...
NO_ADAPTERS = ("wink.mcp", "wink.testing")
# ... but for these, each justified in docs/architecture.md's table.
ALLOWED_FACE_IMPORTS = frozenset({("wink.testing.scripted", "wink.adapters.base")})
SOURCES = sorted(p for p in (SRC / "wink").rglob("*.py"))


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package(path: Path, root: Path = SRC) -> str:
    module = _module_name(path, root)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _layer(module: str) -> str:
    matches = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    return max(matches, key=len) if matches else FACE


def _from_target(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _is_module(name: str, root: Path) -> bool:
    folder = root / Path(*name.split("."))
    return folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file()


_MODULE_STRING = re.compile(r"wink(\.\w+)+|\.\w+(\.\w+)*")


def _string_target(node: ast.expr, module: str, package: str, root: Path) -> str | None:
    """The wink module a string names by its dotted path, if it is one of `root` (a span
    attribute `"wink.rounds"` is not): a literal
    ("wink.providers.openai", or ".stream", relative to the package), or an f-string on
    `__name__` (`f"{__name__}.stream"`, as `LazyStreamFormat` is given)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        pieces: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                pieces.append(value.value)
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
                names = {"__name__": module, "__package__": package}
                if value.value.id not in names:
                    return None
                pieces.append(names[value.value.id])
            else:
                return None
        text = "".join(pieces)
    else:
        return None
    if not _MODULE_STRING.fullmatch(text):
        return None
    if text.startswith("."):
        text = package + text
    return text if text.startswith("wink.") and _is_module(text, root) else None


def _imports(path: Path, root: Path = SRC) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every import in `path`: the import statements,
    and the strings that name a wink module (what `importlib.import_module`,
    `LazyStreamFormat` or a registry entry are given)."""
    return _imports_in(path, root, path.read_text(encoding="utf-8"))


@functools.cache  # several checks walk every source file: each is parsed once per text
def _imports_in(path: Path, root: Path, text: str) -> list[tuple[int, str, list[str]]]:
    module, package = _module_name(path, root), _package(path, root)
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, _from_target(node, package), [a.name for a in node.names]))
        elif isinstance(node, ast.Constant | ast.JoinedStr):
            named = _string_target(node, module, package, root)
            if named is not None and named != module:
                found.append((node.lineno, named, []))
    return found


def _import_time_imports(path: Path, root: Path = SRC) -> set[str]:
    """The wink modules importing `path` imports (its top-level statements: not in a
    function, not under `if TYPE_CHECKING:`); `from pkg import mod` is `pkg.mod`."""
    module, package = _module_name(path, root), _package(path, root)
    targets: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            for alias in node.names:
                name = f"{target}.{alias.name}"
                targets.add(name if _is_module(name, root) else target)
    return {target for target in targets if target.startswith("wink.") and target != module}


# The wire formats' folders. A host's folder (azure, deepseek...) is made of the wire it
# serves, so it may import that wire's folder; a wire never imports another folder.
WIRE_FOLDERS = frozenset(
    {"wink.providers.openai", "wink.providers.anthropic", "wink.providers.google"}
)
SHARED_PROVIDER_MODULES = frozenset({"base", "host", "stainless"})  # providers/<module>.py


def _provider_folder(module: str) -> str | None:
    """The provider folder of `module` (`wink.providers.openai`); None for the modules all
    providers share (`wink.providers.base`, `.host`) and anything outside `wink.providers`."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["wink", "providers"]:
        return None
    if parts[2] in SHARED_PROVIDER_MODULES:
        return None
    return ".".join(parts[:3])


def _folder_may_import(mine: str, theirs: str) -> bool:
    """A host's folder may import the wire format it serves; nothing else crosses folders."""
    return mine == theirs or (mine not in WIRE_FOLDERS and theirs in WIRE_FOLDERS)


def _face_violation(module: str, target: str) -> str | None:
    in_banned = any(module == face or module.startswith(face + ".") for face in NO_ADAPTERS)
    adapters = _layer(target) == "wink.adapters"
    if in_banned and adapters and (module, target) not in ALLOWED_FACE_IMPORTS:
        return f"{module} may not import the adapters ({target})"
    return None


def _violations(sources: list[Path] = SOURCES, root: Path = SRC) -> list[str]:
    problems: list[str] = []
    for path in sources:
        module = _module_name(path, root)
        layer = _layer(module)
        for line, target, _ in _imports(path, root):
            if target != "wink" and not target.startswith("wink."):
                continue
            where = f"{path.relative_to(root)}:{line}"
            if layer == FACE:
                problem = _face_violation(module, target)
                if problem is not None:
                    problems.append(f"{where}: {problem}")
                continue
            if target == "wink" or _layer(target) == FACE:
                problems.append(f"{where}: {module} imports the package's face ({target})")
            elif _layer(target) not in LAYERS[layer] | {layer}:
                problems.append(f"{where}: {layer} may not import {_layer(target)} ({target})")
            mine, theirs = _provider_folder(module), _provider_folder(target)
            if mine is not None and theirs is not None and not _folder_may_import(mine, theirs):
                problems.append(f"{where}: provider {mine} imports provider {theirs}")
    return problems


def _cycles(sources: list[Path] = SOURCES, root: Path = SRC) -> list[list[str]]:
    """The import cycles inside one layer, at import time, each as its sorted modules
    (Tarjan's strongly connected components)."""
    graph = {_module_name(path, root): _import_time_imports(path, root) for path in sources}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in graph or _layer(target) != _layer(node):
                continue
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return cycles


def test_every_import_points_down() -> None:
    assert _violations() == []


def test_no_layer_has_an_import_cycle() -> None:
    assert _cycles() == []


def test_the_allowed_face_imports_are_in_the_architecture_table() -> None:
    table = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for module, target in ALLOWED_FACE_IMPORTS:
        assert f"| `{module}` | `{target}` |" in table


def test_no_underscore_name_crosses_a_module_boundary() -> None:
    crossing: list[str] = []
    for path in SOURCES:
        for line, target, names in _imports(path):
            if not target.startswith("wink"):
                continue
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    crossing.append(f"{path.relative_to(SRC)}:{line}: {name} from {target}")
    assert crossing == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("wink.core.foundation.errors", "wink.core.foundation"),
        ("wink.core.agent.loop", "wink.core.agent"),
        ("wink.providers.anthropic", "wink.providers"),
        ("wink.testing.emulator", FACE),
        ("wink", FACE),
    ],
)
def test_the_layer_table_reads_modules_as_meant(module: str, layer: str) -> None:
    assert _layer(module) == layer


def test_the_checker_finds_an_upward_import_and_the_face(tmp_path: Path) -> None:
    """The rule is not vacuous: a core module importing up, or the face, is found."""
    module = tmp_path / "wink" / "core" / "foundation" / "bad.py"
    module.parent.mkdir(parents=True)
    module.write_text("from ..agent.loop import run_evaluation\nfrom ... import Tool\n")
    found = _violations([module], tmp_path)
    assert len(found) == 2
    assert "may not import wink.core.agent" in found[0]
    assert "imports the package's face" in found[1]


def _tree(tmp_path: Path, files: dict[str, str]) -> list[Path]:
    """A synthetic `wink` under `tmp_path`: each file (its path in the package) with its
    source; the packages on the way get an empty `__init__.py`."""
    written: list[Path] = []
    for name, source in files.items():
        path = tmp_path / "wink" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in [path.parent, *path.parent.parents]:
            if folder == tmp_path:
                break
            (folder / "__init__.py").touch()
        path.write_text(source, encoding="utf-8")
        written.append(path)
    return written


def test_the_checker_finds_an_import_made_with_a_string(tmp_path: Path) -> None:
    """`importlib.import_module("wink....")`, a module path handed to a lazy loader, and
    `f"{__name__}.sub"` count as imports of the module they name."""
    sources = _tree(
        tmp_path,
        {
            "core/agent/loop.py": "",
            "core/foundation/bad.py": (
                "import importlib\nimportlib.import_module('wink.core.agent.loop')\n"
            ),
            "core/transport/lazy.py": "LazyStreamFormat('wink.core.agent.loop', 'Loop')\n",
            "core/foundation/sub.py": "",
            "core/foundation/fine.py": (
                "import importlib\nimportlib.import_module(f'{__package__}.sub')\n"
                "ROUNDS = 'wink.rounds'  # a span attribute, no module\n"
            ),
        },
    )
    found = _violations(sources, tmp_path)
    assert found == [
        "wink/core/foundation/bad.py:2: wink.core.foundation may not import wink.core.agent "
        "(wink.core.agent.loop)",
        "wink/core/transport/lazy.py:1: wink.core.transport may not import wink.core.agent "
        "(wink.core.agent.loop)",
    ]
    lines = [(line, target) for line, target, _ in _imports(sources[-1], tmp_path)]
    assert (2, "wink.core.foundation.sub") in lines


def test_the_checker_finds_a_provider_importing_another(tmp_path: Path) -> None:
    sources = _tree(
        tmp_path,
        {
            "providers/base.py": "",
            "providers/anthropic/messages.py": "",
            "providers/anthropic/stream.py": "",
            "providers/openai/chat.py": (
                "from ..anthropic.messages import build_request\nfrom ..base import Provider\n"
            ),
            "providers/openai/__init__.py": (
                "LazyStreamFormat('wink.providers.anthropic.stream', 'AnthropicStream')\n"
            ),
        },
    )
    assert _violations(sources, tmp_path) == [
        "wink/providers/openai/chat.py:1: provider wink.providers.openai imports provider "
        "wink.providers.anthropic",
        "wink/providers/openai/__init__.py:1: provider wink.providers.openai imports provider "
        "wink.providers.anthropic",
    ]


def test_the_checker_finds_mcp_or_testing_importing_the_adapters(tmp_path: Path) -> None:
    sources = _tree(
        tmp_path,
        {
            "adapters/base.py": "",
            "adapters/registry.py": "",
            "mcp/servers.py": "from ..adapters.base import ProviderAdapter\n",
            "testing/emulator.py": "import wink.adapters.registry\n",
            "testing/scripted.py": "from ..adapters.base import ProviderAdapter\n",  # allowed
            "cli.py": "from .adapters.registry import create_adapter\n",  # the face may
        },
    )
    assert _violations(sources, tmp_path) == [
        "wink/mcp/servers.py:1: wink.mcp.servers may not import the adapters (wink.adapters.base)",
        "wink/testing/emulator.py:1: wink.testing.emulator may not import the adapters "
        "(wink.adapters.registry)",
    ]


def test_the_checker_finds_a_cycle_inside_a_layer(tmp_path: Path) -> None:
    """An import-time cycle is found; an import made in a function, or for the type
    checker, is not part of one (it runs once both modules are loaded)."""
    sources = _tree(
        tmp_path,
        {
            "core/agent/a.py": "from .b import B\n",
            "core/agent/b.py": "from . import c\n",
            "core/agent/c.py": "from .a import A\n",
            "core/agent/d.py": "from .e import E\n",
            "core/agent/e.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n"
                "def later():\n    from .d import D\n"
            ),
        },
    )
    assert _cycles(sources, tmp_path) == [
        ["wink.core.agent.a", "wink.core.agent.b", "wink.core.agent.c"]
    ]


def test_a_host_folder_may_import_its_wire_but_a_wire_may_not_import_a_host(
    tmp_path: Path,
) -> None:
    sources = _tree(
        tmp_path,
        {
            "providers/host.py": "",
            "providers/openai/chat.py": "from ..host import Host\nfrom ..acme import Acme\n",
            "providers/acme/__init__.py": "from ..openai.chat import OpenAIChat\n",
        },
    )
    assert _violations(sources, tmp_path) == [
        "wink/providers/openai/chat.py:2: provider wink.providers.openai imports provider "
        "wink.providers.acme",
    ]
