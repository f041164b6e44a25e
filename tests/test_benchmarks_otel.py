"""The tracing-overhead scenario runs: both adapters reach the emulator and the traced one
really exports its spans. No timing is asserted (see `python -m benchmarks --only otel`)."""

from __future__ import annotations

import pytest


def test_the_otel_scenario_measures_a_traced_and_a_plain_loop() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from benchmarks.otel import otel_overhead

    rows = otel_overhead(loops=2, repeat=1, warmup=1)
    assert [row.variant for row in rows[:3]] == [
        "openai sync: no tracer",
        "openai sync: SDK tracer, SimpleSpanProcessor, in-memory exporter",
        "openai sync: SDK tracer, BatchSpanProcessor, in-memory exporter",
    ]
    assert len(rows) == 8
    assert rows[1].note == "4 spans per loop"  # evaluation, 2 requests, 1 tool
    assert rows[1].target == 1.03
    assert rows[-1].unit == "µs/loop"
