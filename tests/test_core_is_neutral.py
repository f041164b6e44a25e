"""Core knows HTTP, not providers (issue 30): the facts one provider's API defines live in
its folder (`src/wink/providers/<name>/`), read by core through the wire's seams (its
error reader's `StatusFacts`, its `RateLimitHeaders`, its `HttpCalls`). Each is checked
where it now lives by a behaviour test (tests/adapters/test_answer_errors.py,
tests/core/throttling/test_throttle.py); this one keeps them from creeping back into
core's code (its prose may still name them, to say where they went)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "src" / "wink" / "core"

# A provider's fact as core's code would hold it, and where it lives now.
STATUSES = {
    529: "Anthropic's overloaded: read as the 5xx it is",
    402: "out of credit: the Anthropic and OpenAI wires' error readers say so",
}
TEXTS = {"retry-after-ms": "RateLimitHeaders.retry_after_ms of the OpenAI and Anthropic wires"}
NAMES = {"StainlessCalls": "wink.providers.stainless"}


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    for node in ast.walk(tree):  # a string right under an assignment documents it
        if isinstance(node, ast.Module | ast.ClassDef):
            for first, second in zip(node.body, node.body[1:], strict=False):
                if isinstance(first, ast.Assign | ast.AnnAssign) and isinstance(second, ast.Expr):
                    found.add(id(second.value))
    return found


def _facts(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in prose:
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool) and value in STATUSES:
                found.append(f"{value} ({STATUSES[value]})")
            if isinstance(value, str):
                found += [f"{text!r} ({where})" for text, where in TEXTS.items() if text in value]
        name = getattr(node, "name", None) or getattr(node, "id", None)
        if name in NAMES:
            found.append(f"{name} ({NAMES[name]})")
    return found


def test_no_provider_fact_is_in_cores_code() -> None:
    found = {
        str(path.relative_to(CORE)): facts
        for path in sorted(CORE.rglob("*.py"))
        if (facts := _facts(path))
    }
    assert not found, found


def test_the_check_finds_each_fact(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""529, 402, retry-after-ms, StainlessCalls: prose is fine."""\n'
        "OVERLOADED = {500, 529}\n"
        "PAYMENT = 402\n"
        'NAMES = ("retry-after", "retry-after-ms")\n'
        "class StainlessCalls: ...\n",
        encoding="utf-8",
    )
    assert len(_facts(module)) == 4
