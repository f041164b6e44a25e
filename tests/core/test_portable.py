"""What travels to a provider that did not make a turn (`wink.core.foundation.portable`):
the rules fallback and continued conversations share."""

from __future__ import annotations

from wink.core.foundation.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.core.foundation.portable import PORTABLE_CALL_IDS, CallIdRules, portable_messages

ORIGIN = "origin"


def made_by(turn: AssistantMessage) -> object:
    return (turn.provider_data or {}).get(ORIGIN)


def foreign_to(target: int):
    return lambda turn: made_by(turn) not in (None, target)


OWN = AssistantMessage(None, (ToolCall("x.1", "w", {}),), {ORIGIN: 1, "keep": True})
FOREIGN = AssistantMessage(
    "hm",
    (ToolCall("x.1", "w", {}, {"thought_signature": "s"}), ToolCall("ok", "w", "{}")),
    {ORIGIN: 0, "reasoning": [{"id": "rs"}]},
)
MESSAGES: tuple[Message, ...] = (
    UserMessage("go"),
    OWN,
    ToolResultMessage("x.1", "w", "done"),
    FOREIGN,
    ToolResultMessage("x.1", "w", "again"),
    ToolResultMessage("ok", "w", "fine", success=False),
)


def test_own_turns_pass_unchanged() -> None:
    own_only = MESSAGES[:3]
    assert portable_messages(own_only, foreign_to(1), CallIdRules()) is own_only


def test_a_foreign_turn_keeps_text_and_calls_and_loses_provider_data() -> None:
    out = portable_messages(MESSAGES, foreign_to(1), CallIdRules())
    assert out[1] is OWN
    converted = out[3]
    assert isinstance(converted, AssistantMessage)
    assert converted.provider_data is None
    assert converted.text == "hm"
    assert converted.tool_calls[0].provider_data is None
    assert converted.tool_calls[1] == ToolCall("ok", "w", "{}")


def test_a_repeated_or_unportable_id_is_renamed_with_its_result() -> None:
    out = portable_messages(MESSAGES, foreign_to(1), CallIdRules())
    converted = out[3]
    assert isinstance(converted, AssistantMessage)
    new_id = converted.tool_calls[0].id
    assert new_id != "x.1"
    assert PORTABLE_CALL_IDS.fullmatch(new_id)
    assert [m.call_id for m in out[4:] if isinstance(m, ToolResultMessage)] == [new_id, "ok"]
    assert portable_messages(MESSAGES, foreign_to(1), CallIdRules()) == out  # stable


def test_the_targets_data_goes_on_the_first_call_of_a_foreign_turn() -> None:
    rules = CallIdRules(foreign_call_data={"thought_signature": "placeholder"})
    converted = portable_messages(MESSAGES, foreign_to(1), rules)[3]
    assert isinstance(converted, AssistantMessage)
    first, second = converted.tool_calls
    assert first.provider_data == {"thought_signature": "placeholder"}
    assert second.provider_data is None
