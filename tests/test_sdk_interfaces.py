"""wink uses only the public interfaces of the libraries it builds on.

Every module under src/wink is parsed with `ast` and these are reported:

* an import whose module path or imported name has a part starting with `_`
  (`from openai._client import ...`, `from httpx2 import _utils`), or an
  `importlib.import_module("x._y")` with a literal name;
* `x._name` (single leading underscore, not a dunder), or `getattr(x, "_name")`, unless
  `x` is `self`, `cls`, a name bound at module level in wink's own code, or a dotted
  path into a wink module (`wink.core.x._y`): a private attribute of anything else
  (a parameter, a local, an SDK object) belongs to someone else;
* a name read from, or imported from, a watched SDK module that defines `__all__` and
  does not list it there (a submodule is fine): a constant an SDK keeps out of its
  `__all__` is not part of its interface.

Own objects reached through a local (one `ResourceScope` calling another's `_resolve`)
are listed in `OWN_OBJECTS` one by one, so a new use is looked at.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Third-party packages whose `__all__` is checked (rule three). Rules one and two apply
# to every import and attribute, standard library included.
WATCHED = frozenset(
    {
        "openai",
        "anthropic",
        "google",
        "httpx",
        "httpx2",
        "tenacity",
        "pydantic",
        "pydantic_core",
        "mcp",
        "mcp_types",
    }
)

# `sys._getframe` is CPython's documented frame accessor; pydantic relies on it too.
STDLIB_ALLOWED = frozenset({"sys._getframe", "getattr(sys, '_getframe', None)"})

# A wink object's private member used by another instance of its class, through a local.
OWN_OBJECTS = frozenset(
    {
        # ResourceRegistry.merge fills the new registry from both registries' bindings
        # a RedisLimiter's store runs its script through the limiter that made it
        "wink/core/throttling/redis.py: self._limiter._run",
        "wink/core/prompting/resources.py: incoming._bindings",
        "wink/core/prompting/resources.py: merged._bindings",
        # a child ResourceScope shares its parent's resolution stack
        "wink/core/prompting/resources.py: parent._resolution",
        # the ResourceScope that owns a binding builds its instance
        "wink/core/prompting/resources.py: owner._resolve",
        # ...and entering it opens its adapters' clients
        "wink/adapters/fallback.py: adapter._prepare",
    }
)

# Offenders that are accepted. Expected to stay empty.
ALLOWED: frozenset[str] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    expression: str
    why: str

    @property
    def key(self) -> str:
        return f"{self.path}: {self.expression}"


def _root(module: str) -> str:
    return module.split(".", 1)[0]


def _load(module: str) -> ModuleType | None:
    """A watched module, to read its `__all__`; None for anything else."""
    if _root(module) not in WATCHED:
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _is_submodule(module: str, name: str) -> bool:
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def _not_exported(module: str, name: str) -> bool:
    """`name` is missing from the `__all__` of watched `module` (and is no submodule)."""
    loaded = _load(module)
    exported = getattr(loaded, "__all__", None)
    if exported is None or name in exported:
        return False
    return not _is_submodule(module, name)


class _Checker(ast.NodeVisitor):
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.findings: list[Finding] = []
        self.own: set[str] = {"self", "cls"}
        self.modules: dict[str, str] = {}  # local name -> the module it is bound to
        self._bind(tree)

    # --- what each name is bound to

    def _bind(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        self.modules[alias.asname] = alias.name
                    else:
                        self.modules[_root(alias.name)] = _root(alias.name)
            elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
                for alias in node.names:
                    if _load(node.module) is not None and _is_submodule(node.module, alias.name):
                        self.modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in _module_level(tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.own.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self.own.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").split(".")[0] == "wink"
            ):
                self.own.update(alias.asname or alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                self.own.update(
                    alias.asname or "wink" for alias in node.names if _root(alias.name) == "wink"
                )

    def _is_own(self, value: ast.expr) -> bool:
        if isinstance(value, ast.Name):
            return value.id in self.own
        # a dotted path into a wink module: wink.core.x
        while isinstance(value, ast.Attribute) and not _is_private(value.attr):
            value = value.value
        return isinstance(value, ast.Name) and self.modules.get(value.id, "").startswith("wink")

    def _owner(self, value: ast.expr) -> str:
        if isinstance(value, ast.Name) and value.id in self.modules:
            return f"the module {self.modules[value.id]}"
        return "an object that is not wink's own"

    def _report(self, node: ast.AST, why: str) -> None:
        expression = ast.unparse(node)
        if expression in STDLIB_ALLOWED:
            return
        line = getattr(node, "lineno", 0)
        self.findings.append(Finding(self.path, line, expression, why))

    # --- rule one: imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if any(_is_private(part) for part in alias.name.split(".")):
                self._report(node, f"imports the private module {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or node.module is None or _root(node.module) == "wink":
            return
        if any(_is_private(part) for part in node.module.split(".")):
            self._report(node, f"imports from the private module {node.module}")
            return
        for alias in node.names:
            if _is_private(alias.name):
                self._report(node, f"imports the private name {node.module}.{alias.name}")
            elif _not_exported(node.module, alias.name):
                self._report(node, f"{alias.name} is not in {node.module}.__all__")

    # --- rules two and three: attributes

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_private(node.attr) and not self._is_own(node.value):
            owner = self._owner(node.value)
            self._report(node, f"reads the private attribute {node.attr} of {owner}")
        elif isinstance(node.value, ast.Name) and node.value.id in self.modules:
            module = self.modules[node.value.id]
            if _not_exported(module, node.attr):
                self._report(node, f"{node.attr} is not in {module}.__all__")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        function = ast.unparse(node.func)
        literal = (
            node.args[1].value
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            else None
        )
        if function in {"getattr", "hasattr", "setattr", "delattr"} and isinstance(literal, str):
            target = node.args[0]
            if _is_private(literal) and not self._is_own(target):
                owner = self._owner(target)
                self._report(node, f"{function} of the private attribute {literal} of {owner}")
            elif isinstance(target, ast.Name) and target.id in self.modules:
                module = self.modules[target.id]
                if _not_exported(module, literal):
                    self._report(node, f"{literal} is not in {module}.__all__")
        name = node.args[0] if node.args else None
        if (
            function in {"importlib.import_module", "import_module", "__import__"}
            and isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and any(_is_private(part) for part in name.value.split("."))
        ):
            self._report(node, f"imports the private module {name.value}")
        self.generic_visit(node)


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import time, including those inside module-level try/if."""
    for node in body:
        yield node
        if isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        elif isinstance(node, ast.If):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)


