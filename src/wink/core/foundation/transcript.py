"""`Transcript`: the whole provider-neutral conversation of an evaluation.

A transcript holds the user turns (text, attachments), the model turns (text, tool calls,
thinking) and the tool results, failures included, in order. It is always one a provider
would take: it starts with a user turn, every tool result answers a call of the model
turn just before it, and every call is answered before the conversation goes on; only the
last model turn may have calls still open, which are then the calls awaiting a person's
approval (`pending`). What the adapter knows and the conversation does not (keys,
headers, settings, instructions) is never in it.

`to_json()` writes version 1 of its JSON format, `Transcript.from_json` reads it back
(`wink.core.foundation.transcript_json` has the format; docs/conversations.md documents
it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast, overload

from .checks import kind_of
from .errors import InvalidArgumentError
from .messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from .results import ToolResult
from .transcript_json import (
    TRANSCRIPT_VERSION,
    TranscriptMessage,
    dump_transcript,
    invalid,
    load_messages,
)

__all__ = [
    "TRANSCRIPT_VERSION",
    "PendingToolCall",
    "Transcript",
    "TranscriptMessage",
    "check_continuation",
    "pending_call",
]


@dataclass(frozen=True, slots=True)
class PendingToolCall:
    """A tool call the model made that waits for a person: approve it (True), deny it
    (False) or answer it yourself (a `ToolResult`) in `approvals={id: ...}`."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True, init=False, repr=False)
class Transcript:
    """The provider-neutral conversation of an evaluation (`response.transcript`).

    Immutable, `len()`-able, iterable over its messages; `to_json()` and
    `Transcript.from_json(text)` save and load it; `pending` are the calls that await
    approval. Pass it as `history=` to continue the conversation, on any provider.
    """

    messages: tuple[TranscriptMessage, ...]
    pending: tuple[PendingToolCall, ...] = field(compare=False, repr=False)

    def __init__(self, messages: Iterable[TranscriptMessage] = ()) -> None:
        given = cast(object, messages)
        if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
            raise InvalidArgumentError(
                f"Transcript takes a list of messages, got {kind_of(messages)} (to read "
                "JSON, use Transcript.from_json)",
                argument="messages",
            )
        checked = tuple(cast("Iterable[object]", given))
        object.__setattr__(self, "messages", checked)
        object.__setattr__(self, "pending", _check(checked))

    def __len__(self) -> int:
        return len(self.messages)

    def __repr__(self) -> str:
        waiting = f", {len(self.pending)} pending" if self.pending else ""
        return f"Transcript({len(self.messages)} messages{waiting})"

    def __iter__(self) -> Iterator[TranscriptMessage]:
        return iter(self.messages)

    @overload
    def __getitem__(self, index: int) -> TranscriptMessage: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TranscriptMessage, ...]: ...

    def __getitem__(self, index: int | slice) -> TranscriptMessage | tuple[TranscriptMessage, ...]:
        return self.messages[index]

    def to_json(self) -> str:
        """The transcript as JSON text, version 1 (docs/conversations.md has the format);
        always writable as UTF-8."""
        return dump_transcript(self.messages)

    @classmethod
    def from_json(cls, text: str | bytes) -> Transcript:
        """Read what `to_json` wrote; anything else is an `InvalidArgumentError` naming
        where it is wrong (an unknown field or part type, a newer version, a missing
        value, a conversation a provider would refuse)."""
        messages = load_messages(text)
        try:
            return cls(messages)
        except InvalidArgumentError as error:
            raise invalid(str(error)) from error


# --- what makes a transcript one a provider takes


