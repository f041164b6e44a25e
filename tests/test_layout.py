"""`tests/` mirrors `src/wink/`: each test folder is named after the package it tests
(`tests/core/agent/` for `wink.core.agent`, `tests/providers/anthropic/` for
`wink.providers.anthropic`), so a module's tests are found where the module is. A few
folders hold no tests of their own: shared helpers, recorded traffic and docs examples.

No test folder has an `__init__.py`: with pytest's importlib mode (pyproject.toml) a folder
is never put on `sys.path`, and without `__init__.py` none can become a package that
shadows a real one of the same name (`tests/mcp/` beside the `mcp` SDK)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Folders that are not the tests of a package: what they hold, and why they are here.
NOT_MIRRORS = frozenset(
    {
        "helpers",  # code shared by tests of every folder (`tests.helpers`)
        "conformance",  # recorded real provider traffic, read as data
        "docs_examples",  # files the docs include, run as tests of the docs
    }
)


def _folders(tests: Path) -> list[Path]:
    return sorted(
        path
        for path in tests.rglob("*")
        if path.is_dir()
        and path.name != "__pycache__"
        and path.relative_to(tests).parts[0] not in NOT_MIRRORS
    )


def layout_problems(tests: Path, package: Path) -> list[str]:
    """Each test folder that names no package under `package`, or that is a package."""
    problems: list[str] = []
    for folder in _folders(tests):
        relative = folder.relative_to(tests)
        if not (package / relative / "__init__.py").is_file():
            problems.append(f"tests/{relative.as_posix()} is not a package of src/wink")
        if (folder / "__init__.py").exists():
            problems.append(f"tests/{relative.as_posix()} has an __init__.py")
    return problems


def test_every_test_folder_mirrors_a_package_of_wink() -> None:
    assert layout_problems(ROOT / "tests", ROOT / "src" / "wink") == []


def test_every_subpackage_has_a_folder() -> None:
    """The other way round, for the folders wink splits into: each core subpackage, and
    each provider with modules of its own, has its test folder. (A host whose package is
    only its `__init__`, a URL and a key, is tested with the others at the providers level:
    tests/providers/test_compatible.py.)"""
    package = ROOT / "src" / "wink"
    expected = {
        init.parent.relative_to(package).as_posix()
        for parent in ("core", "providers")
        for init in (package / parent).glob("*/__init__.py")
        if parent == "core" or len(list(init.parent.glob("*.py"))) > 1
    }
    present = {folder.relative_to(ROOT / "tests").as_posix() for folder in _folders(ROOT / "tests")}
    assert expected - present == set()


@pytest.mark.parametrize(
    ("made", "problem"),
    [
        ("core/agents", "tests/core/agents is not a package of src/wink"),
        ("fleet", "tests/fleet is not a package of src/wink"),
        ("providers/anthropic/__init__.py", "tests/providers/anthropic has an __init__.py"),
    ],
)
def test_the_mirror_test_fails_on_a_stray_folder(tmp_path: Path, made: str, problem: str) -> None:
    """The check itself, on a copy of the layout with one mutation."""
    package = tmp_path / "src" / "wink"
    for name in ("core/agent", "providers/anthropic"):
        (package / name).mkdir(parents=True)
        for folder in (package / name, (package / name).parent):
            (folder / "__init__.py").write_text("")
    tests = tmp_path / "tests"
    for name in ("core/agent", "providers/anthropic", "helpers"):
        (tests / name).mkdir(parents=True)
    assert layout_problems(tests, package) == []
    if made.endswith(".py"):
        (tests / made).write_text("")
    else:
        (tests / made).mkdir(parents=True)
    assert layout_problems(tests, package) == [problem]
