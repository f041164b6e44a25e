"""Partial structured output: what `OutputDelta`s add to a long streamed answer.

One 18 KB JSON answer (about 2,300 events of 8 characters), over the emulator at 0 ms
latency in its own process, streamed three ways in the same run, interleaved repetition
by repetition: the raw openai SDK reading the text deltas; wink streaming it as plain text
(no `output_type`); wink streaming it with an `output_type`, so each piece may add an
`OutputDelta` with the answer validated so far. The figure to watch is structured
against plain: the partial parsing alone (docs/streaming.md#structured-output-as-it-arrives).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from . import raw_stream
from ._common import Row, emulator, interleave, row
from ._emulator import Report, structured_answer

CHUNK = 8
SCENARIO = "stream: 18 KB structured answer"


def structured_stream(repeat: int, batch: int) -> list[Row]:
    answer = structured_answer()
    events = len(answer) // CHUNK + 1
    args = ("--shape", "json-stream", "--chunks", str(events), "--chunk-size", str(CHUNK))
    with emulator(*args) as srv:
        base = srv.base_url("openai")
        client = raw_stream.sdk_client("openai", base, sync=True)
        adapter = raw_stream.wink_adapter("openai", base)
        calls: dict[str, Callable[[], Any]] = {
            "raw": lambda: raw_stream.openai_sync(client)[1],
            "plain": lambda: _wink(adapter, None),
            "structured": lambda: _wink(adapter, Report),
        }
        for call in calls.values():  # warm, and the same answer everywhere
            call()
        assert calls["raw"]() == answer
        assert calls["plain"]() == answer
        assert calls["structured"]() == Report.model_validate_json(answer)
        timings = interleave(repeat, {name: _batch(call, batch) for name, call in calls.items()})
        adapter.close()
        client.close()
    raw, plain = timings["raw"], timings["plain"]
    note = f"{len(answer):,} characters, {events:,} events"
    return [
        row(SCENARIO, "openai sync: raw SDK", "ms", raw, note=note),
        row(
            SCENARIO,
            "openai sync: wink, plain text",
            "ms",
            plain,
            against=raw,
            baseline="raw openai SDK, sync",
        ),
        row(
            SCENARIO,
            "openai sync: wink, output_type",
            "ms",
            timings["structured"],
            against=raw,
            baseline="raw openai SDK, sync",
        ),
        row(
            SCENARIO,
            "openai sync: output_type over plain",
            "ms",
            timings["structured"],
            against=plain,
            baseline="wink plain text stream, same answer",
        ),
    ]


def _wink(adapter: Any, output_type: type[Report] | None) -> Any:
    """The answer streamed: its text (plain), or its last `OutputDelta` (structured),
    which must equal the checked output."""
    from wink import OutputDelta, Prompt, Session, TextDelta

    prompt = Prompt.from_text("List the items.", output_type=output_type)
    parts: list[str] = []
    last: Any = None
    with adapter.stream(prompt, session=Session()) as stream:
        for event in stream:
            if isinstance(event, OutputDelta):
                last = event.partial
            elif isinstance(event, TextDelta):
                parts.append(event.text)
    if output_type is None:
        return "".join(parts)
    assert last == stream.response.output
    return last


def _batch(call: Callable[[], Any], size: int) -> Callable[[], float]:
    def measure() -> float:
        values: list[float] = []
        for _ in range(size):
            started = time.perf_counter()
            call()
            values.append(time.perf_counter() - started)
        return statistics.median(values) * 1e3

    return measure
