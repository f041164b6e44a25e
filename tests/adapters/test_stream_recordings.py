"""Every recorded SSE stream in tests/conformance/streams, replayed through wink's streams.

The emulator serves the recorded status, headers and body verbatim (`Fault.http`),
once whole and once cut into irregular pieces (inside `data:`, between `\\r` and `\\n`,
inside a UTF-8 character); the outcome the recording's `expect` documents (see the
README there) must not change. A recorded tool-call round is followed by a streamed
final answer from the emulator, so the loop runs the tools and ends in round 2.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import wink
from wink import (
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    RetryPolicy,
    RoundFinished,
    Session,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThrottleError,
    Tool,
    ToolCallReady,
    ToolContext,
    ToolResult,
    UsageReported,
    WinkError,
    create_adapter,
)
from wink.testing import Fault, ProviderEmulator, Turn

STREAMS = Path(__file__).resolve().parents[1] / "conformance" / "streams"
RECORDINGS = sorted(path.relative_to(STREAMS).as_posix() for path in STREAMS.glob("*/*.json"))
PROVIDER = {
    "openai": "openai",
    "responses": "openai-responses",
    "anthropic": "anthropic",
    "google": "google",
}
FOLLOW_UP = "All done."


def load(name: str) -> dict[str, Any]:
    return json.loads((STREAMS / name).read_text(encoding="utf-8"))


def pieces_for(name: str, size: int) -> tuple[int, ...]:
    """Irregular piece sizes, 1 to a few hundred bytes, the same for a recording each run."""
    rng = random.Random(name)
    return tuple(rng.choice((1, 2, 3, 5, 7, 13, 31, 64, 150, 300)) for _ in range(64))


@dataclasses.dataclass
class Calls:
    seen: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)


def make_prompt(expect: dict[str, Any], calls: Calls) -> Prompt:
    """A tool for every name the recording calls; a structured output if it has one."""
    tools: list[Tool[Any, Any]] = []
    names = {call["name"] for call in expect.get("tool_calls", ())}
    for name in sorted(names):
        fields = sorted(
            {
                key
                for call in expect["tool_calls"]
                if call["name"] == name
                for key in call["arguments"]
            }
        )
        params = dataclasses.make_dataclass(f"{name}_params", [(key, Any) for key in fields])

        def handler(params: Any, *, context: ToolContext, name: str = name) -> ToolResult[str]:
            calls.seen.append((name, dataclasses.asdict(params)))
            return ToolResult.ok("done")

        tools.append(Tool(name=name, description=f"{name}", handler=handler, params_type=params))
    output = None
    if "output" in expect:
        output = dataclasses.make_dataclass(
            "Output", [(key, type(value)) for key, value in expect["output"].items()]
        )
    section = MarkdownSection(key="task", title="Task", template="Go.", tools=tools)
    return Prompt(name="recorded", sections=[section], output_type=output)


def serve(emu: ProviderEmulator, name: str, record: dict[str, Any], cut: bool) -> None:
    response = record["response"]
    headers = dict(response["headers"])
    if response["status"] == 200:
        headers.setdefault("content-type", "text/event-stream")
    else:
        headers.setdefault("content-type", "application/json")
    body = response["body"].encode("utf-8")
    chunks = pieces_for(name, len(body)) if cut else None
    emu.inject(Fault.http(response["status"], body, headers, chunks=chunks, chunk_delay=0.0))
    emu.enqueue(Turn.text(FOLLOW_UP))


def run(
    name: str, cut: bool
) -> tuple[list[StreamEvent], Any, WinkError | None, Calls, ProviderEmulator]:
    record = load(name)
    expect = record["expect"]
    provider = PROVIDER[record["format"]]
    calls = Calls()
    with ProviderEmulator() as emu:
        serve(emu, name, record, cut)
        adapter = create_adapter(
            f"{provider}:recorded-model",
            base_url=emu.base_url(provider),  # type: ignore[arg-type]
            api_key="test-key-0123456789",
            retry_policy=RetryPolicy(max_attempts=1),
        )
        prompt = make_prompt(expect, calls)
        events: list[StreamEvent] = []
        error: WinkError | None = None
        response: Any = None
        if not cut:  # whole: the sync form
            with adapter.stream(prompt, session=Session()) as stream:
                try:
                    events.extend(stream)
                    response = stream.response
                except WinkError as failure:
                    error = failure
        else:  # in pieces: the async form

            async def consume() -> tuple[Any, WinkError | None]:
                try:
                    async with adapter.stream_async(prompt, session=Session()) as stream:
                        async for event in stream:
                            events.append(event)
                    return stream.response, None
                except WinkError as failure:
                    return None, failure
                finally:
                    await adapter.aclose()

            response, error = asyncio.run(consume())
        adapter.close()
    return events, response, error, calls, emu


def first_round(events: list[StreamEvent]) -> list[StreamEvent]:
    for index, event in enumerate(events):
        if isinstance(event, RoundFinished):
            return events[: index + 1]
    return events


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "pieces"])
@pytest.mark.parametrize("name", RECORDINGS)
def test_recorded_stream(name: str, cut: bool) -> None:
    record = load(name)
    expect = record["expect"]
    events, response, error, calls, emu = run(name, cut)
    round_one = first_round(events)
    text = "".join(event.text for event in round_one if isinstance(event, TextDelta))
    assert text == expect["text"]
    if "thinking" in expect:
        thinking = "".join(e.text for e in round_one if isinstance(e, ThinkingDelta))
        assert thinking == expect["thinking"]
    for block in expect.get("thinking_blocks", ()):
        signatures = "".join(e.signature or "" for e in round_one if isinstance(e, ThinkingDelta))
        assert block["signature"] in signatures
    if "usage" in expect:
        check_usage(round_one, expect["usage"])
    outcome = expect["outcome"]
    if outcome == "error":
        check_error(name, error, expect)
        assert len(emu.requests) == 1
        return
    assert error is None, error
    if outcome == "text":
        assert response.text == expect["text"]
        assert response.rounds == 1
        if "output" in expect:
            assert dataclasses.asdict(response.output) == expect["output"]
        return
    check_tool_calls(round_one, expect["tool_calls"])
    assert response.text == FOLLOW_UP
    assert response.rounds == 2
    assert sorted(calls.seen, key=repr) == sorted(
        ((call["name"], call["arguments"]) for call in expect["tool_calls"]), key=repr
    )
    follow_up = emu.requests[1]
    if record["format"] == "google":
        echoed = [
            part
            for content in follow_up.body["contents"]
            for part in content["parts"]
            if "functionCall" in part
        ]
        assert [part.get("thoughtSignature") for part in echoed] == [
            call.get("thought_signature") for call in expect["tool_calls"]
        ]
    for item_id in expect.get("reasoning_item_ids", ()):
        assert item_id in json.dumps(follow_up.body)


def check_usage(round_one: list[StreamEvent], expected: dict[str, Any] | None) -> None:
    reported = [event.usage for event in round_one if isinstance(event, UsageReported)]
    if expected is None:
        assert reported == []
        return
    (usage,) = reported
    for key, value in expected.items():
        if value is not None:
            assert getattr(usage, key) == value, key
    (finished,) = [event for event in round_one if isinstance(event, RoundFinished)] or [None]
    if finished is not None:
        assert finished.usage == usage


def check_tool_calls(round_one: list[StreamEvent], expected: list[dict[str, Any]]) -> None:
    ready = [event for event in round_one if isinstance(event, ToolCallReady)]
    assert [event.name for event in ready] == [call["name"] for call in expected]
    assert [event.arguments for event in ready] == [call["arguments"] for call in expected]
    made_up: set[str] = set()
    for event, call in zip(ready, expected, strict=True):
        if call["id"]:
            assert event.id == call["id"]
        else:  # Gemini sent none: wink's own, unique, in every provider's id alphabet
            assert re.fullmatch(r"call_[0-9a-f]{24}", event.id)
            made_up.add(event.id)
    assert len(made_up) == sum(1 for call in expected if not call["id"])


# The class each recorded failure is now, where it is more precise than the one the
# recording's `expect` names (written before these classes existed, and kept verbatim):
# each is a subclass of that one, so code that caught the old class still does.
PRECISE = {
    "anthropic/http_401_on_stream_request.json": wink.AuthenticationError,
    "anthropic/max_tokens.json": wink.OutputTruncatedError,
    "google/http_400_api_key_invalid.json": wink.AuthenticationError,  # a 400, said so
    "google/max_tokens.json": wink.OutputTruncatedError,
    "openai/error_event_after_text.json": wink.BadRequestError,  # Groq's 400 error event
    "openai/finish_length.json": wink.OutputTruncatedError,
    "openai/refusal_deltas.json": wink.RefusalError,
    "responses/http_400_on_stream_request.json": wink.BadRequestError,
    "responses/incomplete_max_output_tokens.json": wink.OutputTruncatedError,
    "responses/refusal.json": wink.RefusalError,
}
REFUSALS = {  # the refusal's words, as the recorded stream sent them
    "openai/refusal_deltas.json": "I'm sorry, I can\u2019t assist with that request.",
    "responses/refusal.json": "I'm sorry, I can't assist with that.",
}


def test_every_recorded_failure_has_its_precise_class_or_none() -> None:
    failures = {name for name in RECORDINGS if load(name)["expect"]["outcome"] == "error"}
    assert set(PRECISE) <= failures
    for name, kind in PRECISE.items():
        assert issubclass(kind, getattr(wink, load(name)["expect"]["error"]["class"]))


def check_error(name: str, error: WinkError | None, expect: dict[str, Any]) -> None:
    expected = expect["error"]
    assert isinstance(error, PromptEvaluationError), error
    assert type(error) is PRECISE.get(name, getattr(wink, expected["class"]))
    if isinstance(error, wink.OutputTruncatedError):  # what came before the cut, kept
        assert error.partial_text == (expect["text"] or None)
        assert (error.finish_reason, error.status_code) == ("length", 200)
    if isinstance(error, wink.RefusalError):
        assert error.refusal == REFUSALS[name]
        assert error.refusal in str(error)
        assert (error.finish_reason, error.partial_text) == ("refusal", None)
    if "phase" in expected:
        assert error.phase == expected["phase"]
    if "phase_any_of" in expected:
        assert error.phase in expected["phase_any_of"]
    if "kind" in expected:
        assert isinstance(error, ThrottleError)
        assert error.details.kind == expected["kind"]
    if "retry_safe" in expected:
        assert isinstance(error, ThrottleError)
        assert error.details.retry_safe is expected["retry_safe"]
    if "attempts" in expected and isinstance(error, ThrottleError):
        assert error.details.attempts == expected["attempts"]
    if "message_contains" in expected:
        assert expected["message_contains"] in str(error)
