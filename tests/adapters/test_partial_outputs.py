"""Structured output while it streams: `OutputDelta` events on every wire, from the JSON
text of a native answer and from the output tool's arguments, through the real SDKs and
the emulator over HTTP; the final output is the one `evaluate` gives."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from benchmarks._emulator import Report, structured_answer
from pydantic import BaseModel

from tests.helpers.adapters import FAST_RETRY, PROVIDERS, make_adapter
from wink import (
    OutputDelta,
    OutputRejected,
    Prompt,
    RoundFinished,
    RoundRestarted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
)
from wink.core.prompting.prompt import parse_partial_output
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn


class Day(BaseModel):
    summary: str
    high: int


class Forecast(BaseModel):
    city: str
    days: list[Day]
    tips: list[str]
    note: str = ""


ANSWER = {
    "city": "Paris",
    "days": [
        {"summary": "Sunny and warm", "high": 24},
        {"summary": "Light rain later «Ça va»", "high": 19},
        {"summary": "Clouds over 東京 🌤", "high": 117},
    ],
    "tips": ["Umbrella on Tuesday", "Sunscreen on Monday", "A coat at night"],
    "note": "Take an umbrella on Tuesday.",
}


def prompt() -> Prompt[Forecast]:
    return Prompt.from_text("Forecast for Paris?", output_type=Forecast)


def answer_turn(via: str, answer: dict[str, Any] = ANSWER) -> Turn:
    if via == "text":
        return Turn.json(answer)
    return Turn.tool_calls(EmulatedToolCall("final_result_Forecast", answer))


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator(stream_chunk_size=5) as emu:
        yield emu


def streamed(provider: str, emulator: ProviderEmulator, mode: str) -> tuple[list[Any], Any]:
    adapter = make_adapter(provider, emulator)
    if mode == "sync":
        with adapter.stream(prompt()) as stream:
            events = list(stream)
        return events, stream.response

    async def run() -> tuple[list[StreamEvent], Any]:
        async with adapter, adapter.stream_async(prompt()) as stream:
            seen = [event async for event in stream]
        return seen, stream.response

    return asyncio.run(run())


def grows(before: Any, after: Any) -> bool:
    """`after` is `before` with more: more keys, more items, a longer string."""
    if isinstance(before, dict):
        return before.keys() <= after.keys() and all(grows(before[k], after[k]) for k in before)
    if isinstance(before, list):
        return len(before) <= len(after) and all(map(grows, before, after))
    if isinstance(before, str):
        return isinstance(after, str) and after.startswith(before)
    return before == after


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("via", ["text", "tool"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_partials_only_grow_and_end_as_the_evaluated_output(
    provider: str, via: str, mode: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(answer_turn(via))
    evaluated = make_adapter(provider, emulator).evaluate(prompt())
    emulator.enqueue(answer_turn(via))
    events, response = streamed(provider, emulator, mode)

    partials = [event.partial for event in events if isinstance(event, OutputDelta)]
    assert response.output == evaluated.output == Forecast.model_validate(ANSWER)
    assert partials[-1] == response.output
    assert all(isinstance(partial, Forecast) for partial in partials)
    dumps = [partial.model_dump() for partial in partials]
    assert all(grows(a, b) and a != b for a, b in itertools.pairwise(dumps))
    whole_call = provider == "google" and via == "tool"  # Gemini sends a call whole
    assert len(partials) >= (1 if whole_call else 6)
    if not whole_call:  # cut short on the way: the tips, a tip, the note
        assert any(len(partial.tips) < 3 for partial in partials)
        assert any(partial.tips and partial.tips[-1] not in ANSWER["tips"] for partial in partials)
        assert any(0 < len(partial.note) < len(ANSWER["note"]) for partial in partials)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_partial_follows_the_piece_that_grew_it(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(answer_turn("tool"))
    events, _ = streamed(provider, emulator, "sync")
    pieces = (TextDelta, ToolCallDelta, ToolCallReady, OutputDelta)
    for index, event in enumerate(events):
        if isinstance(event, OutputDelta):
            assert isinstance(events[index - 1], pieces)
    finished = next(i for i, e in enumerate(events) if isinstance(e, RoundFinished))
    assert all(not isinstance(e, OutputDelta) for e in events[finished:])


@pytest.mark.parametrize("via", ["text", "tool"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rejected_answer_voids_its_partials_and_the_next_starts_over(
    provider: str, via: str, emulator: ProviderEmulator
) -> None:
    wrong = {**ANSWER, "note": 7}
    emulator.enqueue(answer_turn(via, wrong), answer_turn(via))
    events, response = streamed(provider, emulator, "sync")
    rejected = next(i for i, e in enumerate(events) if isinstance(e, OutputRejected))
    after = [e.partial for e in events[rejected:] if isinstance(e, OutputDelta)]
    assert response.output == Forecast.model_validate(ANSWER)
    assert after[-1] == response.output
    if not (provider == "google" and via == "tool"):  # a call Gemini sends whole
        assert len(after[0].tips) < 3  # started over from the second answer's first pieces


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic"])
def test_a_restarted_round_shows_its_answer_again_from_the_start(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.enqueue(Fault.stream_reset(after=45), answer_turn("tool"))
    with make_adapter(provider, emulator, retry_policy=FAST_RETRY).stream(prompt()) as stream:
        events = list(stream)
    restart = next(i for i, e in enumerate(events) if isinstance(e, RoundRestarted))
    before = [e.partial for e in events[:restart] if isinstance(e, OutputDelta)]
    after = [e.partial for e in events[restart:] if isinstance(e, OutputDelta)]
    assert before  # the caller saw part of the answer...
    assert before[-1] != stream.response.output
    assert len(after[0].tips) < len(before[-1].tips)  # ...then it starts over
    assert after[-1] == stream.response.output == Forecast.model_validate(ANSWER)


def test_no_partials_without_an_output_type(emulator: ProviderEmulator) -> None:
    emulator.enqueue(Turn.text(json.dumps(ANSWER)))
    with make_adapter("openai", emulator).stream("Forecast?") as stream:
        events = list(stream)
    assert not [event for event in events if isinstance(event, OutputDelta)]
    assert stream.response.output is None


# --- the partial parsing itself


def test_a_number_at_the_end_waits_for_what_follows() -> None:
    assert parse_partial_output(int, "1") == (False, None)
    assert parse_partial_output(Day, '{"summary": "x", "high": 1') == (False, None)
    assert parse_partial_output(Day, '{"summary": "x", "high": 12,') == (
        True,
        Day(summary="x", high=12),
    )
    assert parse_partial_output(Day, '{"summary": "x1", "high": 3}') == (
        True,
        Day(summary="x1", high=3),
    )
    assert parse_partial_output(Day, '{"high": 3, "summary": "ends in 1') == (
        True,
        Day(summary="ends in 1", high=3),
    )


def test_a_fenced_answer_is_read_inside_its_fence() -> None:
    assert parse_partial_output(Day, '```json\n{"high": 3, "summary": "abc') == (
        True,
        Day(summary="abc", high=3),
    )
    assert parse_partial_output(Day, '```json\n{"high": 3, "summary": "abc"}\n``') == (
        True,
        Day(summary="abc", high=3),
    )


def test_what_does_not_validate_yet_is_no_partial() -> None:
    assert parse_partial_output(Day, '{"summary": "x"') == (False, None)
    assert parse_partial_output(Day, "Let me look that up.") == (False, None)


@pytest.mark.parametrize("via", ["text", "tool"])
def test_a_long_answer_is_parsed_a_bounded_number_of_times(
    via: str, emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsing the whole answer so far after each of its 2,000-odd pieces would cost the
    square of its length: the parses add up to a few times its length, the partials still
    only grow, and the last is the evaluated output."""
    from wink.core.agent import partials as module

    parsed: list[int] = []

    def counted(output_type: Any, text: str) -> tuple[bool, Any]:
        parsed.append(len(text))
        return parse_partial_output(output_type, text)

    monkeypatch.setattr(module, "parse_partial_output", counted)
    answer = json.loads(structured_answer())  # about 18 KB, as the benchmark streams
    size = len(json.dumps(answer))
    emulator.set_streaming(chunk_size=8)
    turn = (
        Turn.json(answer)
        if via == "text"
        else Turn.tool_calls(EmulatedToolCall("final_result_Report", answer))
    )
    emulator.enqueue(turn)
    adapter = make_adapter("openai", emulator)
    with adapter.stream(Prompt.from_text("Report?", output_type=Report)) as stream:
        events = list(stream)
    partials = [event.partial for event in events if isinstance(event, OutputDelta)]
    assert size > 16_000
    assert sum(parsed) < 15 * size  # every piece parsed: over 1,000 times the size
    assert len(partials) >= 10  # still shown as it grows
    dumps = [partial.model_dump() for partial in partials]
    assert all(grows(a, b) and a != b for a, b in itertools.pairwise(dumps))
    assert partials[-1] == stream.response.output == Report.model_validate(answer)
