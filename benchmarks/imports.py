"""Import time, each import in a fresh interpreter with warm bytecode caches."""

from __future__ import annotations

import compileall
import os
import subprocess
from pathlib import Path

import wink

from ._common import PYTHON, Row, interleave, row

PAIRS = (
    ("wink", "openai", 0.25),
    ("wink.adapters.openai", "openai", 1.05),
    ("wink.adapters.anthropic", "anthropic", 1.05),
    ("wink.adapters.google", "google.genai", 1.05),
)
FULL = (
    "from wink import MarkdownSection, Prompt, Session, Tool, ToolResult, create_adapter; "
    "import wink.adapters.openai"
)


def _env() -> dict[str, str]:
    # a bytecode-less run would compile wink from source every time while the SDKs load
    # the .pyc files pip wrote: measure both as an installed package runs
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _import_ms(statement: str) -> float:
    code = (
        "import time; started = time.perf_counter(); "
        f"{statement}; print((time.perf_counter() - started) * 1000)"
    )
    done = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, env=_env(), check=True
    )
    return float(done.stdout.strip())


def import_time(repeat: int) -> list[Row]:
    compileall.compile_dir(str(Path(wink.__file__).parent), quiet=1)
    statements = {f"import {name}" for pair in PAIRS for name in pair[:2]} | {FULL}
    for statement in statements:  # warm the OS file cache and every __pycache__
        _import_ms(statement)
    timings = interleave(repeat, {s: (lambda s=s: _import_ms(s)) for s in sorted(statements)})
    rows: list[Row] = []
    for ours, theirs, target in PAIRS:
        base = timings[f"import {theirs}"]
        rows.append(row("import", f"import {theirs}", "ms", base))
        rows.append(
            row(
                "import",
                f"import {ours}",
                "ms",
                timings[f"import {ours}"],
                against=base,
                baseline=f"import {theirs}",
                target=target,
            )
        )
    rows.append(
        row(
            "import",
            "a whole agent's imports (wink names + the OpenAI adapter)",
            "ms",
            timings[FULL],
            against=timings["import openai"],
            baseline="import openai",
            note="informational: what a program using wink with OpenAI pays",
        )
    )
    return rows
