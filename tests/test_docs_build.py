"""The docs build as `nox -s docs` runs it (`zensical build --strict`): it passes on the
docs as they are, quietly, and fails on what a reader would trip over.

Each build runs on a copy of what the site is made of (mkdocs.yml, docs/, the source the
API reference reads, the test files the pages include), so a page can be broken here
without touching the repository.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

ROOT = Path(__file__).resolve().parents[1]
SITE_SOURCES = ("docs", "src", "tests/docs_examples")


def _site_copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for folder in SITE_SOURCES:
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def _build(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zensical", "build", "--strict", "--clean"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_docs_build_strictly_without_a_banner(tmp_path: Path) -> None:
    done = _build(_site_copy(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "end of life" not in output
    assert "Warning" not in output
    built = tmp_path / "site" / "reference" / "wink" / "index.html"
    assert "ToolResult" in built.read_text(encoding="utf-8")  # the API reference rendered


def test_the_build_fails_on_a_broken_link_or_anchor(tmp_path: Path) -> None:
    """(An API entry that names nothing fails the build too; tests/test_docs.py checks the
    entries against `__all__` without building.)"""
    project = _site_copy(tmp_path)
    with (project / "docs" / "fallback.md").open("a", encoding="utf-8") as page:
        page.write(
            "\nSee [the limits](no-such-page.md) and [the tree](errors.md#no-such-heading).\n"
        )
    done = _build(project)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "page does not exist" in output
    assert "anchor does not exist" in output
