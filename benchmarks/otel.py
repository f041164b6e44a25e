"""Tracing overhead: the same tool loop with an OpenTelemetry SDK tracer and without.

The traced adapter has a `TracerProvider` whose spans go through a `SimpleSpanProcessor`
to an in-memory exporter (so every span is really built, ended and exported, on the
caller's thread); the plain one has none. Both run against the same emulator process,
interleaved. A loop is one evaluation: a tool call, then a final answer (four spans).

Two SDK setups: a `SimpleSpanProcessor` exports each span as it ends, on the caller's
thread (the worst case); a `BatchSpanProcessor` queues it for a background thread (what
production setups use). Wall time is the target's measure, but on a shared machine it
swings by more than the few percent in question; so tracing's own cost is also measured
where nothing else is: the same loop with an in-process model, this process's CPU time,
fastest batches (the figure to hold against the loop's wall time).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from wink import Session, create_adapter

from . import raw
from ._common import Row, emulator, interleave, row

PROVIDER = "openai"


def otel_overhead(loops: int, repeat: int, warmup: int) -> list[Row]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporters: list[InMemorySpanExporter] = []

    def provider_with(processor: Any) -> TracerProvider:
        exporter = InMemorySpanExporter()
        exporters.append(exporter)
        provider = TracerProvider()
        provider.add_span_processor(processor(exporter))
        return provider

    simple = provider_with(SimpleSpanProcessor)  # exports each span as it ends
    batched = provider_with(BatchSpanProcessor)  # queues it for a background thread
    runner = asyncio.Runner()
    rows: list[Row] = []
    with emulator("--shape", "loop") as server:
        options: dict[str, Any] = {
            "base_url": server.base_url(PROVIDER),
            "api_key": "test-key-0123456789",
        }
        model = f"{PROVIDER}:{raw.MODELS[PROVIDER]}"
        adapters = {
            "plain": create_adapter(model, **options),
            "simple": create_adapter(model, tracer_provider=simple, **options),
            "batch": create_adapter(model, tracer_provider=batched, **options),
        }

        def sync_run(adapter: Any) -> Callable[[int], None]:
            def run(count: int) -> None:
                for _ in range(count):
                    adapter.evaluate(raw.PROMPT, session=Session())

            return run

        def async_run(adapter: Any) -> Callable[[int], None]:
            async def batch(count: int) -> None:
                for _ in range(count):
                    await adapter.evaluate_async(raw.PROMPT, session=Session())

            return lambda count: runner.run(batch(count))

        variants: dict[str, Callable[[int], None]] = {}
        for name, adapter in adapters.items():
            variants[f"sync {name}"] = sync_run(adapter)
            variants[f"async {name}"] = async_run(adapter)
        for run in variants.values():
            run(warmup)
        exporters[0].clear()
        adapters["simple"].evaluate(raw.PROMPT, session=Session())
        spans = len(exporters[0].get_finished_spans())
        measures = {name: _measure(run, loops, exporters) for name, run in variants.items()}
        timings = interleave(repeat, measures)
        labels = {
            "simple": "SDK tracer, SimpleSpanProcessor, in-memory exporter",
            "batch": "SDK tracer, BatchSpanProcessor, in-memory exporter",
        }
        for mode in ("sync", "async"):
            base = timings[f"{mode} plain"]
            rows.append(row("otel", f"{PROVIDER} {mode}: no tracer", "ms/loop", base))
            for name, label in labels.items():
                rows.append(
                    row(
                        "otel",
                        f"{PROVIDER} {mode}: {label}",
                        "ms/loop",
                        timings[f"{mode} {name}"],
                        against=base,
                        baseline=f"the same loop with no tracer, {mode}",
                        target=1.03,
                        note=f"{spans} spans per loop",
                    )
                )
        for adapter in adapters.values():
            adapter.close()
            runner.run(adapter.aclose())
    runner.close()
    for name, provider in (("simple", simple), ("batch", batched)):
        plain_cpu, traced_cpu = _scripted_cpu(provider, exporters, repeat, min(50, loops))
        rows.append(
            row(
                "otel",
                f"tracing's own cost per loop, {name} processor (scripted model, no HTTP)",
                "µs/loop",
                [traced - plain for traced, plain in zip(traced_cpu, plain_cpu, strict=True)],
                note="this process's CPU time, the fastest of 10 batches per figure",
            )
        )
    simple.shutdown()
    batched.shutdown()
    return rows


def _scripted_cpu(
    provider: Any, exporters: list[Any], repeat: int, batch: int
) -> tuple[list[float], list[float]]:
    """CPU µs per evaluation of the same loop with an in-process model, without and with
    the tracer: no HTTP and no other process, so the difference is tracing's own work.
    Each figure is the fastest of 10 batches (a shared machine only ever adds)."""
    from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn

    def steps() -> list[Any]:
        turns: list[Any] = []
        for index in range(batch):
            turns += [tool_turn(call("lookup", {"key": "a"}, id=f"c{index}")), final("aa")]
        return turns

    def one(**options: Any) -> float:
        adapter = ScriptedAdapter(steps(), **options)
        for exporter in exporters:
            exporter.clear()
        gc.collect()
        started = time.process_time()
        for _ in range(batch):
            adapter.evaluate(raw.PROMPT, session=Session())
        return (time.process_time() - started) * 1e6 / batch

    plain: list[float] = []
    traced: list[float] = []
    tries = 10 if batch >= 20 else 1  # 1: a smoke run
    for _ in range(repeat):
        plain.append(min(one() for _ in range(tries)))
        traced.append(min(one(tracer_provider=provider) for _ in range(tries)))
    return plain, traced


def _measure(run: Callable[[int], None], loops: int, exporters: list[Any]) -> Callable[[], float]:
    """Milliseconds of wall time per loop."""

    def measure() -> float:
        for exporter in exporters:  # they keep every span: memory stays bounded
            exporter.clear()
        gc.collect()  # no variant pays for the garbage of the one before it
        started = time.perf_counter()
        run(loops)
        return (time.perf_counter() - started) * 1000 / loops

    return measure
