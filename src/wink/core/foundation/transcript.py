"""`Transcript`: the whole provider-neutral conversation of an evaluation, and its JSON.

A transcript holds the user turns, the model turns (text, tool calls, thinking) and the
tool results, failures included, in order. It is always one a provider would take: every
tool result answers a call of the model turn just before it, and every call is answered
before the conversation goes on; only the last model turn may have calls still open,
which are then the calls awaiting a person's approval (`pending`). What the adapter knows
and the conversation does not (keys, headers, settings, instructions) is never in it.

`to_json()` writes version 1 of the format below (docs/conversations.md documents it);
`Transcript.from_json` reads it back, and refuses anything else with an
`InvalidArgumentError` that names the place: an unknown field or part type (written by a
newer wink), a newer version, a missing field. Nothing is skipped silently. A writer
leaves out every field at its default, so a transcript that uses nothing new reads the
same in any version 1 reader; a new field or part type appears only where it is used.

    {"version": 1, "messages": [
      {"type": "user", "content": [{"type": "text", "text": "..."}]},
      {"type": "assistant", "origin": "anthropic:claude-sonnet-4-6", "text": "...",
       "tool_calls": [{"id": "...", "name": "...", "arguments": {...} | "<json>",
                       "provider_data": {...}}],
       "thinking": [{"provider": "anthropic", "text": "...", "signature": "...",
                     "redacted": "...", "raw": {...}}],
       "native": {"provider": "anthropic", "items": [{...}]}, "provider_data": {...}},
      {"type": "tool_result", "call_id": "...", "name": "...",
       "content": [{"type": "text", "text": "..."}], "success": false}]}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast, overload

from .checks import kind_of
from .errors import InvalidArgumentError
from .messages import (
    AssistantMessage,
    NativeOutput,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .results import ToolResult

__all__ = [
    "TRANSCRIPT_VERSION",
    "PendingToolCall",
    "Transcript",
    "TranscriptMessage",
    "check_continuation",
    "pending_call",
]

TRANSCRIPT_VERSION = 1
"""The version of the JSON format `to_json` writes and `from_json` reads."""

TranscriptMessage = UserMessage | AssistantMessage | ToolResultMessage
"""What a transcript holds (instructions are the prompt's, never the conversation's)."""


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
        checked = tuple(cast(Iterable[object], given))
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
        """The transcript as JSON text, version 1 (the module docstring has the format).
        Always writable as UTF-8: a lone surrogate a provider sent is kept escaped."""
        document = {"version": TRANSCRIPT_VERSION, "messages": [_dump(m) for m in self.messages]}
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        try:
            text.encode()
        except UnicodeEncodeError:
            return json.dumps(document, separators=(",", ":"))
        return text

    @classmethod
    def from_json(cls, text: str | bytes) -> Transcript:
        """Read what `to_json` wrote; anything else is an `InvalidArgumentError` naming
        where it is wrong (an unknown field, a newer version, a missing value)."""
        if not isinstance(cast(object, text), str | bytes | bytearray):
            raise InvalidArgumentError(
                f"Transcript.from_json takes JSON text, got {kind_of(text)}", argument="text"
            )
        try:
            document = json.loads(text)
        except ValueError as error:
            raise InvalidArgumentError(
                f"not a wink transcript: the text is not JSON ({error})", argument="text"
            ) from error
        top = _Reader(document, "the transcript")
        version = top.take("version", int)
        if version != TRANSCRIPT_VERSION:
            newer = version > TRANSCRIPT_VERSION
            raise _invalid(
                f"transcript version {version} "
                + (
                    f"is newer than this wink reads ({TRANSCRIPT_VERSION}): upgrade wink"
                    if newer
                    else f"is not one wink wrote (it reads {TRANSCRIPT_VERSION})"
                )
            )
        items = top.take("messages", list)
        top.done()
        messages = [_load(item, f"messages[{index}]") for index, item in enumerate(items)]
        try:
            return cls(messages)
        except InvalidArgumentError as error:
            raise _invalid(str(error)) from error


# --- what makes a transcript one a provider takes


def check_continuation(history: object, approvals: object) -> None:
    """`history=` and `approvals=` of an entry point, checked at the call: a `Transcript`
    (or None), and an answer for exactly the calls it ends with, if any."""
    if history is not None and not isinstance(history, Transcript):
        raise InvalidArgumentError(
            f"history must be a wink Transcript (response.transcript, or "
            f"Transcript.from_json(text)) or None, got {kind_of(history)}",
            argument="history",
        )
    waiting = history.pending if history is not None else ()
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
    decoded = dict(cast(Mapping[str, Any], arguments)) if isinstance(arguments, Mapping) else {}
    return PendingToolCall(call.id, call.name, decoded)


# --- writing


def _dump(message: TranscriptMessage) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"type": "user", "content": [_text_part(message.content)]}
    if isinstance(message, ToolResultMessage):
        out: dict[str, Any] = {
            "type": "tool_result",
            "call_id": message.call_id,
            "name": message.name,
            "content": [_text_part(message.content)],
        }
        if not message.success:
            out["success"] = False
        return out
    return _dump_assistant(message)


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _dump_assistant(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "assistant"}
    if message.origin is not None:
        out["origin"] = message.origin
    if message.text is not None:
        out["text"] = message.text
    if message.tool_calls:
        out["tool_calls"] = [_dump_call(call) for call in message.tool_calls]
    if message.thinking:
        out["thinking"] = [_dump_thinking(part) for part in message.thinking]
    if message.native is not None:
        native = message.native
        out["native"] = {"provider": native.provider, "items": [dict(i) for i in native.items]}
    if message.provider_data is not None:
        out["provider_data"] = dict(message.provider_data)
    return out


def _dump_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if isinstance(call.arguments, str) else dict(call.arguments)
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": arguments}
    if call.provider_data is not None:
        out["provider_data"] = dict(call.provider_data)
    return out


def _dump_thinking(part: ThinkingPart) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": part.provider}
    for name in ("text", "signature", "redacted"):
        value = getattr(part, name)
        if value is not None:
            out[name] = value
    if part.raw is not None:
        out["raw"] = dict(part.raw)
    return out


# --- reading


class _Reader:
    """One JSON object of the document: its fields taken one by one, the rest refused."""

    def __init__(self, value: object, where: str) -> None:
        if not isinstance(value, dict):
            raise _invalid(f"{where} must be a JSON object, got {_json_kind(value)}")
        self.fields = cast(dict[str, Any], value)
        self.where = where
        self.taken: set[str] = set()

    def take(self, name: str, kind: type[Any]) -> Any:
        if name not in self.fields:
            raise _invalid(f"{self.where} has no {name!r}")
        return self.optional(name, kind)

    def optional(self, name: str, kind: type[Any], default: Any = None) -> Any:
        self.taken.add(name)
        if name not in self.fields:
            return default
        value = self.fields[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            expected = _KINDS.get(kind, kind.__name__)
            raise _invalid(f"{self.where}.{name} must be {expected}, got {_json_kind(value)}")
        return value

    def done(self) -> None:
        unknown = sorted(set(self.fields) - self.taken)
        if unknown:
            known = ", ".join(sorted(self.taken))
            raise _invalid(
                f"{self.where} has the unknown field {unknown[0]!r} (known: {known}); it was "
                "written by a newer wink, or edited"
            )


_KINDS: dict[type[Any], str] = {
    str: "a string",
    int: "a whole number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
}


_JSON_KINDS: dict[type[Any], str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _json_kind(value: object) -> str:
    return _JSON_KINDS.get(type(value)) or kind_of(value)


def _invalid(problem: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"not a wink transcript: {problem}", argument="text")


def _load(item: object, where: str) -> TranscriptMessage:
    reader = _Reader(item, where)
    kind = reader.take("type", str)
    if kind == "user":
        message: TranscriptMessage = UserMessage(_load_text(reader.take("content", list), where))
    elif kind == "tool_result":
        message = ToolResultMessage(
            call_id=reader.take("call_id", str),
            name=reader.take("name", str),
            content=_load_text(reader.take("content", list), where),
            success=reader.optional("success", bool, True),
        )
    elif kind == "assistant":
        message = _load_assistant(reader)
    else:
        raise _invalid(
            f"{where} is of the unknown type {kind!r} (known: assistant, tool_result, user)"
        )
    reader.done()
    return message


def _load_text(parts: list[Any], where: str) -> str:
    texts: list[str] = []
    for index, part in enumerate(parts):
        reader = _Reader(part, f"{where}.content[{index}]")
        kind = reader.take("type", str)
        if kind != "text":
            raise _invalid(f"{reader.where} is of the unknown part type {kind!r} (known: text)")
        texts.append(reader.take("text", str))
        reader.done()
    return "".join(texts)


def _load_assistant(reader: _Reader) -> AssistantMessage:
    where = reader.where
    calls = reader.optional("tool_calls", list, [])
    thinking = reader.optional("thinking", list, [])
    native = reader.optional("native", dict)
    return AssistantMessage(
        text=reader.optional("text", str),
        tool_calls=tuple(_load_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
        provider_data=reader.optional("provider_data", dict),
        thinking=tuple(_load_thinking(t, f"{where}.thinking[{i}]") for i, t in enumerate(thinking)),
        native=_load_native(native, f"{where}.native") if native is not None else None,
        origin=reader.optional("origin", str),
    )


def _load_call(item: object, where: str) -> ToolCall:
    reader = _Reader(item, where)
    arguments = reader.take("arguments", object)
    if not isinstance(arguments, str | dict):
        raise _invalid(f"{where}.arguments must be an object or a string")
    call = ToolCall(
        id=reader.take("id", str),
        name=reader.take("name", str),
        arguments=cast(str | dict[str, Any], arguments),
        provider_data=reader.optional("provider_data", dict),
    )
    reader.done()
    return call


def _load_thinking(item: object, where: str) -> ThinkingPart:
    reader = _Reader(item, where)
    part = ThinkingPart(
        provider=reader.take("provider", str),
        text=reader.optional("text", str),
        signature=reader.optional("signature", str),
        redacted=reader.optional("redacted", str),
        raw=reader.optional("raw", dict),
    )
    reader.done()
    return part


def _load_native(item: dict[str, Any], where: str) -> NativeOutput:
    reader = _Reader(item, where)
    provider = reader.take("provider", str)
    items = reader.take("items", list)
    for index, entry in enumerate(items):
        if not isinstance(entry, dict):
            raise _invalid(f"{where}.items[{index}] must be an object")
    reader.done()
    return NativeOutput(provider, tuple(cast(list[dict[str, Any]], items)))
