"""Import time, each import in a fresh interpreter with warm bytecode caches."""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
from pathlib import Path

import wink

from ._common import PYTHON, Row, interleave, row

PAIRS = (
    ("wink", "openai", 0.25),
    ("wink.providers.openai.chat", "openai", 1.05),
    ("wink.providers.anthropic.messages", "anthropic", 1.05),
    ("wink.providers.google.generate", "google.genai", 1.05),
)
FULL = (
    "from wink import MarkdownSection, Prompt, Session, Tool, ToolResult, create_adapter; "
    "import wink.providers.openai.chat"
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
    """Each pair measured back to back, alternating which goes first; the ratio is of the
    fastest runs (an import does fixed work, and this machine's noise only adds to it)."""
    compileall.compile_dir(str(Path(wink.__file__).parent), quiet=1)
    statements = {f"import {name}" for pair in PAIRS for name in pair[:2]} | {FULL}
    for statement in statements:  # warm the OS file cache and every __pycache__
        _import_ms(statement)
    rows: list[Row] = []
    for ours, theirs, target in (*PAIRS, (FULL, "openai", None)):
        mine = ours if ours == FULL else f"import {ours}"
        timings = interleave(
            repeat,
            {
                "theirs": lambda theirs=theirs: _import_ms(f"import {theirs}"),
                "ours": lambda mine=mine: _import_ms(mine),
            },
        )
        ours_ms, theirs_ms = timings["ours"], timings["theirs"]
        rows.append(row("import", f"import {theirs}", "ms", theirs_ms))
        label = (
            "a whole agent's imports (wink's names + its OpenAI adapter)" if ours == FULL else mine
        )
        rows.append(
            Row(
                "import",
                label,
                "ms",
                statistics.median(ours_ms),
                min(ours_ms),
                max(ours_ms),
                ratio=min(ours_ms) / min(theirs_ms),
                baseline=f"import {theirs}, fastest runs of {repeat} each",
                target=target,
                samples=ours_ms,
            )
        )
    return rows
