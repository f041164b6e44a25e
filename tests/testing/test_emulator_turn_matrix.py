"""Every kind of `Turn`, on every wire format, evaluated and streamed through wink's own
adapters: both ways must give the same neutral answer, and the one the turn scripts.

This keeps the emulator's streams honest: a stream renderer that crashes on a turn (the
retry then gets the next turn), or streams a part as something else (Gemini thinking as
text), gives a different answer streamed than evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.helpers.adapters import KEY, MODELS, NO_RETRY, PROVIDERS
from tests.helpers.prompts import Answer, make_prompt
from wink import (
    PromptEvaluationError,
    Session,
    TextDelta,
    Thinking,
    ThinkingDelta,
    ToolInvoked,
    Usage,
    create_adapter,
)
from wink.testing import EmulatedThinking, EmulatedToolCall, ProviderEmulator, Turn

THINKING_MODELS = {
    "openai": "o4-mini",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "google": "gemini-2.5-flash",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}
SHOWS_THINKING = frozenset(
    {"openai-responses", "anthropic", "google", "bedrock"}
)  # Chat shows none
PARIS = EmulatedToolCall("weather", {"city": "Paris"})


@dataclass(frozen=True)
class Case:
    """A script, the adapter it needs, and the answer it must come to on every wire."""

    script: tuple[Turn, ...]
    text: str | None = None
    thinking: str | None = None  # where the provider shows thinking
    rounds: int = 1
    calls: tuple[dict[str, Any], ...] = ()  # the weather tool's arguments, in order
    output: Any = None
    usage: Usage | None = None
    error: dict[str, Any] | None = None  # the answer is this `PromptEvaluationError`
    thinks: bool = False
    shows: bool = True  # with `thinks`: ask for readable thinking
    structured: bool = False
    models: dict[str, str] = field(default_factory=dict[str, str])
    per_provider: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])


CASES: dict[str, Case] = {
    "text": Case((Turn.text("Sunny in Paris."),), text="Sunny in Paris."),
    "usage": Case(
        (Turn.text("Sunny.", input_tokens=40, output_tokens=12, cached_tokens=8),),
        text="Sunny.",
        usage=Usage(input_tokens=40, output_tokens=12, cached_tokens=8, requests=1),
    ),
    "reasoning_usage": Case(
        (Turn.text("Sunny.", input_tokens=30, output_tokens=9, reasoning_tokens=5),),
        text="Sunny.",
        usage=Usage(input_tokens=30, output_tokens=9, reasoning_tokens=5, requests=1),
        thinks=True,
        # Converse's usage does not count the thinking apart (it is in outputTokens)
        per_provider={"bedrock": {"usage": Usage(input_tokens=30, output_tokens=9, requests=1)}},
    ),
    "thinking": Case(
        (Turn.text("Sunny.", thinking="Looking outside."),),
        text="Sunny.",
        thinking="Looking outside.",
        thinks=True,
    ),
    "thinking_parts": Case(
        (Turn.text("Sunny.", thinking=["First, the sky.", "Then, the wind."]),),
        text="Sunny.",
        thinking="First, the sky.\n\nThen, the wind.",
        thinks=True,
    ),
    "hidden_thinking": Case(  # thinking on, not shown: signed and sent back, never read
        (
            Turn.tool_calls(PARIS, thinking="Ask the tool."),
            Turn.text("Sunny.", thinking="Answer."),
        ),
        text="Sunny.",
        rounds=2,
        calls=({"city": "Paris"},),
        thinks=True,
        shows=False,
        # Claude shows its thinking unless asked not to (wink sends no `display` then)
        per_provider={
            "anthropic": {"thinking": "Ask the tool.\n\nAnswer."},
            "bedrock": {"thinking": "Ask the tool.\n\nAnswer."},  # Claude, through Bedrock
        },
    ),
    "redacted_thinking": Case(
        (Turn.text("Sunny.", thinking=[EmulatedThinking("hidden", redacted=True), "Shown."]),),
        text="Sunny.",
        thinking="Shown.",
        thinks=True,
    ),
    "tool_calls": Case(
        (
            Turn.tool_calls(
                PARIS, EmulatedToolCall("weather", {"city": "Lyon"}), text="Checking both."
            ),
            Turn.text("Paris is sunny; Lyon has no station."),
        ),
        text="Paris is sunny; Lyon has no station.",
        rounds=2,
        calls=({"city": "Paris"}, {"city": "Lyon"}),
    ),
    "tool_calls_thinking": Case(
        (
            Turn.tool_calls(PARIS, thinking="Ask the tool."),
            Turn.text("Sunny.", thinking="Answer."),
        ),
        text="Sunny.",
        thinking="Ask the tool.\n\nAnswer.",
        rounds=2,
        calls=({"city": "Paris"},),
        thinks=True,
    ),
    "signed_steps": Case(  # Gemini 3 signs every step and checks the signature comes back
        (Turn.tool_calls(PARIS), Turn.text("Sunny.")),
        text="Sunny.",
        rounds=2,
        calls=({"city": "Paris"},),
        thinks=True,
        models={"google": "gemini-3-flash-preview"},
    ),
    "json": Case(
        (Turn.json({"city": "Paris", "degrees": 21}),),
        text='{"city":"Paris","degrees":21}',
        output=Answer(city="Paris", degrees=21),
        structured=True,
    ),
    "length": Case(
        (Turn.text("Sunny in Par", finish="length"),),
        error={"error": "OutputTruncatedError", "finish": "length", "partial": "Sunny in Par"},
    ),
    "content_filter": Case(
        (Turn.text("Sunny", finish="content_filter"),),
        error={"error": "ContentFilteredError", "finish": "content_filter", "partial": "Sunny"},
        # Anthropic has no filter finish: it stops with `refusal`
        per_provider={"anthropic": {"error": "RefusalError", "finish": "refusal"}},
    ),
    "refusal": Case(
        (Turn.refusal("I can't help with that."),),
        error={"error": "RefusalError", "finish": "refusal", "refusal": "I can't help with that."},
        # Gemini has no refusal: it blocks the prompt
        per_provider={
            "google": {
                "error": "ContentFilteredError",
                "finish": "content_filter",
                "refusal": None,
            },
            # nor has Bedrock's Converse: it ends the turn `content_filtered`
            "bedrock": {
                "error": "ContentFilteredError",
                "finish": "content_filter",
                "refusal": None,
            },
        },
    ),
    "pause": Case(  # Anthropic continues a paused turn; the other wires answer it as stop
        (Turn.paused("Searching the web."), Turn.text("Found it: sunny.")),
        text="Searching the web.",
        per_provider={"anthropic": {"text": "Found it: sunny.", "rounds": 2}},
    ),
}


@dataclass
class Run:
    """What one evaluation came to, in neutral terms, and the deltas of a streamed one."""

    outcome: dict[str, Any]
    text_deltas: str = ""
    thinking_deltas: str = ""


def _run(provider: str, case: Case, emu: ProviderEmulator, *, streamed: bool) -> Run:
    model = case.models.get(provider) or (THINKING_MODELS if case.thinks else MODELS)[provider]
    thinking = None
    if case.thinks:
        thinking = Thinking(effort="high", budget_tokens=2048, show=case.shows)
    adapter = create_adapter(
        f"{provider}:{model}",
        base_url=emu.base_url(provider),  # type: ignore[arg-type]
        api_key=KEY,
        retry_policy=NO_RETRY,
        thinking=thinking,
    )
    prompt = make_prompt(Answer if case.structured else None)
    session = Session()
    run = Run({})
    try:
        with adapter:
            if not streamed:
                response = adapter.evaluate(prompt, session=session)
            else:
                with adapter.stream(prompt, session=session) as stream:
                    for event in stream:
                        if isinstance(event, TextDelta):
                            run.text_deltas += event.text
                        elif isinstance(event, ThinkingDelta):
                            run.thinking_deltas += event.text
                response = stream.response
    except PromptEvaluationError as error:
        run.outcome = {
            "error": type(error).__name__,
            "phase": error.phase,
            "finish": error.finish_reason,
            "partial": error.partial_text,
            "refusal": error.refusal,
        }
        return run
    run.outcome = {
        "text": response.text,
        "thinking": response.thinking,
        "output": response.output,
        "usage": response.usage,
        "finish": response.finish_reason,
        "rounds": response.rounds,
        "calls": tuple(vars(event.params) for event in session[ToolInvoked]),
    }
    return run


def _expected(provider: str, case: Case) -> dict[str, Any]:
    if case.error is not None:
        return {"phase": "response", **case.error, **case.per_provider.get(provider, {})}
    expected = {
        "text": case.text,
        "thinking": case.thinking if provider in SHOWS_THINKING else None,
        "output": case.output,
        "finish": "stop",
        "rounds": case.rounds,
        "calls": case.calls,
    }
    if case.usage is not None:
        expected["usage"] = case.usage
    return {**expected, **case.per_provider.get(provider, {})}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", CASES)
def test_a_turn_streamed_is_the_turn_evaluated(
    emu: ProviderEmulator, provider: str, kind: str
) -> None:
    case = CASES[kind]
    emu.set_streaming(chunk_size=4)
    emu.enqueue(*case.script)
    evaluated = _run(provider, case, emu, streamed=False)
    emu.reset()
    emu.enqueue(*case.script)
    streamed = _run(provider, case, emu, streamed=True)

    assert streamed.outcome == evaluated.outcome
    expected = _expected(provider, case)
    assert {key: evaluated.outcome.get(key) for key in expected} == expected
    assert set(emu.stats.responses) == {200}  # nothing failed, so nothing was retried
    if "text" in expected:  # thinking streams as thinking, never as text
        assert streamed.text_deltas.endswith(expected["text"])
        shown = expected["thinking"] or ""
        assert streamed.thinking_deltas.replace("\n", "") == shown.replace("\n", "")
