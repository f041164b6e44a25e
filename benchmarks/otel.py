"""Tracing overhead: the same tool loop with an OpenTelemetry SDK tracer and without.

A loop is one evaluation against the emulator: a tool call, then a final answer (four
spans: the evaluation, two requests, one tool). Two SDK setups: a `SimpleSpanProcessor`
exports each span as it ends, on the caller's thread (the worst case); a
`BatchSpanProcessor` queues it for a background thread (what production setups use).
Both go to an in-memory exporter, so every span is really built, ended and exported.

The floor, in the same run: the raw SDK's loop of `raw.py` with the same four spans made
by hand (`hand_traced.py`), what an application instrumenting its own loop pays; and the
same spans in a bare loop with nothing inside them. Wall time is the target's measure,
but on a shared machine it swings by more than the few percent in question, so this
process's CPU time is reported beside it, and tracing's own cost is also measured where
nothing else is: the loop with an in-process model, fastest batches.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from wink import Session, create_adapter

from . import hand_traced, raw
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
    hand_tracer = simple.get_tracer("application")
    runner = asyncio.Runner()
    rows: list[Row] = []
    cpu: dict[str, list[float]] = {}
    with emulator("--shape", "loop") as server:
        base_url = server.base_url(PROVIDER)
        options: dict[str, Any] = {"base_url": base_url, "api_key": "test-key-0123456789"}
        model = f"{PROVIDER}:{raw.MODELS[PROVIDER]}"
        adapters = {
            "plain": create_adapter(model, **options),
            "simple": create_adapter(model, tracer_provider=simple, **options),
            "batch": create_adapter(model, tracer_provider=batched, **options),
        }
        sync_client = raw.sdk_client(PROVIDER, base_url, sync=True)
        async_client = runner.run(_async_client(base_url))

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

        def sync_raw(traced: bool) -> Callable[[int], None]:
            def run(count: int) -> None:
                for _ in range(count):
                    if traced:
                        hand_traced.openai_sync(sync_client, hand_tracer)
                    else:
                        raw.openai_sync(sync_client)

            return run

        def async_raw(traced: bool) -> Callable[[int], None]:
            async def batch(count: int) -> None:
                for _ in range(count):
                    if traced:
                        await hand_traced.openai_async(async_client, hand_tracer)
                    else:
                        await raw.openai_async(async_client)

            return lambda count: runner.run(batch(count))

        variants: dict[str, Callable[[int], None]] = {}
        for name, adapter in adapters.items():
            variants[f"sync {name}"] = sync_run(adapter)
            variants[f"async {name}"] = async_run(adapter)
        for traced, name in ((False, "raw"), (True, "raw by hand")):
            variants[f"sync {name}"] = sync_raw(traced)
            variants[f"async {name}"] = async_raw(traced)
        for run in variants.values():
            run(warmup)
        exporters[0].clear()
        adapters["simple"].evaluate(raw.PROMPT, session=Session())
        spans = len(exporters[0].get_finished_spans())
        exporters[0].clear()
        hand_traced.openai_sync(sync_client, hand_tracer)
        assert len(exporters[0].get_finished_spans()) == spans, "the same spans by hand"
        measures = {
            name: _measure(run, loops, exporters, cpu.setdefault(name, []))
            for name, run in variants.items()
        }
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
            rows.append(
                row(
                    "otel",
                    f"{PROVIDER} {mode}: wink's CPU, SimpleSpanProcessor",
                    "ms/loop",
                    cpu[f"{mode} simple"],
                    against=cpu[f"{mode} plain"],
                    baseline=f"wink's CPU with no tracer, {mode}",
                    note="this process's CPU time per loop (the emulator's is not in it)",
                )
            )
            raw_base = timings[f"{mode} raw"]
            rows.append(row("otel", f"raw SDK {mode}: no tracer", "ms/loop", raw_base))
            rows.append(
                row(
                    "otel",
                    f"raw SDK {mode}: the same spans by hand, SimpleSpanProcessor",
                    "ms/loop",
                    timings[f"{mode} raw by hand"],
                    against=raw_base,
                    baseline=f"the raw loop with no tracer, {mode}",
                    note="the OpenTelemetry SDK's own cost for these spans",
                )
            )
            rows.append(
                row(
                    "otel",
                    f"raw SDK {mode}: CPU, the same spans by hand",
                    "ms/loop",
                    cpu[f"{mode} raw by hand"],
                    against=cpu[f"{mode} raw"],
                    baseline=f"the raw loop's CPU with no tracer, {mode}",
                )
            )
            rows.append(
                row(
                    "otel",
                    f"{PROVIDER} {mode}: wink traced against the raw SDK traced by hand",
                    "ms/loop",
                    timings[f"{mode} simple"],
                    against=timings[f"{mode} raw by hand"],
                    baseline=f"the raw loop with the same spans by hand, {mode}",
                )
            )
        for adapter in adapters.values():
            adapter.close()
            runner.run(adapter.aclose())
        sync_client.close()
        runner.run(async_client.close())
    runner.close()
    floor = _hand_spans_cpu(hand_tracer, exporters, repeat, min(50, loops))
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
    rows.append(
        row(
            "otel",
            "the same spans made by hand in a bare loop, simple processor",
            "µs/loop",
            floor,
            note="the OpenTelemetry SDK alone: no wink, no HTTP, no model",
        )
    )
    simple.shutdown()
    batched.shutdown()
    return rows


async def _async_client(base_url: str) -> Any:
    return raw.sdk_client(PROVIDER, base_url, sync=False)


def _hand_spans_cpu(tracer: Any, exporters: list[Any], repeat: int, batch: int) -> list[float]:
    """CPU µs of the four spans of one loop, made by hand with no work inside them."""
    from opentelemetry.trace import SpanKind

    def one_loop() -> None:
        with tracer.start_as_current_span(
            "invoke_agent bench", attributes=hand_traced.AGENT
        ) as agent:
            for index in range(2):
                with tracer.start_as_current_span(
                    f"chat {hand_traced.MODEL}", kind=SpanKind.CLIENT, attributes=hand_traced.CHAT
                ) as span:
                    span.set_attributes(
                        {
                            "gen_ai.usage.input_tokens": 10,
                            "gen_ai.usage.output_tokens": 5,
                            "gen_ai.response.finish_reasons": ("stop",),
                            "gen_ai.response.model": hand_traced.MODEL,
                            "gen_ai.response.id": "chatcmpl-1",
                        }
                    )
                if index == 0:
                    with tracer.start_as_current_span(
                        "execute_tool lookup",
                        attributes={
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "lookup",
                            "gen_ai.tool.call.id": "call_1",
                        },
                    ):
                        pass
            agent.set_attributes(
                {
                    "gen_ai.usage.input_tokens": 20,
                    "gen_ai.usage.output_tokens": 10,
                    "wink.rounds": 2,
                }
            )

    def timed() -> float:
        for exporter in exporters:
            exporter.clear()
        gc.collect()
        started = time.process_time()
        for _ in range(batch):
            one_loop()
        return (time.process_time() - started) * 1e6 / batch

    tries = 10 if batch >= 20 else 1
    return [min(timed() for _ in range(tries)) for _ in range(repeat)]


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


def _measure(
    run: Callable[[int], None], loops: int, exporters: list[Any], cpu: list[float]
) -> Callable[[], float]:
    """Milliseconds of wall time per loop; this process's CPU milliseconds go to `cpu`."""

    def measure() -> float:
        for exporter in exporters:  # they keep every span: memory stays bounded
            exporter.clear()
        gc.collect()  # no variant pays for the garbage of the one before it
        started = time.perf_counter()
        started_cpu = time.process_time()
        run(loops)
        cpu.append((time.process_time() - started_cpu) * 1000 / loops)
        return (time.perf_counter() - started) * 1000 / loops

    return measure
