"""What of a transcript travels to a provider that did not make it: the rules written once,
for a fallback mid-run and for a conversation continued on another provider.

Every model turn names what made it (`AssistantMessage.origin`, the serving adapter's
name); to any other adapter it is foreign (`is_foreign`). A foreign turn keeps its text
and tool calls but loses its provider-bound data (thinking signatures, reasoning items,
encrypted content, native items): only the provider that made them can read them. The
built-in tools the provider ran in it (web searches, code runs) go too, with a note on the
`wink.portable` logger: another provider can neither read nor rerun them; the answer's text
and citations stay. A foreign turn left with nothing (thinking alone, a paused turn's server
blocks) is left out. A call id the target does not accept, or that repeats an earlier
one, gets a stable new id, and so does its result. Data the target needs on calls it did
not make (Gemini's placeholder signature) is added.

A model's own answer may repeat a call id too (two calls with one id, or an id of an
earlier turn: some OpenAI-compatible servers count from `call_0` in every answer), which
Anthropic refuses back (400 "`tool_use` ids must be unique") and which leaves results
ambiguous: `distinct_call_ids` renames each repeat as the answer arrives, before any call
runs, so the call, its result and its echo all carry the new id (docs/tools.md).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .messages import AssistantMessage, Message, ModelResponse, ToolCall, ToolResultMessage

__all__ = [
    "PORTABLE_CALL_IDS",
    "CallIdRules",
    "distinct_call_ids",
    "is_foreign",
    "portable_messages",
]

_log = logging.getLogger("wink.portable")

_MAX_CALL_ID = 40  # OpenAI's limit on the length of a call id
PORTABLE_CALL_IDS = re.compile(rf"[A-Za-z0-9_-]{{1,{_MAX_CALL_ID}}}")
"""A call id every provider takes: Anthropic's pattern, within OpenAI's 40 characters."""


@dataclass(frozen=True, slots=True)
class CallIdRules:
    """What a provider takes in a turn it did not make: the tool call ids it accepts
    (`pattern`), and the data it needs on the first call of such a turn
    (`foreign_call_data`: Gemini 3 wants a documented placeholder signature)."""

    pattern: re.Pattern[str] = PORTABLE_CALL_IDS
    foreign_call_data: Mapping[str, Any] | None = None


def is_foreign(turn: AssistantMessage, origin: str) -> bool:
    """Whether `turn` was made by something other than the adapter named `origin` (a turn
    of unknown origin is foreign to every adapter)."""
    return turn.origin != origin


def portable_messages(
    messages: tuple[Message, ...], origin: str, rules: CallIdRules
) -> tuple[Message, ...]:
    """`messages` as the adapter named `origin`, whose provider has `rules`, can take them;
    `messages` itself when every model turn is its own."""
    out: list[Message] = []
    seen: set[str] = set()
    renamed: dict[str, str] = {}  # the latest turn's renamed calls, for its results
    changed = False
    for message in messages:
        if isinstance(message, ToolResultMessage):
            new_id = renamed.get(message.call_id)
            if new_id is not None:
                message = replace(message, call_id=new_id)
        elif isinstance(message, AssistantMessage):
            renamed = {}
            if is_foreign(message, origin):
                changed = True
                if message.builtin_calls:
                    _note_dropped(message, origin)
                if not message.text and not message.tool_calls:
                    continue  # nothing another provider can read
                message = _foreign(message, rules, seen, renamed)
            else:
                seen.update(call.id for call in message.tool_calls)
        out.append(message)
    return tuple(out) if changed else messages


def _foreign(
    message: AssistantMessage, rules: CallIdRules, seen: set[str], renamed: dict[str, str]
) -> AssistantMessage:
    calls: list[ToolCall] = []
    for call in message.tool_calls:
        call_id = call.id
        if not rules.pattern.fullmatch(call_id) or call_id in seen:
            digest = hashlib.sha256(f"{len(seen)}:{call_id}".encode()).hexdigest()
            call_id = renamed[call.id] = f"call_{digest[:24]}"
        seen.add(call_id)
        data = rules.foreign_call_data if not calls else None  # the first call of the turn
        calls.append(ToolCall(call_id, call.name, call.arguments, data))
    return AssistantMessage(
        text=message.text,
        tool_calls=tuple(calls),
        provider_data=None,
        origin=message.origin,
        citations=message.citations,
    )


def _note_dropped(message: AssistantMessage, origin: str) -> None:
    tools = ", ".join(sorted({call.tool for call in message.builtin_calls}))
    _log.info(
        "%d built-in tool call(s) (%s) of a turn made by %s are left out for %s, which "
        "cannot read them; the turn's text and citations go on",
        len(message.builtin_calls),
        tools,
        message.origin or "an unknown adapter",
        origin,
    )


def distinct_call_ids(response: ModelResponse, conversation: Iterable[Message]) -> ModelResponse:
    """`response` with each call whose id repeats an earlier call's (of the same answer, or
    of a model turn in `conversation`) given the id `<id>_<n>`, the lowest n from 2 not
    taken (a stable digest past 40 characters); `response` itself when no id repeats."""
    taken = {
        call.id
        for message in conversation
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    }
    calls: list[ToolCall] = []
    for call in response.tool_calls:
        if call.id in taken:
            call = replace(call, id=_unused(call.id, taken))
        taken.add(call.id)
        calls.append(call)
    if all(new is old for new, old in zip(calls, response.tool_calls, strict=True)):
        return response
    return replace(response, tool_calls=tuple(calls))


def _unused(call_id: str, taken: set[str]) -> str:
    number = 2
    while True:
        candidate = f"{call_id}_{number}"
        if len(candidate) > _MAX_CALL_ID:
            digest = hashlib.sha256(f"{number}:{call_id}".encode()).hexdigest()
            candidate = f"call_{digest[:24]}"
        if candidate not in taken:
            return candidate
        number += 1
