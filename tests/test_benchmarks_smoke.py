"""The benchmark harness still runs: one real loop per provider through its emulator
process, and the report on hand-made rows. No timing is asserted (see `nox -s bench`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from benchmarks import raw
from benchmarks.__main__ import table
from benchmarks._common import Emulator, Row, emulator, interleave, row

from wink import Session, create_adapter


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
