"""The neutral transcript (`wink.core.foundation.messages`) every adapter translates to and from."""

from __future__ import annotations

import dataclasses
import json

import pytest

from wink.core.foundation.messages import (
    OUTPUT_TOOL_PREFIX,
    AssistantMessage,
    ModelResponse,
    OutputSpec,
    ToolCall,
    Usage,
    is_output_tool,
    output_tool_spec,
)


def test_usage_adds_up_field_by_field() -> None:
    first = Usage(input_tokens=10, output_tokens=2, cached_tokens=4, reasoning_tokens=1, requests=1)
    second = Usage(input_tokens=5, output_tokens=3, cached_tokens=0, reasoning_tokens=2, requests=1)
    total = first + second
    assert total == Usage(
        input_tokens=15, output_tokens=5, cached_tokens=4, reasoning_tokens=3, requests=2
    )
    assert total.total_tokens == 20  # input + output; cached and reasoning are inside them
    assert Usage() + Usage() == Usage()


def test_arguments_that_arrived_as_a_string_are_echoed_as_sent() -> None:
    broken = '{"city": "Par'
    assert ToolCall("c1", "weather", broken).arguments_json() == broken
    spaced = '{ "city" : "Paris" }'
    assert ToolCall("c1", "weather", spaced).arguments_json() == spaced


def test_decoded_arguments_become_compact_json() -> None:
    call = ToolCall("c1", "weather", {"city": "Zürich", "days": [1, 2]})
    assert call.arguments_json() == '{"city":"Z\\u00fcrich","days":[1,2]}'
    assert json.loads(call.arguments_json()) == call.arguments


def test_the_output_tool_is_named_after_the_output_and_takes_its_schema() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    output = OutputSpec("Answer", schema)
    spec = output_tool_spec(output)
    assert spec.name == "final_result_Answer"
    assert spec.name.startswith(OUTPUT_TOOL_PREFIX)
    assert spec.parameters == schema
    assert "Answer" in spec.description
    assert is_output_tool("final_result_Answer", output)
    assert not is_output_tool("final_result_Answer", None)
    assert not is_output_tool("Answer", output)


def test_the_output_tool_name_fits_the_providers_64_characters() -> None:
    output = OutputSpec("A" * 100, {"type": "object"})
    spec = output_tool_spec(output)
    assert len(spec.name) == 64
    assert is_output_tool(spec.name, output)


def test_a_response_becomes_the_assistant_turn_that_echoes_it() -> None:
    call = ToolCall("c1", "weather", {"city": "Paris"}, provider_data={"signature": "s"})
    response = ModelResponse(
        text="Looking.",
        tool_calls=(call,),
        finish_reason="tool_calls",
        provider_data={"reasoning": ["r1"]},
        raw={"id": "resp_1"},
    )
    assert response.to_message() == AssistantMessage(
        text="Looking.", tool_calls=(call,), provider_data={"reasoning": ["r1"]}
    )
    assert "resp_1" not in repr(response)  # the raw body stays out of logs


def test_messages_are_frozen_values() -> None:
    call = ToolCall("c1", "weather", "{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]
    assert ModelResponse(text="x").usage == Usage()
    assert ModelResponse(text="x").finish_reason == "stop"
