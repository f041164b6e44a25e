"""Tracing overhead: the same tool loop with an OpenTelemetry SDK tracer and without.

The traced adapter has a `TracerProvider` whose spans go through a `SimpleSpanProcessor`
to an in-memory exporter (so every span is really built, ended and exported, on the
caller's thread); the plain one has none. Both run against the same emulator process,
interleaved. A loop is one evaluation: a tool call, then a final answer (four spans).

Wall time is the target's measure, but on a shared machine it swings by more than the
few percent in question; this process's CPU time does not (the emulator runs in another
process). So each repetition also gives the loop's wall time plus the CPU tracing added:
the same ratio, estimated from the steadier clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from wink import Session, create_adapter

from . import raw
from ._common import Row, emulator, interleave, row

PROVIDER = "openai"


def otel_overhead(loops: int, repeat: int, warmup: int) -> list[Row]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runner = asyncio.Runner()
    rows: list[Row] = []
    with emulator("--shape", "loop") as server:
        options: dict[str, Any] = {
            "base_url": server.base_url(PROVIDER),
            "api_key": "test-key-0123456789",
        }
        model = f"{PROVIDER}:{raw.MODELS[PROVIDER]}"
        plain = create_adapter(model, **options)
        traced = create_adapter(model, tracer_provider=provider, **options)

        def sync_run(adapter: Any) -> Any:
            def run(count: int) -> None:
                exporter.clear()  # the exporter keeps every span: bounded memory
                for _ in range(count):
                    adapter.evaluate(raw.PROMPT, session=Session())

            return run

        def async_run(adapter: Any) -> Any:
            async def batch(count: int) -> None:
                for _ in range(count):
                    await adapter.evaluate_async(raw.PROMPT, session=Session())

            def run(count: int) -> None:
                exporter.clear()
                runner.run(batch(count))

            return run

        variants = {
            "sync plain": sync_run(plain),
            "sync traced": sync_run(traced),
            "async plain": async_run(plain),
            "async traced": async_run(traced),
        }
        for run in variants.values():
            run(warmup)
        exporter.clear()
        traced.evaluate(raw.PROMPT, session=Session())
        spans = len(exporter.get_finished_spans())
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        timings = interleave(
            repeat, {name: _measure(run, loops, cpu[name]) for name, run in variants.items()}
        )
        for mode in ("sync", "async"):
            base, traced_wall = timings[f"{mode} plain"], timings[f"{mode} traced"]
            added = [
                t - p for t, p in zip(cpu[f"{mode} traced"], cpu[f"{mode} plain"], strict=True)
            ]
            rows.append(row("otel", f"{PROVIDER} {mode}: no tracer", "ms/loop", base))
            rows.append(
                row(
                    "otel",
                    f"{PROVIDER} {mode}: SDK tracer, in-memory exporter",
                    "ms/loop",
                    traced_wall,
                    against=base,
                    baseline=f"the same loop with no tracer, {mode}",
                    target=1.03,
                    note=f"{spans} spans per loop; wall clock",
                )
            )
            rows.append(
                row(
                    "otel",
                    f"{PROVIDER} {mode}: no tracer + the CPU tracing added",
                    "ms/loop",
                    [wall + extra for wall, extra in zip(base, added, strict=True)],
                    against=base,
                    baseline=f"the same loop with no tracer, {mode}",
                    target=1.03,
                    note="CPU clock: steady under load",
                )
            )
            rows.append(
                row(
                    "otel",
                    f"{PROVIDER} {mode}: CPU tracing added",
                    "µs/loop",
                    [extra * 1000 for extra in added],
                )
            )
        plain.close()
        traced.close()
        runner.run(plain.aclose())
        runner.run(traced.aclose())
    runner.close()
    provider.shutdown()
    return rows


def _measure(run: Callable[[int], None], loops: int, cpu: list[float]) -> Callable[[], float]:
    """Milliseconds of wall time per loop; this process's CPU milliseconds go to `cpu`."""

    def measure() -> float:
        started, started_cpu = time.perf_counter(), time.process_time()
        run(loops)
        cpu.append((time.process_time() - started_cpu) * 1000 / loops)
        return (time.perf_counter() - started) * 1000 / loops

    return measure
