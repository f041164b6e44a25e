"""The tracing-overhead scenario runs: wink's adapters and the hand-instrumented raw loop
reach the emulator and really export their spans. No timing is asserted (see
`python -m benchmarks --only otel`)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md


def test_the_otel_scenario_measures_traced_plain_and_hand_traced_loops() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from benchmarks.otel import otel_overhead

    rows = otel_overhead(loops=2, repeat=1, warmup=1)
    variants = [row.variant for row in rows]
    assert variants[:3] == [
        "openai sync: no tracer",
        "openai sync: SDK tracer, SimpleSpanProcessor, in-memory exporter",
        "openai sync: SDK tracer, BatchSpanProcessor, in-memory exporter",
    ]
    assert len(rows) == 2 * 8 + 3
    assert rows[1].note == "4 spans per loop"  # evaluation, 2 requests, 1 tool
    assert rows[1].target == 1.03
    hand = rows[variants.index("raw SDK sync: the same spans by hand, SimpleSpanProcessor")]
    assert hand.ratio is not None
    assert hand.ratio > 0
    assert rows[-1].unit == "µs/loop"
    assert rows[-1].median > 0
