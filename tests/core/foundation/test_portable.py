"""What travels to a provider that did not make a turn (`wink.core.foundation.portable`):
the rules fallback and continued conversations share."""

from __future__ import annotations

from wink.core.foundation.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    NativeOutput,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.core.foundation.portable import (
    PORTABLE_CALL_IDS,
    CallIdRules,
    distinct_call_ids,
    is_foreign,
    portable_messages,
)

HERE = "anthropic:claude-sonnet-4-6"
THERE = "openai:gpt-4.1"

OWN = AssistantMessage(None, (ToolCall("x.1", "w", {}),), {"keep": True}, origin=HERE)
FOREIGN = AssistantMessage(
    "hm",
    (ToolCall("x.1", "w", {}, {"thought_signature": "s"}), ToolCall("ok", "w", "{}")),
    {"reasoning": [{"id": "rs"}]},
    thinking=(ThinkingPart(THERE, "hidden", signature="sig"),),
    native=NativeOutput(THERE, ({"type": "reasoning"},)),
    origin=THERE,
)
MESSAGES: tuple[Message, ...] = (
    UserMessage("go"),
    OWN,
    ToolResultMessage("x.1", "w", "done"),
    FOREIGN,
    ToolResultMessage("x.1", "w", "again"),
    ToolResultMessage("ok", "w", "fine", success=False),
)


def test_a_turn_is_foreign_to_every_adapter_but_the_one_that_made_it() -> None:
    assert not is_foreign(OWN, HERE)
    assert is_foreign(OWN, THERE)
    assert is_foreign(AssistantMessage("unknown maker"), HERE)  # no origin: foreign to all


def test_own_turns_pass_unchanged() -> None:
    own_only = MESSAGES[:3]
    assert portable_messages(own_only, HERE, CallIdRules()) is own_only


def test_a_foreign_turn_keeps_text_and_calls_and_loses_provider_bound_data() -> None:
    out = portable_messages(MESSAGES, HERE, CallIdRules())
    assert out[1] is OWN
    converted = out[3]
    assert isinstance(converted, AssistantMessage)
    assert converted.provider_data is None
    assert converted.thinking == ()
    assert converted.native is None
    assert converted.text == "hm"
    assert converted.tool_calls[0].provider_data is None
    assert converted.tool_calls[1] == ToolCall("ok", "w", "{}")


def test_a_repeated_or_unportable_id_is_renamed_with_its_result() -> None:
    out = portable_messages(MESSAGES, HERE, CallIdRules())
    converted = out[3]
    assert isinstance(converted, AssistantMessage)
    new_id = converted.tool_calls[0].id
    assert new_id != "x.1"
    assert PORTABLE_CALL_IDS.fullmatch(new_id)
    assert [m.call_id for m in out[4:] if isinstance(m, ToolResultMessage)] == [new_id, "ok"]
    assert portable_messages(MESSAGES, HERE, CallIdRules()) == out  # stable


def test_an_own_turn_after_a_renamed_one_keeps_its_results() -> None:
    later = AssistantMessage(None, (ToolCall("x.1", "w", {}),), origin=THERE)
    messages = (*MESSAGES, later, ToolResultMessage("x.1", "w", "third"))
    out = portable_messages(messages, THERE, CallIdRules())
    assert out[-1] == ToolResultMessage("x.1", "w", "third")


def test_the_targets_data_goes_on_the_first_call_of_a_foreign_turn() -> None:
    rules = CallIdRules(foreign_call_data={"thought_signature": "placeholder"})
    converted = portable_messages(MESSAGES, HERE, rules)[3]
    assert isinstance(converted, AssistantMessage)
    first, second = converted.tool_calls
    assert first.provider_data == {"thought_signature": "placeholder"}
    assert second.provider_data is None


def test_a_foreign_turn_with_nothing_portable_is_left_out() -> None:
    thinking_only = AssistantMessage(
        None, thinking=(ThinkingPart(THERE, "hmm"),), native=NativeOutput(THERE, ()), origin=THERE
    )
    messages = (UserMessage("go"), thinking_only, AssistantMessage("Done.", origin=THERE))
    out = portable_messages(messages, HERE, CallIdRules())
    assert [type(m).__name__ for m in out] == ["UserMessage", "AssistantMessage"]
    assert isinstance(out[1], AssistantMessage)
    assert out[1].text == "Done."


def test_a_model_s_repeated_call_ids_are_made_distinct_in_order() -> None:
    long_id = "c" * 39
    earlier = AssistantMessage(None, (ToolCall("a", "w", {}),), origin=HERE)
    answer = ModelResponse(
        None,
        (
            ToolCall("a", "w", {"n": 1}),  # an id of an earlier turn
            ToolCall("b", "w", {"n": 2}),
            ToolCall("b", "w", {"n": 3}),
            ToolCall("b_2", "w", {"n": 4}),  # its own id taken by the rename before it
            ToolCall(long_id, "w", {}),
            ToolCall(long_id, "w", {}),  # past 40 characters: a digest
        ),
    )
    renamed = distinct_call_ids(answer, [UserMessage("Hi"), earlier])
    ids = [call.id for call in renamed.tool_calls]
    assert ids[:4] == ["a_2", "b", "b_2", "b_2_2"]
    assert ids[4] == long_id
    assert ids[5].startswith("call_")
    assert len(ids[5]) == 29
    assert [call.arguments for call in renamed.tool_calls][:4] == [{"n": n} for n in range(1, 5)]
    assert distinct_call_ids(answer, [UserMessage("Hi"), earlier]) == renamed  # stable
    unique = ModelResponse(None, (ToolCall("x", "w", {}),))
    assert distinct_call_ids(unique, [earlier]) is unique
