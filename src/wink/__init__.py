"""wink: one `evaluate()` over OpenAI, Anthropic and Gemini, with one error contract.

Tool failures go back to the model as results; infrastructure failures raise a
`WinkError`. Every public name is imported on first access (PEP 562), so `import wink`
costs a few milliseconds and loads no SDK, and a program pays only for what it uses.

The names and their modules are listed once, in `__init__.pyi` (what type checkers
read); this module reads that list. Namespaces: `wink.errors` (every exception),
`wink.events` (what sessions record and streams yield), `wink.testing` (the emulator).
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.foundation.version import __version__ as __version__


def _public_names() -> dict[str, str]:
    """name -> defining module, read from `__init__.pyi` (`from .x import Name as Name`)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(__file__).with_suffix(".pyi").read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{__name__}.{node.module}"
    return names


_PUBLIC = _public_names()
__all__ = sorted(_PUBLIC)  # pyright: ignore[reportUnsupportedDunderAll]  (listed in the stub)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'wink' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
