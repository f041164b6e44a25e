"""A conversation carried on, system instructions, and tools that wait for a person, in
the loop itself (the scripted adapter: no wire). The four wire formats are in
tests/adapters/test_conversations.py and test_approvals.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.prompts import Answer, CityParams, weather
from wink import (
    ApprovalRequired,
    InvalidArgumentError,
    MarkdownSection,
    PendingToolCall,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptRenderError,
    PromptValidationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    Transcript,
)
from wink.core.agent.conversation import ANSWER_HELD, ANSWER_TAKEN, DENIED
from wink.core.foundation.messages import (
    AssistantMessage,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


@dataclass(frozen=True)
class Amount:
    euros: int


@dataclass(frozen=True)
class Customer:
    name: str


SENT: list[int] = []


def pay(params: Amount, *, context: ToolContext) -> ToolResult[str]:
    SENT.append(params.euros)
    return ToolResult.ok(f"paid {params.euros} EUR")


PAY = Tool("pay", "Pay an amount", pay, requires_approval=lambda p: p.euros > 100)
WEATHER = Tool("weather", "Weather by city", weather)


def chat(text: str, *, instructions: str | None = None, output: type[Any] | None = None) -> Prompt:
    section = MarkdownSection(key="m", title="Message", template=text, tools=[PAY, WEATHER])
    return Prompt(name="chat", sections=[section], instructions=instructions, output_type=output)


@pytest.fixture(autouse=True)
def nothing_sent() -> None:
    SENT.clear()


# --- history


def test_a_continued_conversation_sends_the_history_then_the_new_user_turn() -> None:
    adapter = ScriptedAdapter([final("Hello, Ada."), final("You are Ada.")])
    first = adapter.evaluate(chat("I am Ada."))
    assert [type(m).__name__ for m in first.transcript] == ["UserMessage", "AssistantMessage"]
    second = adapter.evaluate(chat("Who am I?"), history=first.transcript)
    sent = adapter.requests[1].messages
    assert sent[:2] == first.transcript.messages
    assert sent[2] == UserMessage("## Message\n\nWho am I?")
    assert second.transcript[:3] == sent
    assert second.transcript[3] == AssistantMessage("You are Ada.", origin="scripted:test")


def test_the_transcript_holds_tool_rounds_failures_and_the_answer() -> None:
    adapter = ScriptedAdapter(
        [
            tool_turn(call("weather", {"city": "Paris"}, id="c1"), call("weather", {"city": "X"})),
            final("Sunny in Paris."),
        ]
    )
    transcript = adapter.evaluate(chat("Weather?")).transcript
    kinds = [type(m).__name__ for m in transcript]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        *["ToolResultMessage"] * 2,
        "AssistantMessage",
    ]
    failed = transcript[3]
    assert isinstance(failed, ToolResultMessage)
    assert not failed.success
    assert transcript.pending == ()
    assert Transcript.from_json(transcript.to_json()) == transcript


def test_a_structured_answer_through_the_output_tool_is_answered_in_the_transcript() -> None:
    """So the conversation can go on: every call of the transcript has its result."""
    answer = call("final_result_Answer", {"city": "Paris", "degrees": 21}, id="out")
    adapter = ScriptedAdapter([tool_turn(answer), final("More?")])
    response = adapter.evaluate(chat("Weather?", output=Answer))
    assert response.output == Answer("Paris", 21)
    assert response.transcript[-1] == ToolResultMessage("out", "final_result_Answer", ANSWER_TAKEN)
    adapter.evaluate(chat("Thanks."), history=response.transcript)


def test_a_history_is_checked_before_anything_is_sent() -> None:
    adapter = ScriptedAdapter([final("never")])
    with pytest.raises(InvalidArgumentError, match="history must be a wink Transcript"):
        adapter.evaluate(chat("Hi"), history=[UserMessage("Hi")])  # type: ignore[arg-type]
    assert adapter.requests == []


# --- instructions


def test_instructions_go_first_filled_from_the_bound_params_and_stay_out_of_the_transcript() -> (
    None
):
    adapter = ScriptedAdapter([final("Hi Ada."), final("Bye Ada.")])
    prompt = chat("Hi", instructions="You help ${name}.").bind(Customer("Ada"))
    first = adapter.evaluate(prompt)
    assert adapter.requests[0].messages[0] == SystemMessage("You help Ada.")
    assert not any(isinstance(m, SystemMessage) for m in first.transcript)
    later = chat("Bye", instructions="  Be brief with ${name}.\n").bind(Customer("Ada"))
    adapter.evaluate(later, history=first.transcript)
    sent = adapter.requests[1].messages
    assert [m for m in sent if isinstance(m, SystemMessage)] == [
        SystemMessage("Be brief with Ada.")
    ]


def test_instructions_are_checked_like_a_template() -> None:
    with pytest.raises(PromptValidationError, match="malformed placeholder in the instructions"):
        chat("Hi", instructions="Cost: $5")
    with pytest.raises(PromptValidationError, match="instructions must be a string"):
        chat("Hi", instructions=3)  # type: ignore[arg-type]
    with pytest.raises(PromptRenderError, match=r"placeholder \$\{name\} of the instructions"):
        chat("Hi", instructions="You help ${name}.").render()
    assert chat("Hi", instructions="  ").render().instructions is None


# --- approvals


def waiting_run(session: Session | None = None) -> tuple[ScriptedAdapter, Any]:
    """The model pays 500 (needs approval) and checks the weather (runs) in one turn."""
    adapter = ScriptedAdapter(
        [
            tool_turn(
                call("pay", {"euros": 500}, id="big"),
                call("weather", {"city": "Paris"}, id="w"),
                call("pay", {"euros": 5}, id="small"),
            )
        ]
    )
    return adapter, adapter.evaluate(
        chat("Pay the bill."), session=session if session is not None else Session()
    )


def test_a_call_that_needs_approval_ends_the_evaluation_after_the_others_ran() -> None:
    session = Session()
    adapter, response = waiting_run(session)
    assert response.pending == (PendingToolCall("big", "pay", {"euros": 500}),)
    assert response.transcript.pending == response.pending
    assert response.finish_reason == "tool_calls"
    assert response.output is None
    assert SENT == [5]  # the small payment ran, the big one waits
    assert [event.call_id for event in session[ToolInvoked]] == ["w", "small"]
    (stopped,) = session[ApprovalRequired]
    assert (stopped.round, stopped.calls) == (1, response.pending)
    assert len(session[PromptExecuted]) == 1
    assert len(adapter.requests) == 1


def resume(answer: bool | ToolResult[Any]) -> tuple[ScriptedAdapter, Any, Session]:
    _, waiting = waiting_run()
    adapter = ScriptedAdapter([final("Done.")])
    session = Session()
    response = adapter.evaluate(
        chat("ignored: the person's answers are the next turn"),
        session=session,
        history=Transcript.from_json(waiting.transcript.to_json()),
        approvals={"big": answer},
    )
    return adapter, response, session


def test_an_approved_call_runs_and_the_model_goes_on() -> None:
    adapter, response, session = resume(True)
    assert SENT == [5, 500]
    sent = adapter.requests[0].messages
    assert not any(isinstance(m, UserMessage) for m in sent[1:])  # no new user turn
    results = [m for m in sent if isinstance(m, ToolResultMessage)]
    assert [r.call_id for r in results] == ["big", "w", "small"]  # in the order of the calls
    assert results[0].content == '"paid 500 EUR"'
    assert response.text == "Done."
    assert [event.call_id for event in response.tool_invocations] == ["big"]
    assert session[ToolInvoked][0].result.success


def test_a_denied_call_is_a_failed_result_and_does_not_run() -> None:
    adapter, _, session = resume(False)
    assert SENT == [5]
    denied = adapter.requests[0].messages[2]
    assert denied == ToolResultMessage("big", "pay", DENIED, success=False)
    (event,) = session[ToolInvoked]
    assert not event.result.success
    assert event.params == Amount(500)


def test_a_result_given_by_the_person_is_sent_as_given() -> None:
    adapter, _, _ = resume(ToolResult.error("paid by hand, do not pay again"))
    assert SENT == [5]
    given = adapter.requests[0].messages[2]
    assert given == ToolResultMessage("big", "pay", "paid by hand, do not pay again", success=False)


@pytest.mark.parametrize(
    ("approvals", "problem"),
    [
        (None, "ends in calls awaiting approval"),
        ({}, "no answer for the call"),
        ({"big": True, "nope": True}, "do not await approval: 'nope'"),
    ],
)
def test_a_missing_or_unknown_call_id_is_refused_before_anything_is_sent(
    approvals: dict[str, Any] | None, problem: str
) -> None:
    _, waiting = waiting_run()
    adapter = ScriptedAdapter([final("never")])
    with pytest.raises(InvalidArgumentError, match=problem):
        adapter.evaluate(chat("Go"), history=waiting.transcript, approvals=approvals)
    assert adapter.requests == []
    assert SENT == [5]


def test_approving_a_tool_the_prompt_does_not_offer_is_refused_before_anything_is_sent() -> None:
    _, waiting = waiting_run()
    adapter = ScriptedAdapter([final("never")])
    other = Prompt(name="other", sections=[MarkdownSection(key="m", title="M", template="Go")])
    with pytest.raises(InvalidArgumentError, match="offers no such tool"):
        adapter.evaluate(other, history=waiting.transcript, approvals={"big": True})
    assert adapter.requests == []


def test_an_output_answer_beside_a_call_that_waits_is_not_final() -> None:
    answer = call("final_result_Answer", {"city": "Paris", "degrees": 21}, id="out")
    adapter = ScriptedAdapter([tool_turn(call("pay", {"euros": 500}, id="big"), answer)])
    response = adapter.evaluate(chat("Pay, then answer.", output=Answer))
    assert response.output is None
    assert [p.id for p in response.pending] == ["big"]
    assert response.transcript[-1] == ToolResultMessage("out", "final_result_Answer", ANSWER_HELD)


def test_requires_approval_is_true_false_or_a_function_of_the_params() -> None:
    always = Tool("always", "Needs approval", weather, requires_approval=True)
    assert always.needs_approval(CityParams("Paris"))
    assert not WEATHER.needs_approval(CityParams("Paris"))
    assert not PAY.needs_approval(Amount(100))
    assert PAY.needs_approval(Amount(101))
    with pytest.raises(PromptValidationError, match="requires_approval takes True, False"):
        Tool("bad", "Bad", weather, requires_approval="yes")  # type: ignore[arg-type]
    sloppy = Tool("sloppy", "Sloppy", weather, requires_approval=lambda p: "maybe")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="returned a str, not a bool"):
        sloppy.needs_approval(CityParams("Paris"))


def test_a_call_that_cannot_run_never_waits_for_approval() -> None:
    """Invalid arguments fail as any call does: the model reads why."""
    adapter = ScriptedAdapter([tool_turn(call("pay", {"euros": "lots"})), final("Sorry.")])
    response = adapter.evaluate(chat("Pay."))
    assert response.pending == ()
    assert response.text == "Sorry."
    assert not response.tool_invocations[0].result.success


def test_a_predicate_that_raises_stops_the_evaluation_without_running_the_tool() -> None:
    def broken(params: Amount) -> bool:
        raise RuntimeError("no policy loaded")

    risky = Tool("pay", "Pay", pay, requires_approval=broken)
    prompt = Prompt(
        name="p", sections=[MarkdownSection(key="m", title="M", template="Pay", tools=[risky])]
    )
    adapter = ScriptedAdapter([tool_turn(call("pay", {"euros": 1}))])
    with pytest.raises(PromptEvaluationError, match="no policy loaded") as caught:
        adapter.evaluate(prompt)
    assert caught.value.phase == "tool"
    assert SENT == []
