"""A conversation carried on, and the tools that wait for a person, for the loop.

An evaluation with `history` starts from that transcript: the rendered prompt is the
next user turn, unless the history ends in calls awaiting approval; then the person's
answers (`approvals`) are the next turn: an approved call runs, a denied one is answered
with a failed result, a `ToolResult` is sent as given (docs/approvals.md). A round whose
calls include some that need approval runs the others and stops the evaluation there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..foundation.errors import InvalidArgumentError
from ..foundation.events import ToolInvoked
from ..foundation.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from ..foundation.results import ToolResult
from ..foundation.transcript import Transcript
from .executor import ToolExecution, ToolExecutor

__all__ = [
    "ANSWER_HELD",
    "ANSWER_TAKEN",
    "DENIED",
    "Approvals",
    "held_calls",
    "in_call_order",
    "resume",
]

Approvals = Mapping[str, "bool | ToolResult[Any]"]
"""A person's answers to the calls awaiting approval, by call id."""

DENIED = "The user denied this call; it was not run."
ANSWER_TAKEN = "Final answer received."  # the output tool's result, kept in the transcript
ANSWER_HELD = (
    "Not final yet: other calls of this turn wait for the user's approval. Give the final "
    "answer again once their results are in."
)


def held_calls(executor: ToolExecutor, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls of a round that must wait for a person (in call order)."""
    return [call for call in calls if executor.needs_approval(call)]


async def resume(
    executor: ToolExecutor,
    history: Transcript,
    approvals: Approvals,
    on_finished: Callable[[ToolInvoked], None] | None,
) -> list[ToolExecution]:
    """Answer the calls `history` ends with, as `approvals` says (checked against its
    pending calls at the call): run the approved ones, settle the others."""
    turn = _last_turn(history)
    waiting = {pending.id for pending in history.pending}
    calls = [call for call in turn.tool_calls if call.id in waiting]
    approved = [call for call in calls if approvals[call.id] is True]
    for call in approved:
        if call.name not in executor.tools:
            offered = ", ".join(sorted(executor.tools)) or "none"
            raise InvalidArgumentError(
                f"call {call.id!r} of {call.name!r} was approved, but the prompt offers no "
                f"such tool (it offers: {offered}); the prompt supplies the tools",
                argument="approvals",
            )
    answered: list[tuple[ToolCall, ToolResult[Any]]] = []
    for call in calls:
        answer = approvals[call.id]
        if answer is False:
            answered.append((call, ToolResult[Any].error(DENIED)))
        elif isinstance(answer, ToolResult):
            answered.append((call, answer))
    done = executor.settle(answered, on_finished)
    if approved:
        done += await executor.execute(approved, on_finished)
    return done


def in_call_order(messages: list[Message]) -> None:
    """Put the tool results that end `messages` in the order of the calls they answer
    (a resumed turn is answered in two goes; Gemini pairs results with calls in order)."""
    start = len(messages)
    while start > 0 and isinstance(messages[start - 1], ToolResultMessage):
        start -= 1
    turn = messages[start - 1] if start > 0 else None
    if not isinstance(turn, AssistantMessage):
        return
    order = {call.id: index for index, call in enumerate(turn.tool_calls)}
    results = messages[start:]
    results.sort(key=lambda result: order.get(getattr(result, "call_id", ""), len(order)))
    messages[start:] = results


def _last_turn(history: Transcript) -> AssistantMessage:
    for message in reversed(history.messages):
        if isinstance(message, AssistantMessage):
            return message
    raise AssertionError("a transcript with pending calls has a model turn")  # pragma: no cover