def check_continuation(history: object, approvals: object, *, attachments: bool = False) -> None:
    """`history=` and `approvals=` of an entry point, checked at the call: a `Transcript`
    (or None), and an answer for exactly the calls it ends with, if any; then no new user
    turn is added, so no `attachments` either."""
    if history is not None and not isinstance(history, Transcript):
        raise InvalidArgumentError(
            f"history must be a wink Transcript (response.transcript, or "
            f"Transcript.from_json(text)) or None, got {kind_of(history)}",
            argument="history",
        )
    waiting = history.pending if history is not None else ()
    if waiting and attachments:
        raise InvalidArgumentError(
            "attachments go in a new user turn, and a history that ends in calls awaiting "
            "approval adds none (the answers are the next turn): pass them on the call after",
            argument="attachments",
        )
    if approvals is None:
        if waiting:
            raise InvalidArgumentError(
                f"the history ends in calls awaiting approval ({_ids(p.id for p in waiting)}): "
                "pass approvals={call_id: True | False | ToolResult} for each",
                argument="approvals",
            )
        return
    if not isinstance(approvals, Mapping):
        raise InvalidArgumentError(
            f"approvals must be a mapping {{call_id: True | False | ToolResult}}, got "
            f"{kind_of(approvals)}",
            argument="approvals",
        )
    given = cast(Mapping[object, object], approvals)
    for key, value in given.items():
        if not isinstance(key, str) or not isinstance(value, bool | ToolResult):
            raise InvalidArgumentError(
                "approvals map each call id (a string) to True, False or a ToolResult; got "
                f"{key!r}: {kind_of(value)}",
                argument="approvals",
            )
    expected = {call.id for call in waiting}
    unknown = [key for key in given if key not in expected]
    if unknown:
        awaiting = _ids(expected) if expected else "none: the history ends in no such call"
        raise InvalidArgumentError(
            f"approvals name calls that do not await approval: {_ids(unknown)} (awaiting: "
            f"{awaiting})",
            argument="approvals",
        )
    missing = [call.id for call in waiting if call.id not in given]
    if missing:
        raise InvalidArgumentError(
            f"approvals give no answer for the call(s) {_ids(missing)}: each call awaiting "
            "approval needs True, False or a ToolResult",
            argument="approvals",
        )


def _ids(ids: Iterable[object]) -> str:
    return ", ".join(repr(call_id) for call_id in ids)


def _check(messages: tuple[object, ...]) -> tuple[PendingToolCall, ...]:
    """Raise unless `messages` is a conversation every provider takes; the calls of the
    last model turn still open (awaiting approval)."""
    open_calls: dict[str, ToolCall] = {}  # the latest model turn's calls, not answered yet
    calls_of_turn: dict[str, ToolCall] = {}
    for index, message in enumerate(messages):
        where = f"message {index}"
        if not isinstance(message, TranscriptMessage):
            raise InvalidArgumentError(
                f"a transcript holds user, model and tool-result messages; {where} is "
                f"{kind_of(message)}",
                argument="messages",
            )
        if index == 0 and not isinstance(message, UserMessage):
            raise _unanswerable("a conversation starts with a user turn")
        if isinstance(message, ToolResultMessage):
            call = open_calls.pop(message.call_id, None)
            if call is None:
                answered = "answers again" if message.call_id in calls_of_turn else "answers no"
                raise _unanswerable(
                    f"{where} is a tool result that {answered} call {message.call_id!r} "
                    "of the model turn just before it"
                )
            if call.name != message.name:
                raise _unanswerable(
                    f"{where} answers call {call.id!r} of {call.name!r} as {message.name!r}"
                )
            continue
        if open_calls:
            ids = ", ".join(repr(call_id) for call_id in open_calls)
            raise _unanswerable(f"the tool call(s) {ids} have no result before {where}")
        if isinstance(message, AssistantMessage):
            calls_of_turn = {}
            for call in message.tool_calls:
                if call.id in calls_of_turn:
                    raise _unanswerable(f"{where} makes two calls with the id {call.id!r}")
                calls_of_turn[call.id] = call
            open_calls = dict(calls_of_turn)
        else:
            calls_of_turn = {}
    return tuple(pending_call(call) for call in open_calls.values())


def _unanswerable(problem: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"a provider would refuse this conversation: {problem}", argument="messages"
    )


def pending_call(call: ToolCall) -> PendingToolCall:
    """`call` as it waits for a person: its arguments decoded (an object, else {})."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {}
    decoded = dict(cast("Mapping[str, Any]", arguments)) if isinstance(arguments, Mapping) else {}
    return PendingToolCall(call.id, call.name, decoded)
