"""Every ```python block in docs/ runs, page by page, in one module per page."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_examples_run(page: Path) -> None:
    blocks = _FENCE.findall(page.read_text(encoding="utf-8"))
    name = "docs_" + re.sub(r"\W", "_", str(page.relative_to(DOCS)))
    module = types.ModuleType(name)  # dataclasses look their module up in sys.modules
    sys.modules[name] = module
    try:
        for index, block in enumerate(blocks):
            code = compile(block, f"{page.name}[block {index}]", "exec", dont_inherit=True)
            exec(code, module.__dict__)
    finally:
        del sys.modules[name]


def test_every_page_is_in_the_nav() -> None:
    nav = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in nav, f"{page} is missing from mkdocs.yml nav"
