"""A structured answer that does not validate goes back to the model on every wire format,
evaluated or streamed, sync or async: the real SDKs against the emulator over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from tests.helpers.adapters import PROVIDERS, make_adapter
from tests.helpers.prompts import Answer, make_prompt as make_tool_prompt
from wink import (
    FallbackAdapter,
    MarkdownSection,
    OutputRejected,
    Prompt,
    PromptEvaluationError,
    PromptFailed,
    RoundFinished,
    Session,
    StreamEvent,
)
from wink.adapters.evaluator import Evaluator
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

REPORT = Prompt(
    name="report",
    sections=[MarkdownSection(key="task", title="Task", template="Weather in Paris?")],
    output_type=Answer,
)
"""No tools: every provider but Anthropic asks for native JSON output (Gemini too)."""

WARM = '{"city": "Paris", "degrees": "warm"}'
GOOD = {"city": "Paris", "degrees": 21}
PROBLEM = "degrees: Input should be a valid integer, unable to parse string as an integer"
REPLY = (
    f"Your answer does not match Answer: {PROBLEM}. Answer again with the corrected Answer: "
    "the JSON alone, matching the schema you were given."
)
MODES = ("evaluate", "evaluate_async", "stream", "stream_async")


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator(stream_chunk_size=7) as emu:
        yield emu


def run(
    adapter: Evaluator, prompt: Prompt[Any], mode: str, session: Session, **options: Any
) -> tuple[Any, list[StreamEvent]]:
    """(the response, the stream's events) of one evaluation in `mode`."""
    if mode == "evaluate":
        return adapter.evaluate(prompt, session=session, **options), []
    if mode == "stream":
        with adapter.stream(prompt, session=session, **options) as stream:
            events = list(stream)
        return stream.response, events

    async def run_async() -> tuple[Any, list[StreamEvent]]:
        if mode == "evaluate_async":
            return await adapter.evaluate_async(prompt, session=session, **options), []
        async with adapter.stream_async(prompt, session=session, **options) as stream:
            events = [event async for event in stream]
        return stream.response, events

    try:
        return asyncio.run(run_async())
    finally:
        asyncio.run(adapter.aclose())


def answer_then_reply(provider: str, body: dict[str, Any]) -> list[Any]:
    """The last two entries of the transcript a request sent, in the provider's form."""
    key = {"anthropic": "messages", "google": "contents", "bedrock": "messages"}.get(provider)
    if key is None:
        key = "messages" if provider == "openai" else "input"
    return body[key][-2:]


def native_answer_then_reply(provider: str, answer: str, reply: str) -> list[Any]:
    if provider in ("openai", "openai-responses"):
        return [{"role": "assistant", "content": answer}, {"role": "user", "content": reply}]
    if provider == "anthropic":
        return [
            {"role": "assistant", "content": [{"type": "text", "text": answer}]},
            {"role": "user", "content": [{"type": "text", "text": reply}]},
        ]
    if provider == "bedrock":
        return [
            {"role": "assistant", "content": [{"text": answer}]},
            {"role": "user", "content": [{"text": reply}]},
        ]
    return [
        {"role": "model", "parts": [{"text": answer}]},
        {"role": "user", "parts": [{"text": reply}]},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_json_answer_that_does_not_validate_is_corrected(
    provider: str, mode: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script([Turn.text(WARM), Turn.json(GOOD)])
    session = Session()
    response, events = run(make_adapter(provider, emulator), REPORT, mode, session)
    assert response.output == Answer("Paris", 21)
    assert response.rounds == 2
    first, second = emulator.requests
    assert answer_then_reply(provider, second.body) == native_answer_then_reply(
        provider, WARM, REPLY
    )
    if provider == "google":  # asked as native JSON both times, the schema unchanged
        config = second.body["generationConfig"]
        assert config == first.body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
    (event,) = session[OutputRejected]
    assert (event.via, event.attempt, event.round, event.answer) == ("text", 1, 1, WARM)
    assert event.problems == PROBLEM
    if mode.startswith("stream"):
        rejected = [e for e in events if isinstance(e, OutputRejected)]
        assert rejected == [event]
        after = events[events.index(event) + 1]
        assert isinstance(after, RoundFinished)
        assert after.round == 1


@pytest.mark.parametrize("mode", MODES)
def test_past_the_limit_the_last_validation_error_is_raised(
    provider: str, mode: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script([Turn.text("{}"), Turn.text(WARM), Turn.json(GOOD)])
    session = Session()
    adapter = make_adapter(provider, emulator, max_output_retries=0)
    with pytest.raises(PromptEvaluationError) as info:
        run(adapter, REPORT, mode, session, max_output_retries=1)
    error = info.value
    assert error.phase == "response"
    assert error.message == (
        f"structured output does not match Answer after 2 answers (max_output_retries=1); "
        f"last error: {PROBLEM}"
    )
    assert isinstance(error.__cause__, ValidationError)
    assert error.provider_payload == {"text": WARM}
    assert len(emulator.requests) == 2
    assert [event.problems for event in session[OutputRejected]] == [
        "city: Field required; degrees: Field required",
        PROBLEM,
    ]
    assert session[PromptFailed][0].error is error


@pytest.mark.parametrize("mode", MODES)
def test_an_output_tool_call_that_does_not_validate_is_corrected(
    mode: str, emulator: ProviderEmulator
) -> None:
    """Anthropic takes the output as a tool: the rejection is a failed `tool_result`."""
    emulator.set_script(
        [
            Turn.tool_calls(
                EmulatedToolCall("final_result_Answer", json.loads(WARM), id="toolu_out")
            ),
            Turn.tool_calls(EmulatedToolCall("final_result_Answer", GOOD, id="toolu_out2")),
        ]
    )
    session = Session()
    response, events = run(make_adapter("anthropic", emulator), REPORT, mode, session)
    assert response.output == Answer("Paris", 21)
    (result,) = emulator.requests[1].body["messages"][-1]["content"]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_out",
        "content": (
            f"The final answer does not match Answer: {PROBLEM}. Call final_result_Answer "
            "again with arguments that match its schema."
        ),
        "is_error": True,
    }
    (event,) = session[OutputRejected]
    assert (event.via, event.attempt) == ("tool", 1)
    if mode.startswith("stream"):
        assert [e for e in events if isinstance(e, OutputRejected)] == [event]


def test_gemini_with_tools_corrects_its_output_call(emulator: ProviderEmulator) -> None:
    """With tools, Gemini's output is a function too: rejected as a failed response."""
    emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("final_result_Answer", json.loads(WARM))),
            Turn.tool_calls(EmulatedToolCall("final_result_Answer", GOOD)),
        ]
    )
    response = make_adapter("google", emulator).evaluate(
        make_tool_prompt(Answer), session=Session()
    )
    assert response.output == Answer("Paris", 21)
    (part,) = emulator.requests[1].body["contents"][-1]["parts"]
    assert part["functionResponse"]["name"] == "final_result_Answer"
    assert PROBLEM in part["functionResponse"]["response"]["error"]


@pytest.mark.parametrize("mode", ["evaluate", "stream"])
def test_a_fallback_adapter_takes_the_limit_per_call_and_from_its_first_adapter(
    mode: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script([Turn.text(WARM), Turn.json(GOOD)])
    first = make_adapter("openai", emulator, max_output_retries=0)
    chain = FallbackAdapter([first, make_adapter("google", emulator)])
    with pytest.raises(PromptEvaluationError, match="max_output_retries=0"):
        run(chain, REPORT, mode, Session())
    emulator.set_script([Turn.text(WARM), Turn.json(GOOD)])
    response, _ = run(chain, REPORT, mode, Session(), max_output_retries=1)
    assert response.output == Answer("Paris", 21)
