"""Tools that wait for a person, on the four wire formats, streamed and not, and resumed
in another process after a JSON round trip of the transcript."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.adapters import KEY, MODELS, PROVIDERS, make_adapter
from wink import (
    ApprovalRequired,
    InvalidArgumentError,
    MarkdownSection,
    PendingToolCall,
    Prompt,
    PromptResponse,
    RoundFinished,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    Transcript,
    UnsupportedSettingWarning,
)
from wink.adapters.base import ProviderAdapter
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn


@dataclass(frozen=True)
class Transfer:
    euros: int


def transfer(params: Transfer, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"sent {params.euros} EUR")


PROMPT = Prompt(
    name="bank",
    sections=[
        MarkdownSection(
            key="m",
            title="Message",
            template="Pay the rent and the coffee.",
            tools=[
                Tool("transfer", "Send money", transfer, requires_approval=lambda p: p.euros > 100)
            ],
        )
    ],
)
RENT = EmulatedToolCall("transfer", {"euros": 900}, id="call_rent")
COFFEE = EmulatedToolCall("transfer", {"euros": 3}, id="call_coffee")
ASKS = Turn.tool_calls(RENT, COFFEE, text="Paying both.")


def run(adapter: ProviderAdapter, how: str, **call: Any) -> tuple[PromptResponse[Any], list[Any]]:
    """(the response, the events a stream yielded: none for `evaluate`)."""
    if how == "evaluate":
        return adapter.evaluate(PROMPT, **call), []
    if how == "stream":
        with adapter.stream(PROMPT, **call) as stream:
            events = list(stream)
        return stream.response, events

    async def streamed() -> tuple[PromptResponse[Any], list[Any]]:
        async with adapter.stream_async(PROMPT, **call) as stream:
            events = [event async for event in stream]
        return stream.response, events

    return asyncio.run(streamed())


@pytest.mark.parametrize("how", ["evaluate", "stream", "stream_async"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_call_that_needs_approval_stops_the_run_after_the_others(provider: str, how: str) -> None:
    session = Session()
    with ProviderEmulator([ASKS]) as emu:
        response, events = run(make_adapter(provider, emu), how, session=session)
    (waiting,) = response.pending
    assert (waiting.name, waiting.arguments) == ("transfer", {"euros": 900})
    assert response.text == "Paying both."
    assert response.transcript.pending == response.pending
    (ran,) = session[ToolInvoked]
    assert ran.result.message == "sent 3 EUR"
    assert session[ApprovalRequired][0].calls == response.pending
    if how != "evaluate":
        assert isinstance(events[-2], RoundFinished)
        adapter_name = f"{provider}:{MODELS[provider]}"
        assert events[-1] == ApprovalRequired("bank", adapter_name, 1, response.pending)


DENIED_ON_THE_WIRE = {
    "openai": lambda body: body["messages"][-2],
    "openai-responses": lambda body: body["input"][-2],
    "anthropic": lambda body: body["messages"][-1]["content"][0],
    "google": lambda body: body["contents"][-1]["parts"][0],
}


def denied_form(provider: str, call_id: str) -> dict[str, Any]:
    text = "The user denied this call; it was not run."
    if provider == "openai":
        return {"role": "tool", "tool_call_id": call_id, "content": f"Error: {text}"}
    if provider == "openai-responses":
        return {"type": "function_call_output", "call_id": call_id, "output": f"Error: {text}"}
    if provider == "anthropic":
        return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": True}
    return {"functionResponse": {"name": "transfer", "response": {"error": text}}}


def waiting_on(provider: str, emu: ProviderEmulator) -> PromptResponse[Any]:
    emu.enqueue(ASKS)
    return make_adapter(provider, emu).evaluate(PROMPT)


@pytest.mark.parametrize("how", ["evaluate", "stream", "stream_async"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_denied_call_goes_back_in_the_providers_native_failure_form(
    provider: str, how: str
) -> None:
    with ProviderEmulator() as emu:
        waiting = waiting_on(provider, emu)
        emu.enqueue(Turn.text("I did not pay the rent."))
        rent = waiting.pending[0].id
        response, events = run(
            make_adapter(provider, emu), how, history=waiting.transcript, approvals={rent: False}
        )
        body = emu.requests[-1].body
    assert DENIED_ON_THE_WIRE[provider](body) == denied_form(provider, rent)
    assert response.text == "I did not pay the rent."
    assert response.pending == ()
    if how != "evaluate":
        assert isinstance(events[0], ToolInvoked)  # the person's answer, shown first
        assert not events[0].result.success


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_approved_call_runs_and_a_given_result_is_sent_as_given(provider: str) -> None:
    with ProviderEmulator() as emu:
        waiting = waiting_on(provider, emu)
        rent = waiting.pending[0].id
        emu.enqueue(Turn.text("Rent paid."), ASKS, Turn.text("Noted."))
        approved = make_adapter(provider, emu).evaluate(
            PROMPT, history=waiting.transcript, approvals={rent: True}
        )
        approved_results = [str(entry) for entry in emu.requests[-1].history][-2:]
        again = make_adapter(provider, emu).evaluate(PROMPT, history=approved.transcript)
        given = ToolResult(message="paid by cheque")
        make_adapter(provider, emu).evaluate(
            PROMPT, history=again.transcript, approvals={again.pending[0].id: given}
        )
        given_results = [str(entry) for entry in emu.requests[-1].history][-2:]
    assert [event.result.message for event in approved.tool_invocations] == ["sent 900 EUR"]
    assert approved_results == ["result transfer: sent 900 EUR", "result transfer: sent 3 EUR"]
    assert given_results == ["result transfer: paid by cheque", "result transfer: sent 3 EUR"]


@pytest.mark.parametrize(
    ("answers", "problem"),
    [(None, "awaiting approval"), ({}, "no answer"), ({"call_x": True}, "do not await")],
)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_missing_or_unknown_call_id_is_refused_before_anything_is_sent(
    provider: str, answers: dict[str, Any] | None, problem: str
) -> None:
    with ProviderEmulator() as emu:
        waiting = waiting_on(provider, emu)
        adapter = make_adapter(provider, emu)
        with pytest.raises(InvalidArgumentError, match=problem):
            adapter.stream(PROMPT, history=waiting.transcript, approvals=answers)
        with pytest.raises(InvalidArgumentError, match=problem):
            adapter.evaluate(PROMPT, history=waiting.transcript, approvals=answers)
        assert len(emu.requests) == 1  # only the run that stopped


# --- resumed in another process, after a JSON round trip


RESUME = textwrap.dedent(
    """
    import json, sys
    from tests.adapters.test_approvals import PROMPT
    from tests.helpers.adapters import KEY, MODELS
    from wink import Transcript, create_adapter

    provider, base_url, path = sys.argv[1:]
    history = Transcript.from_json(open(path, encoding="utf-8").read())
    adapter = create_adapter(f"{provider}:{MODELS[provider]}", base_url=base_url, api_key=KEY)
    approvals = {call.id: call.arguments["euros"] < 1000 for call in history.pending}
    response = adapter.evaluate(PROMPT, history=history, approvals=approvals)
    ran = [event.result.message for event in response.tool_invocations]
    print(json.dumps({"text": response.text, "ran": ran}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_approval_resumes_in_another_process_after_a_json_round_trip(
    provider: str, tmp_path: Path
) -> None:
    """Stopped on one provider; saved; approved and resumed by another process, on the
    next provider of the list."""
    resumer = PROVIDERS[(PROVIDERS.index(provider) + 1) % len(PROVIDERS)]
    saved = tmp_path / "transcript.json"
    with ProviderEmulator() as emu:
        waiting = waiting_on(provider, emu)
        saved.write_text(waiting.transcript.to_json(), encoding="utf-8")
        emu.enqueue(Turn.text("Rent paid."))
        done = subprocess.run(
            [sys.executable, "-c", RESUME, resumer, emu.base_url(resumer), str(saved)],  # type: ignore[arg-type]
            capture_output=True,
            text=True,
            check=False,
            cwd=Path(__file__).parents[2],
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        history = [str(entry) for entry in emu.requests[-1].history]
    assert json.loads(done.stdout) == {"text": "Rent paid.", "ran": ["sent 900 EUR"]}
    assert history[-2:] == ["result transfer: sent 900 EUR", "result transfer: sent 3 EUR"]
    assert KEY not in saved.read_text(encoding="utf-8")
    assert Transcript.from_json(saved.read_text(encoding="utf-8")).pending == (
        PendingToolCall(waiting.pending[0].id, "transfer", {"euros": 900}),
    )


@pytest.mark.parametrize("first", ["openai", "openai-responses", "google"])
def test_calls_another_provider_made_are_approved_on_claude_with_thinking(first: str) -> None:
    """The tool round another provider started goes on on Claude with thinking on: that
    request goes out with thinking off (Claude's API refuses another model's tool turn
    with thinking on, and no signature can be made up), and says so; the next user
    message has thinking again."""
    with ProviderEmulator() as emu:
        waiting = waiting_on(first, emu)
        emu.enqueue(Turn.text("Rent paid.", thinking="Both went out."), Turn.text("Noted."))
        claude = make_adapter("anthropic", emu, thinking=2048)
        with pytest.warns(UnsupportedSettingWarning, match="thinking is off"):
            approved = claude.evaluate(
                PROMPT, history=waiting.transcript, approvals={waiting.pending[0].id: True}
            )
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnsupportedSettingWarning)
            claude.evaluate(PROMPT, history=approved.transcript)
        bodies = [request.body for request in emu.requests[-2:]]
    assert approved.text == "Rent paid."
    assert "thinking" not in bodies[0]
    assert bodies[1]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
