"""The layers of `src/wink` and what may import what (docs/architecture.md): each module's
imports, read from its source (runtime, lazy and type-only imports alike), must point down
or sideways, never up; nothing in the core imports the package's face; no underscore name
is imported from another module."""

from __future__ import annotations

import ast
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


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str:
    matches = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    return max(matches, key=len) if matches else FACE


def _imports(path: Path, root: Path = SRC) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every import in `path`."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target, [alias.name for alias in node.names]))
    return found


SOURCES = sorted(p for p in (SRC / "wink").rglob("*.py"))


def _violations(sources: list[Path] = SOURCES, root: Path = SRC) -> list[str]:
    problems: list[str] = []
    for path in sources:
        module = _module_name(path, root)
        layer = _layer(module)
        if layer == FACE:
            continue
        allowed = LAYERS[layer] | {layer}
        for line, target, _ in _imports(path, root):
            if target != "wink" and not target.startswith("wink."):
                continue
            where = f"{path.relative_to(root)}:{line}"
            if target == "wink" or _layer(target) == FACE:
                problems.append(f"{where}: {module} imports the package's face ({target})")
            elif _layer(target) not in allowed:
                problems.append(f"{where}: {layer} may not import {_layer(target)} ({target})")
    return problems


def test_every_import_points_down() -> None:
    assert _violations() == []


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
