"""The benchmark harness still runs: one real loop per provider through its emulator
process, and the report on hand-made rows. No timing is asserted (see `nox -s bench`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from benchmarks import raw, raw_stream
from benchmarks.__main__ import table
from benchmarks._common import Emulator, Row, emulator, interleave, row, run_json

from wink import Session, create_adapter

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md


@pytest.fixture(scope="module")
def loop_server() -> Iterator[Emulator]:
    with emulator("--shape", "loop") as server:
        yield server


@pytest.mark.parametrize("provider", sorted(raw.RAW_LOOPS))
def test_raw_and_wink_loops_reach_the_same_answer(provider: str, loop_server: Emulator) -> None:
    base_url = loop_server.base_url(provider)
    sync_loop, async_loop = raw.RAW_LOOPS[provider]
    sync_client = raw.sdk_client(provider, base_url, sync=True)
    assert sync_loop(sync_client) == "The value is aa."

    async def run_async() -> str | None:
        client = raw.sdk_client(provider, base_url, sync=False)
        try:
            return await async_loop(client)
        finally:
            if provider == "google":
                await client.aio.aclose()
            else:
                await client.close()

    assert asyncio.run(run_async()) == "The value is aa."
    with create_adapter(
        f"{provider}:{raw.MODELS[provider]}", base_url=base_url, api_key="test-key-0123456789"
    ) as adapter:
        response = adapter.evaluate(raw.PROMPT, session=Session())
    assert response.text == "The value is aa."
    assert response.usage.requests == 2
    sync_client.close()
    stats = loop_server.stats()
    assert stats["responses"] == {"200": stats["requests"]}


def test_the_emulator_process_counts_and_resets(loop_server: Emulator) -> None:
    loop_server.reset()
    assert loop_server.stats()["requests"] == 0


def test_interleave_rotates_the_order_and_rows_take_paired_ratios() -> None:
    order: list[str] = []
    results = interleave(3, {name: (lambda name=name: order.append(name) or 1.0) for name in "abc"})
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert results == {"a": [1.0] * 3, "b": [1.0] * 3, "c": [1.0] * 3}
    figure = row("s", "wink", "ms", [2.0, 4.0, 3.0], against=[2.0, 2.0, 2.0], target=1.1)
    assert (figure.median, figure.low, figure.high) == (3.0, 2.0, 4.0)
    assert figure.ratio == 1.5
    assert figure.verdict == "MISSED"


def test_the_report_table_marks_targets() -> None:
    rows = [
        Row("loop overhead", "raw", "ms/loop", 4.5, 4.0, 5.0),
        Row("loop overhead", "wink", "ms/loop", 2.5, 2.4, 2.9, 0.55, "raw", 1.10),
    ]
    text = table(rows)
    assert text.count("\n") == 3
    assert "| 0.550x | raw | <= 1.1x | **met** |" in text


@pytest.fixture(scope="module")
def stream_server() -> Iterator[Emulator]:
    with emulator("--shape", "stream", "--chunks", "30", "--chunk-size", "5") as server:
        yield server


@pytest.mark.parametrize("provider", sorted(raw_stream.RAW_SYNC))
def test_raw_and_wink_streams_reach_the_same_text(provider: str, stream_server: Emulator) -> None:
    base_url = stream_server.base_url(provider)
    client = raw_stream.sdk_client(provider, base_url, sync=True)
    first, text = raw_stream.RAW_SYNC[provider](client)
    assert len(text) == 150
    assert first > 0
    adapter = raw_stream.wink_adapter(provider, base_url)
    assert raw_stream.wink_sync(adapter)[1] == text

    async def run_async() -> str:
        async_client = raw_stream.sdk_client(provider, base_url, sync=False)
        try:
            assert (await raw_stream.RAW_ASYNC[provider](async_client))[1] == text
            return (await raw_stream.wink_async(adapter))[1]
        finally:
            await adapter.aclose()
            if provider == "google":
                await async_client.aio.aclose()
            else:
                await async_client.close()

    assert asyncio.run(run_async()) == text
    adapter.close()
    client.close()


def test_the_memory_child_reports_its_peak(stream_server: Emulator) -> None:
    found = run_json(
        ["-m", "benchmarks._stream_child", "anthropic", "wink", stream_server.base_url("anthropic")]
    )
    assert found["chars"] == 150
    assert found["peak_mib"] >= found["baseline_mib"] > 0


def test_the_stray_429_children_finish_every_loop_through_the_429s() -> None:
    stray = ("--stray-429", "0.3", "--stray-retry-after", "0.01")
    with emulator("--shape", "loop", *stray) as server:
        base_url = server.base_url("openai")
        for side in ("wink-patient", "raw5"):
            server.reset()
            found = run_json(["-m", "benchmarks.load", "concurrency", side, base_url, "8", "4"])
            assert found["errors"] == 0
            assert found["wall"] > 0
            answered = server.stats()["responses"]
            assert answered["200"] == 16  # 8 tool loops of two requests, reset after warm-up
            assert answered["429"] > 0  # type: ignore[operator]


def test_the_burst_children_stream_every_answer(stream_server: Emulator) -> None:
    for side in ("raw", "wink"):
        found = run_json(["-m", "benchmarks.burst", side, stream_server.base_url("openai"), "6"])
        assert found["errors"] == 0
        assert 0 < found["ttft_p50"] <= found["ttft_p99"] <= found["wall"]
        assert found["peak_rss_mib"] > 0


@pytest.mark.parametrize("mode", ["stream_async", "evaluate"])
def test_the_time_trace_profiles_the_thread_the_evaluation_runs_on(mode: str) -> None:
    """The trace of docs/performance.md: wink's layers are found on the profiled thread
    (the portal's, for `evaluate`); a profile of the wrong thread would hold none."""
    from benchmarks.trace_time import measure

    wall, places = measure(mode, 3)
    assert wall > 0
    assert places["wink: agent (the loop)"] > 0
    assert places["wink: transport"] > 0


def test_the_phase_trace_marks_every_phase_of_the_sync_loop() -> None:
    """The breakdown of docs/performance.md: every mark is reached in every loop (a mark
    whose function moved would leave its phase empty or fail the run), in order, and
    the wrapped functions are put back."""
    from benchmarks.trace_phases import PHASES, measure

    from wink.core.foundation import runtime

    begin = runtime.Running.begin
    wink_phases, raw_phases = measure(3)
    assert runtime.Running.begin is begin
    for label in (*PHASES.values(), "in all"):
        assert len(wink_phases[label]) == 3
        assert min(wink_phases[label]) >= 0
    for loop in range(3):  # the phases follow each other: they add up to the whole
        parts = sum(wink_phases[label][loop] for label in PHASES.values())
        assert parts == pytest.approx(wink_phases["in all"][loop])
    assert all(len(spent) == 3 and min(spent) > 0 for spent in raw_phases.values())


def test_the_short_path_variants_run_the_same_loop(loop_server: Emulator) -> None:
    """The plain-function and `Tool` variants of the short-path rows do the same work."""
    from benchmarks.short_path import LOOKUP_TOOL, _scripted_us, lookup_function

    with create_adapter(
        "openai:gpt-4.1", base_url=loop_server.base_url("openai"), api_key="test-key-0123456789"
    ) as adapter:
        for tool in (LOOKUP_TOOL, lookup_function):
            response = adapter.evaluate(raw.TASK, tools=[tool], session=Session())
            assert response.text == "The value is aa."
            assert response.usage.requests == 2
    for tool in (LOOKUP_TOOL, lookup_function):
        assert _scripted_us(tool, loops=2)() > 0
