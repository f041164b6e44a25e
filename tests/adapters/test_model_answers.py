"""What a model may answer that a provider refuses back, and what the caller may not send:
the run goes on when the model did it (empty text blocks beside calls, two calls with one
id), and a prompt with nothing to answer is the caller's `InvalidArgumentError` before
anything is sent. Each against the emulator, which refuses what the real API refuses."""

from __future__ import annotations

import pytest

from tests.helpers.adapters import KEY, MODELS, PROVIDERS, Recorder
from tests.helpers.media import png
from tests.helpers.prompts import make_prompt
from wink import (
    AdapterSwitched,
    ConfigurationError,
    FallbackAdapter,
    Image,
    InvalidArgumentError,
    Prompt,
    Session,
    create_adapter,
)
from wink.core.agent.turns import check_not_empty
from wink.core.foundation.content import CachePoint, TextPart
from wink.core.foundation.messages import AssistantMessage, ToolResultMessage
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

PARIS = EmulatedToolCall("weather", {"city": "Paris"})


def _adapter(provider: str, emu: ProviderEmulator):  # type: ignore[no-untyped-def]
    return create_adapter(
        f"{provider}:{MODELS[provider]}", base_url=emu.base_url(provider), api_key=KEY
    )


@pytest.mark.parametrize("blank", ["", "\n\n"])
def test_claude_s_blank_text_beside_its_calls_is_not_sent_back(blank: str) -> None:
    """Claude answers `{"type": "text", "text": ""}` (or only newlines) beside `tool_use`;
    the real API refuses that block back with a 400, so the echo leaves it out."""
    script = [Turn.tool_calls(PARIS, text=blank), Turn.text("Sunny.")]
    with ProviderEmulator(script) as emu:
        response = _adapter("anthropic", emu).evaluate(make_prompt(), session=Session())
        echoed = emu.requests[1].body["messages"][1]
    assert response.text == "Sunny."
    assert [block["type"] for block in echoed["content"]] == ["tool_use"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_prompt_with_nothing_to_answer_is_refused_before_sending(provider: str) -> None:
    """Instructions and no section: the user turn would be empty, which Anthropic and
    Gemini refuse with a 400 (the emulator too), and which no model can answer."""
    blank = Prompt(name="blank", sections=[], instructions="You answer questions.")
    with ProviderEmulator([Turn.text("unused")]) as emu:
        adapter = _adapter(provider, emu)
        with pytest.raises(InvalidArgumentError, match="the prompt renders to no text") as caught:
            adapter.evaluate(blank, session=Session())
        assert emu.requests == []
    assert caught.value.argument == "prompt"


@pytest.mark.parametrize("text", ["", " \n\t"])
def test_a_blank_first_turn_is_refused_but_not_one_with_an_attachment(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="the prompt renders to"):
        check_not_empty(text, (TextPart(text),), ())
    with pytest.raises(InvalidArgumentError, match="the prompt renders to"):
        check_not_empty(text, (TextPart(text), CachePoint()), ())
    check_not_empty(text, (TextPart(text),), (Image.from_bytes(png(), "image/png"),))
    check_not_empty("Hi.", (TextPart("Hi."),), ())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_two_calls_with_one_id_both_run_and_both_results_go_back(provider: str) -> None:
    """A model (or an OpenAI-compatible server) may give two calls one id, or reuse an id of
    an earlier turn: every call runs, and the repeats are renamed `<id>_2`, ... before any
    runs, so each result answers its own call in a conversation the provider takes."""
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("weather", {"city": "Paris"}, id="call_1"),
            EmulatedToolCall("weather", {"city": "Lyon"}, id="call_1"),
        ),
        Turn.tool_calls(EmulatedToolCall("weather", {"city": "Nice"}, id="call_1")),
        Turn.text("Sunny in Paris."),
    )
    with ProviderEmulator(recorder, google_function_call_ids=True) as emu:
        response = _adapter(provider, emu).evaluate(make_prompt(), session=Session())
    assert response.text == "Sunny in Paris."
    assert [i.params.city for i in response.tool_invocations] == ["Paris", "Lyon", "Nice"]  # type: ignore[union-attr]
    second, third = recorder.seen[1], recorder.seen[2]
    assert [(r.call_id, r.text) for r in second.tool_results] == [
        ("call_1", second.tool_results[0].text),
        ("call_1_2", second.tool_results[1].text),
    ]
    assert "no station in Lyon" in second.tool_results[1].text
    assert third.tool_results[-1].call_id == "call_1_3"
    calls = [m for m in response.transcript if isinstance(m, AssistantMessage)]
    assert [c.id for m in calls for c in m.tool_calls] == ["call_1", "call_1_2", "call_1_3"]
    results = [m for m in response.transcript if isinstance(m, ToolResultMessage)]
    assert [r.call_id for r in results] == ["call_1", "call_1_2", "call_1_3"]


def test_a_caller_s_history_with_two_calls_of_one_id_is_still_refused() -> None:
    """The caller's own transcript is checked before sending: that is the caller's error."""
    from wink import Transcript
    from wink.core.foundation.messages import ToolCall, UserMessage

    call = ToolCall("c1", "weather", {"city": "Paris"})
    with pytest.raises(InvalidArgumentError, match="two calls with the id 'c1'"):
        Transcript([UserMessage("Hi"), AssistantMessage(None, (call, call))])


# --- a missing key


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_fallback_moves_on_past_a_missing_key_as_past_a_401(
    no_keys: pytest.MonkeyPatch,
) -> None:
    """The key was there when the chain was made, and is gone at the request."""
    no_keys.setenv("ANTHROPIC_API_KEY", "there-when-built")
    with ProviderEmulator([Turn.text("From OpenAI.")]) as emu:
        keyless = create_adapter("anthropic:claude-sonnet-4-6", base_url=emu.base_url("anthropic"))
        no_keys.delenv("ANTHROPIC_API_KEY")
        chain = FallbackAdapter([keyless, _adapter("openai", emu)])
        session = Session()
        response = chain.evaluate(make_prompt(), session=session)
    assert response.text == "From OpenAI."
    [switched] = session[AdapterSwitched]
    assert isinstance(switched.error, ConfigurationError)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_batched_answer_with_two_calls_of_one_id_goes_on_too(provider: str) -> None:
    """A batch reads each answer as `evaluate` does: repeats renamed, every call run."""
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("weather", {"city": "Paris"}, id="call_1"),
            EmulatedToolCall("weather", {"city": "Lyon"}, id="call_1"),
        ),
        Turn.text("Sunny in Paris."),
    )
    with ProviderEmulator(recorder) as emu:
        adapter = _adapter(provider, emu)
        job = adapter.submit_batch([make_prompt()])
        while not job.finished:
            job = adapter.advance_batch(job)
        [result] = adapter.batch_results(job)
    assert not isinstance(result, Exception), result
    assert result.text == "Sunny in Paris."
    assert [r.call_id for r in recorder.seen[1].tool_results] == ["call_1", "call_1_2"]
