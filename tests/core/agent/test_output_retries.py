"""Structured answers that do not validate go back to the model, a bounded number of times,
whether they came as text (native JSON output) or as the output tool; driven by the
scripted adapter (the wire forms are in tests/adapters/test_output_retries_wire.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.helpers.prompts import Answer, make_prompt
from wink import (
    ConfigurationError,
    InvalidArgumentError,
    OutputRejected,
    PromptEvaluationError,
    PromptFailed,
    Session,
    ToolInvoked,
)
from wink.core.foundation.messages import (
    AssistantMessage,
    ModelRequest,
    ToolResultMessage,
    UserMessage,
)
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn

WARM = {"city": "Paris", "degrees": "warm"}
GOOD = {"city": "Paris", "degrees": 21}


def output_call(arguments: dict[str, Any], id: str = "out") -> Any:
    return call("final_result_Answer", arguments, id=id)


def last_two(request: ModelRequest) -> tuple[Any, Any]:
    return request.messages[-2], request.messages[-1]


def test_a_text_answer_that_does_not_validate_stays_and_a_user_turn_says_why() -> None:
    session = Session()
    adapter = ScriptedAdapter([final(WARM), final(GOOD)])
    response = adapter.evaluate(make_prompt(Answer), session=session)
    assert response.output == Answer("Paris", 21)
    assert response.rounds == 2
    answer, reply = last_two(adapter.requests[1])
    assert answer == AssistantMessage(
        text='{"city": "Paris", "degrees": "warm"}', origin="scripted:test"
    )
    assert isinstance(reply, UserMessage)
    assert reply.content == (
        "Your answer does not match Answer: degrees: Input should be a valid integer, unable "
        "to parse string as an integer. Answer again with the corrected Answer: the JSON "
        "alone, matching the schema you were given."
    )
    (event,) = session[OutputRejected]
    assert (event.round, event.attempt, event.via) == (1, 1, "text")
    assert event.answer == '{"city": "Paris", "degrees": "warm"}'
    assert event.problems == (
        "degrees: Input should be a valid integer, unable to parse string as an integer"
    )
    assert isinstance(event.error, ValidationError)
    assert event.adapter == adapter.name


def test_text_that_is_not_json_is_named_as_the_answer() -> None:
    adapter = ScriptedAdapter([final("It is 21 degrees."), final(GOOD)])
    adapter.evaluate(make_prompt(Answer), session=Session())
    _, reply = last_two(adapter.requests[1])
    assert reply.content.startswith("Your answer does not match Answer: answer: Invalid JSON")


def test_an_empty_answer_is_asked_again_without_an_empty_turn_in_the_transcript() -> None:
    adapter = ScriptedAdapter([final(""), final(GOOD)])
    assert adapter.evaluate(make_prompt(Answer), session=Session()).output == Answer("Paris", 21)
    messages = adapter.requests[1].messages
    assert not any(isinstance(message, AssistantMessage) for message in messages)
    assert isinstance(messages[-1], UserMessage)
    assert "Invalid JSON" in messages[-1].content


def test_an_output_call_that_does_not_validate_is_a_failed_result_and_an_event() -> None:
    session = Session()
    adapter = ScriptedAdapter([tool_turn(output_call(WARM)), tool_turn(output_call(GOOD))])
    response = adapter.evaluate(make_prompt(Answer), session=session)
    assert response.output == Answer("Paris", 21)
    (failure,) = [m for m in adapter.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert (failure.call_id, failure.success) == ("out", False)
    assert failure.content == (
        "The final answer does not match Answer: degrees: Input should be a valid integer, "
        "unable to parse string as an integer. Call final_result_Answer again with arguments "
        "that match its schema."
    )
    (event,) = session[OutputRejected]
    assert (event.via, event.attempt) == ("tool", 1)
    assert event.answer == '{"city":"Paris","degrees":"warm"}'


def test_both_forms_count_against_one_limit_and_past_it_the_last_error_is_raised() -> None:
    session = Session()
    adapter = ScriptedAdapter(
        [final(WARM), tool_turn(output_call({"city": "Paris"})), final(GOOD)],
        max_output_retries=1,
    )
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(Answer), session=session)
    error = info.value
    assert error.phase == "response"
    assert str(error) == (
        "response failed for prompt 'weather': structured output does not match Answer after "
        "2 answers (max_output_retries=1); last error: degrees: Field required"
    )
    assert isinstance(error.__cause__, ValidationError)
    assert error.provider_payload == {
        "tool_call": {"name": "final_result_Answer", "arguments": '{"city":"Paris"}'}
    }
    assert len(adapter.requests) == 2
    assert [(e.via, e.attempt) for e in session[OutputRejected]] == [("text", 1), ("tool", 2)]
    (failed,) = session[PromptFailed]
    assert failed.error is error


def test_the_default_lets_the_model_correct_twice() -> None:
    adapter = ScriptedAdapter([final(WARM)] * 3 + [final(GOOD)])
    with pytest.raises(PromptEvaluationError, match="after 3 answers") as info:
        adapter.evaluate(make_prompt(Answer), session=Session())
    assert info.value.provider_payload == {"text": '{"city": "Paris", "degrees": "warm"}'}
    assert len(adapter.requests) == 3
    adapter = ScriptedAdapter([final(WARM)] * 2 + [final(GOOD)])
    assert adapter.evaluate(make_prompt(Answer), session=Session()).output == Answer("Paris", 21)


def test_zero_fails_on_the_first_and_none_sets_no_limit_of_its_own() -> None:
    adapter = ScriptedAdapter([final(WARM), final(GOOD)], max_output_retries=0)
    with pytest.raises(PromptEvaluationError, match=r"after 1 answer \(max_output_retries=0\)"):
        adapter.evaluate(make_prompt(Answer), session=Session())
    adapter = ScriptedAdapter([final(WARM)] * 6 + [final(GOOD)], max_output_retries=None)
    assert adapter.evaluate(make_prompt(Answer), session=Session()).rounds == 7
    adapter = ScriptedAdapter([final(WARM)] * 6, max_output_retries=None, max_rounds=4)
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(Answer), session=Session())
    assert info.value.phase == "budget"


def test_the_limit_is_set_per_call_too() -> None:
    adapter = ScriptedAdapter([final(WARM), final(GOOD)], max_output_retries=0)
    response = adapter.evaluate(make_prompt(Answer), session=Session(), max_output_retries=1)
    assert response.output == Answer("Paris", 21)
    adapter = ScriptedAdapter([final(WARM), final(GOOD)])
    with pytest.raises(PromptEvaluationError, match="max_output_retries=0"):
        adapter.evaluate(make_prompt(Answer), session=Session(), max_output_retries=0)


async def test_evaluate_async_takes_the_limit() -> None:
    adapter = ScriptedAdapter([final(WARM), final(GOOD)])
    with pytest.raises(PromptEvaluationError, match="max_output_retries=0"):
        await adapter.evaluate_async(make_prompt(Answer), session=Session(), max_output_retries=0)


def test_past_the_limit_the_calls_beside_the_output_call_do_not_run() -> None:
    session = Session()
    turn = tool_turn(call("weather", {"city": "Paris"}, id="w"), output_call(WARM))
    adapter = ScriptedAdapter([turn], max_output_retries=0)
    with pytest.raises(PromptEvaluationError, match="max_output_retries=0"):
        adapter.evaluate(make_prompt(Answer), session=session)
    assert session[ToolInvoked] == ()


def test_a_rejected_output_call_is_not_a_failed_tool_round() -> None:
    """`max_failed_tool_rounds` counts tools; a rejected answer counts against
    `max_output_retries` only."""
    adapter = ScriptedAdapter(
        [tool_turn(output_call(WARM)), tool_turn(output_call(GOOD))], max_failed_tool_rounds=1
    )
    assert adapter.evaluate(make_prompt(Answer), session=Session()).output == Answer("Paris", 21)


@pytest.mark.parametrize("value", [-1, 1.5, "2", True])
def test_a_bad_limit_is_a_typed_error_where_it_is_given(value: object) -> None:
    with pytest.raises(ConfigurationError, match="max_output_retries must be an int >= 0"):
        ScriptedAdapter([], max_output_retries=value)
    adapter = ScriptedAdapter([final(GOOD)])
    with pytest.raises(InvalidArgumentError) as info:
        adapter.evaluate(make_prompt(Answer), session=Session(), max_output_retries=value)  # type: ignore[arg-type]
    assert info.value.argument == "max_output_retries"
    with pytest.raises(InvalidArgumentError):
        adapter.stream(make_prompt(Answer), session=Session(), max_output_retries=value)  # type: ignore[arg-type]
    assert adapter.requests == []