def check_source(source: str, path: str = "wink/example.py") -> list[Finding]:
    tree = ast.parse(source)
    checker = _Checker(path, tree)
    checker.visit(tree)
    return checker.findings


@functools.cache  # two tests read them: src/ is walked once
def all_findings() -> tuple[Finding, ...]:
    findings: list[Finding] = []
    for file in sorted((SRC / "wink").rglob("*.py")):
        path = file.relative_to(SRC).as_posix()
        findings.extend(check_source(file.read_text(encoding="utf-8"), path))
    return tuple(findings)


def wink_findings() -> list[Finding]:
    """Every finding in src/wink but wink's own objects reaching into each other."""
    return [finding for finding in all_findings() if finding.key not in OWN_OBJECTS]


def _describe(findings: list[Finding]) -> str:
    return "\n".join(
        f"  {f.path}:{f.line}: {f.expression}  ({f.why})"
        for f in sorted(findings, key=lambda f: (f.path, f.line))
    )


def test_src_uses_only_public_sdk_interfaces() -> None:
    offenders = [f for f in wink_findings() if f.key not in ALLOWED]
    assert not offenders, "private interfaces used in src/wink:\n" + _describe(offenders)


def test_every_own_object_entry_is_still_used() -> None:
    stale = OWN_OBJECTS - {finding.key for finding in all_findings()}
    assert not stale, f"OWN_OBJECTS entries no longer in src/wink: {sorted(stale)}"


# --- the checker itself


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from openai._client import OpenAI", "from openai._client import OpenAI"),
        ("import httpx2._models", "import httpx2._models"),
        ("from tenacity import _utils", "from tenacity import _utils"),
        ("from google.genai import _common", "from google.genai import _common"),
        ("from pydantic._internal import _fields", "from pydantic._internal import _fields"),
        ("def f(client):\n    return client._api_client", "client._api_client"),
        ("def f(c):\n    return c.aio._api_client", "c.aio._api_client"),
        ("def f(c):\n    return getattr(c, '_api_client')", "getattr(c, '_api_client')"),
        ("api = getattr(c, 'aio', c)._api_client", "getattr(c, 'aio', c)._api_client"),
        ("from google.genai._common import BaseModel", "from google.genai._common import Base"),
        ("import openai\nopenai._base_client", "openai._base_client"),
        ("class A:\n    def f(self):\n        return self._c._x", "self._c._x"),
        (
            "from anthropic.resources.messages import messages as m\n"
            "getattr(m, 'DEPRECATED_MODELS', {})",
            "getattr(m, 'DEPRECATED_MODELS', {})",
        ),
        ("import anthropic\nanthropic.NotAnExportedName", "anthropic.NotAnExportedName"),
        ("from openai import NotAnExportedName", "from openai import NotAnExportedName"),
        ("import importlib\nimportlib.import_module('openai._x')", "importlib.import_module"),
        ("import sys\nsys._current_frames()", "sys._current_frames"),
    ],
)
def test_the_checker_flags_private_uses(source: str, flagged: str) -> None:
    findings = check_source(source)
    assert any(f.expression.startswith(flagged) for f in findings), findings


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    def f(self):\n        return self._x",
        "class A:\n    @classmethod\n    def f(cls):\n        return cls._x",
        "import wink.core.foundation.errors\nwink.core.errors._private",
        "from ..core import retry\nretry._helper",
        "def _helper(): ...\n_helper._cache",
        "_cache = {}\n_cache._x",
        "import sys\nsys._getframe(1)",
        "class A:\n    def f(self):\n        return self.__class__.__name__",
        "import openai\nopenai.APIStatusError",
        "from anthropic.resources.messages import messages",
        "from google.genai import errors\nerrors.APIError",
        "def f(c):\n    return getattr(c, 'aio', c)",
    ],
)
def test_the_checker_leaves_own_and_public_names_alone(source: str) -> None:
    assert check_source(source) == []
