"""`wink demo`'s last step: a tool that asks a person before it runs.

The agent may send a storm alert to a city's subscribers, a call nobody wants made by
mistake: the tool is `requires_approval=True`, so the evaluation stops with the call
pending. The demo then decides as a policy would (alerts to at most 50,000 subscribers go
out), or, with `wink demo --ask`, asks at the terminal; it saves the transcript as JSON,
reads it back, and resumes the run with the answer (docs/approvals.md). Against the
emulator the model is scripted to send one alert, to 12,000 subscribers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import (
    Cost,
    MarkdownSection,
    PendingToolCall,
    Prompt,
    PromptRendered,
    ProviderAdapter,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    Transcript,
    WinkError,
)
from .testing import EmulatedToolCall, ProviderEmulator, Turn

if TYPE_CHECKING:
    from .demo import Screen

__all__ = [
    "ALERT_LIMIT",
    "ALERT_SCRIPT",
    "NOT_SENT",
    "SENT",
    "ask_at_the_terminal",
    "policy",
    "run_approval_step",
]

ALERT_LIMIT = 50_000
ALERT_SCRIPT: list[Turn] = [
    Turn.tool_calls(
        EmulatedToolCall("send_alert", {"city": "Paris", "subscribers": 12000}),
        text="A storm is coming: I will warn Paris.",
    )
]
SENT = Turn.text("The storm alert went out to 12,000 subscribers in Paris.")
NOT_SENT = Turn.text("I did not send the storm alert: it was not approved.")


@dataclass(frozen=True)
class AlertParams:
    city: str
    subscribers: int


def send_alert(params: AlertParams, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"alert sent to {params.subscribers} subscribers in {params.city}")


def build_alert_prompt() -> Prompt:
    task = MarkdownSection(
        key="task",
        title="Task",
        template="A storm reaches Paris tonight. Warn the people who asked to be told.",
        tools=[
            Tool(
                "send_alert",
                "Send a storm alert to a city's subscribers",
                send_alert,
                requires_approval=True,  # nobody wants one sent by mistake
            )
        ],
    )
    return Prompt(
        name="storm-alert",
        sections=[task],
        instructions="You run a weather service's alerts. Send an alert only when needed.",
    )


def policy(call: PendingToolCall) -> bool:
    """The demo's approval policy: alerts to at most `ALERT_LIMIT` subscribers go out."""
    subscribers = call.arguments.get("subscribers")
    return isinstance(subscribers, int) and subscribers <= ALERT_LIMIT


def ask_at_the_terminal(call: PendingToolCall) -> bool:
    """A person decides (`wink demo --ask`); no answer (end of input) is a no."""
    try:
        answer = input(f"  approve {call.name}? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def run_approval_step(
    screen: Screen,
    adapter: ProviderAdapter,
    emulator: ProviderEmulator | None,
    decide: Callable[[PendingToolCall], bool] | None = None,
) -> int:
    """Run the step; returns the exit code. `decide` answers each pending call (None: the
    demo's `policy`)."""
    from .demo import cost_line, describe_failure, format_arguments, show_event

    decider = decide or policy
    who = "you" if decide is not None else f"policy: at most {ALERT_LIMIT:,} subscribers"
    screen.line(("── ", "cyan"), "a tool that asks a person first")
    if emulator is not None:
        emulator.enqueue(*ALERT_SCRIPT)
    session = Session()
    shown = (PromptRendered, ToolInvoked)
    session.subscribe(lambda event: show_event(screen, event) if isinstance(event, shown) else None)
    prompt = build_alert_prompt()
    try:
        waiting = adapter.evaluate(prompt, session=session)
        answers: dict[str, bool | ToolResult[None]] = {}
        for call in waiting.pending:
            screen.line(
                ("⏸ ", "yellow"),
                f"{call.name}({format_arguments(call.arguments)}) waits for a person",
            )
            sys.stdout.flush()
            approved = decider(call)
            screen.line(f"  {who} → {'approved' if approved else 'denied'}")
            answers[call.id] = approved
        if emulator is not None:  # the scripted model reads the answer
            emulator.enqueue(SENT if all(answers.values()) else NOT_SENT)
        if not answers:  # a live model may answer without the tool
            screen.panel(waiting.text or "", title="answer", style="green")
            screen.line(cost_line(waiting.cost))
            return 0
        saved = waiting.transcript.to_json()
        screen.line("  the transcript, saved as JSON and read back, resumes the run")
        done = adapter.evaluate(
            prompt, session=session, history=Transcript.from_json(saved), approvals=answers
        )
    except WinkError as error:
        screen.line(("✘ evaluation failed: ", "red"), describe_failure(error))
        return 1
    screen.panel(done.text or "", title="answer after the approval", style="green")
    screen.line(cost_line(_step_cost(waiting.cost, done.cost)))
    return 0 if done.text else 1


def _step_cost(waiting: Cost | None, done: Cost | None) -> Cost | None:
    """What the step cost: the rounds before the approval and those after it (None when
    either is not priced: never a part shown as the whole)."""
    return waiting + done if waiting is not None and done is not None else None
