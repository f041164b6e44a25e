"""The agent's code stays in readable steps: no function of `wink.core.agent` over 80 lines."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import wink.core.agent

MAX_LINES = 80
AGENT = Path(next(iter(wink.core.agent.__path__)))


def long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function or method in `source` longer than
    `limit` lines, nested ones included, decorators and docstring counted."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(item.lineno for item in child.decorator_list)])
                lines = (child.end_lineno or child.lineno) - first + 1
                if lines > limit:
                    found.append((name.rstrip("."), lines))
            visit(child, name)

    visit(ast.parse(source), "")
    return found


def test_no_function_of_core_agent_is_over_80_lines() -> None:
    modules = sorted(AGENT.glob("*.py"))
    assert any(module.name == "loop.py" for module in modules)
    too_long = [
        f"{module.name}: {name} ({lines} lines)"
        for module in modules
        for name, lines in long_functions(module.read_text(encoding="utf-8"), MAX_LINES)
    ]
    assert too_long == []


def test_the_check_sees_functions_methods_and_nested_ones() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(MAX_LINES))  # with its def: 81 lines
    deeper = textwrap.indent(body, "    ")
    source = (
        f"def top():\n{body}\n\n"
        f"class Steps:\n    async def step(self):\n{deeper}\n\n"
        f"def outer():\n    def inner():\n{deeper}\n"
        "def short():\n    return 1\n"
    )
    found = dict(long_functions(source, MAX_LINES))
    assert found == {"top": 81, "Steps.step": 81, "outer": 82, "outer.inner": 81}
