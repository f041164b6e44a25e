"""The conversation a request carried, read back from its wire format in neutral form.

Each wire format lists a request's history as `HistoryEntry`s (`WireFormat.history`), so
a test can check what a multi-turn request sent, the same way on the four wires: in a
script callable (`EmulatedRequest.history`), on a recorded request
(`RecordedRequest.history`), or with `Turn.expecting_history(...)`, which the emulator checks
before it answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, cast

from .formats import as_list, as_object, as_str

__all__ = ["HistoryEntry", "HistoryRole", "arguments_text", "content_text"]

HistoryRole = Literal["user", "assistant", "call", "result"]
"""A user's text, the model's text, one of the model's tool calls, or a tool result."""


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One step of the conversation a request carried.

    `text` is the user's or the model's text, a call's arguments as compact JSON, or a
    result's content as text. `name` is the tool's (calls and results), `call_id` the id
    the wire carries (None where it has none), `is_error` a result's native failure mark
    (None where the provider has none: OpenAI marks a failure in the text). Instructions
    are not history (`EmulatedRequest.instructions`); neither is thinking.

    `str(entry)` is one line (`user: ...`, `assistant: ...`, `call NAME: {...}`,
    `result NAME: ...`, `error NAME: ...`): what `Turn.expecting_history` compares.
    """

    role: HistoryRole
    text: str
    name: str | None = None
    call_id: str | None = None
    is_error: bool | None = None

    def __str__(self) -> str:
        if self.role in ("user", "assistant"):
            return f"{self.role}: {self.text}"
        if self.role == "call":
            return f"call {self.name}: {self.text}"
        return f"{'error' if self.is_error else 'result'} {self.name}: {self.text}"


def arguments_text(arguments: Any) -> str:
    """A call's arguments as compact JSON, however the wire carries them (a JSON string,
    or an object); a string that is not JSON as it is."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def content_text(content: Any, *, kinds: tuple[str, ...] = ("text",)) -> str:
    """A message's content as text: a string, or the text of its parts of `kinds`."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in as_list(content):
        item = as_object(part)
        if item.get("type", "text") in kinds:
            text = as_str(item.get("text"))
            if text is not None:
                pieces.append(text)
    if not pieces and isinstance(content, dict):
        return json.dumps(cast(dict[str, Any], content), ensure_ascii=False)
    return "".join(pieces)
