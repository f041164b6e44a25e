"""What every scenario shares: rows, statistics, the emulator process, the machine."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata

PYTHON = sys.executable


@dataclass(frozen=True)
class Row:
    """One measured figure; `ratio` is against `baseline`, `target` is the ratio's bound."""

    scenario: str
    variant: str
    unit: str
    median: float
    low: float
    high: float
    ratio: float | None = None
    baseline: str = ""
    target: float | None = None
    note: str = ""
    samples: Sequence[float] = field(default_factory=tuple)

    @property
    def verdict(self) -> str:
        if self.target is None or self.ratio is None:
            return ""
        return "met" if self.ratio <= self.target else "MISSED"


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def row(
    scenario: str,
    variant: str,
    unit: str,
    values: Sequence[float],
    *,
    against: Sequence[float] | None = None,
    baseline: str = "",
    target: float | None = None,
    note: str = "",
) -> Row:
    """A row from repeated samples; the ratio is the median of the per-repetition ratios
    (each repetition's pair was measured back to back, so they share the machine's mood)."""
    median, low, high = spread(values)
    ratio = None
    if against is not None:
        ratio = statistics.median(
            value / base for value, base in zip(values, against, strict=True) if base > 0
        )
    return Row(scenario, variant, unit, median, low, high, ratio, baseline, target, note, values)


def interleave(repeat: int, variants: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Run every variant once per repetition, in rotating order."""
    names = list(variants)
    results: dict[str, list[float]] = {name: [] for name in names}
    for index in range(repeat):
        for name in names[index % len(names) :] + names[: index % len(names)]:
            results[name].append(variants[name]())
    return results


class Emulator:
    """The emulator in a child process (see `_emulator.py`)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-m", "benchmarks._emulator", *args],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            self.process.kill()
            raise RuntimeError(f"the emulator did not start: {line!r}")
        self.port = int(line)
        self.root = f"http://127.0.0.1:{self.port}"

    def base_url(self, provider: str) -> str:
        return f"{self.root}/v1" if provider.startswith("openai") else self.root

    def stats(self) -> dict[str, object]:
        with urllib.request.urlopen(f"{self.root}/__stats", timeout=10) as answer:
            return json.loads(answer.read())

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.root}/__reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@contextmanager
def emulator(*args: str) -> Iterator[Emulator]:
    server = Emulator(*args)
    try:
        yield server
    finally:
        server.close()


def run_json(args: Sequence[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run `python args...` and read the JSON object it prints last."""
    done = subprocess.run(
        [PYTHON, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_mib() -> float:
    """This process's peak resident set, Linux's `VmHWM` (`ru_maxrss` would carry the
    parent's peak over `fork` + `exec`)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for package in ("wink", "openai", "anthropic", "google-genai", "httpx2", "pydantic"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "-"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "versions": ", ".join(f"{name} {version}" for name, version in versions.items()),
    }
