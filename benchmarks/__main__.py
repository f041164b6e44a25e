"""`python -m benchmarks [--quick] [--only NAME ...] [--repeat N]`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ._common import Row, machine
from .bedrock import bedrock
from .burst import burst
from .fleet import fleet
from .imports import import_time
from .load import concurrency, stray_429s, throttling
from .loops import loop_overhead, tool_heavy
from .otel import otel_overhead
from .short_path import short_path
from .streaming import streaming
from .structured_stream import structured_stream

RESULTS = Path(__file__).parent / "results"


def scenarios(quick: bool, repeat: int | None) -> dict[str, Callable[[], list[Row]]]:
    def reps(full: int, short: int) -> int:
        return repeat if repeat is not None else (short if quick else full)

    return {
        "import": lambda: import_time(reps(11, 2)),
        "loops": lambda: loop_overhead(
            loops=20 if quick else 200, repeat=reps(5, 1), warmup=5 if quick else 30
        ),
        "concurrency": lambda: concurrency(
            loops=100 if quick else 1000, concurrency=50 if quick else 200, repeat=reps(3, 1)
        ),
        "throttling": lambda: throttling(
            requests=60 if quick else 300,
            concurrency=20 if quick else 50,
            rate=100.0,
            repeat=reps(3, 1),
        ),
        "stray-429s": lambda: stray_429s(
            loops=40 if quick else 200,
            concurrency=20 if quick else 100,
            share=0.05,
            retry_after=0.05,
            repeat=reps(3, 1),
        ),
        "burst": lambda: burst(streams=50 if quick else 200, repeat=reps(5, 1)),
        "tool-heavy": lambda: tool_heavy(reps(5, 1)),
        "otel": lambda: otel_overhead(
            loops=20 if quick else 200, repeat=reps(9, 1), warmup=5 if quick else 30
        ),
        "fleet": lambda: fleet(
            requests=100 if quick else 300,
            concurrency=20 if quick else 50,
            rate=100.0,
            processes=4,
            loops=50 if quick else 300,
            repeat=reps(3, 1),
        ),
        "short-path": lambda: short_path(
            loops=20 if quick else 200, repeat=reps(5, 1), warmup=5 if quick else 30
        ),
        "bedrock": lambda: bedrock(
            loops=20 if quick else 200,
            repeat=reps(5, 1),
            warmup=5 if quick else 30,
            events=200 if quick else 2_000,
        ),
        "structured-stream": lambda: structured_stream(repeat=reps(5, 1), batch=1 if quick else 3),
        "streaming": lambda: streaming(
            repeat=reps(7, 1),
            batch=5 if quick else 40,
            long_batch=1 if quick else 5,
            big_events=2_000 if quick else 20_000,
        ),
    }


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def table(rows: list[Row]) -> str:
    lines = [
        "| scenario | variant | median | min | max | unit | ratio | baseline | target | |",
        "|---|---|---:|---:|---:|---|---:|---|---:|---|",
    ]
    for item in rows:
        ratio = f"{item.ratio:.3f}x" if item.ratio is not None else ""
        target = f"<= {item.target:g}x" if item.target is not None else ""
        verdict = f"**{item.verdict}**" if item.verdict else ""
        note = f" ({item.note})" if item.note else ""
        lines.append(
            f"| {item.scenario} | {item.variant}{note} | {_number(item.median)} | "
            f"{_number(item.low)} | {_number(item.high)} | {item.unit} | {ratio} | "
            f"{item.baseline} | {target} | {verdict} |"
        )
    return "\n".join(lines)


def report(rows: list[Row], quick: bool, seconds: float) -> str:
    info = machine()
    kind = "quick run (small sizes; not the published figures)" if quick else "full run"
    return (
        "# wink benchmarks\n\n"
        f"{kind}, {info['date']}, {seconds:.0f} s. Machine: {info['cpu']}; Python "
        f"{info['python']} on {info['platform']}. Packages: {info['versions']}.\n\n"
        "Ratios are medians of per-repetition ratios, each pair measured back to back "
        "(interleaved); min and max are over repetitions.\n\n" + table(rows) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    parser.add_argument("--only", nargs="*", help="scenarios to run (default: all)")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions per figure")
    args = parser.parse_args(argv)
    chosen = scenarios(args.quick, args.repeat)
    names = args.only or list(chosen)
    unknown = sorted(set(names) - set(chosen))
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {sorted(chosen)}")
    started = time.perf_counter()
    rows: list[Row] = []
    for name in names:
        print(f"-- {name}", file=sys.stderr, flush=True)
        rows.extend(chosen[name]())
    text = report(rows, args.quick, time.perf_counter() - started)
    RESULTS.mkdir(exist_ok=True)
    stem = "quick" if args.quick else ("latest" if not args.only else "partial")
    (RESULTS / f"{stem}.md").write_text(text, encoding="utf-8")
    (RESULTS / f"{stem}.json").write_text(
        json.dumps([asdict(item) for item in rows], indent=1, default=list), encoding="utf-8"
    )
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
