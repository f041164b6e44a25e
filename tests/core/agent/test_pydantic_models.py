"""pydantic `BaseModel`s where dataclasses go: tool parameters, tool results and structured
output (the wire forms are in tests/adapters/test_pydantic_models_wire.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from wink import (
    MarkdownSection,
    Prompt,
    PromptValidationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    ToolValidationError,
)
from wink.core.agent.executor import render_tool_result
from wink.core.foundation.messages import ToolResultMessage
from wink.core.prompting.prompt import parse_output
from wink.core.prompting.tools import inline_schema_refs
from wink.providers.openai.client import strict_schema
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


class Place(BaseModel):
    city: str
    country: str = Field(description="ISO 3166 code")


class Trip(BaseModel):
    """Where to look up the weather."""

    model_config = ConfigDict(extra="forbid")

    stops: list[Place]
    days: int = Field(ge=1, le=14)


class Forecast(BaseModel):
    summary: str = Field(alias="Summary")
    station_key: str = Field(exclude=True)

    @computed_field
    @property
    def shout(self) -> str:
        return self.summary.upper()


def plan(params: Trip, *, context: ToolContext) -> ToolResult[Forecast]:
    first = params.stops[0]
    return ToolResult.ok(Forecast(Summary=f"sunny in {first.city}", station_key="k-1"))


PLAN = Tool(name="plan", description="Forecast for a trip", handler=plan)


def make_prompt(output_type: type[Any] | None = None) -> Prompt[Any]:
    section = MarkdownSection(key="task", title="Task", template="Plan.", tools=[PLAN])
    return Prompt(name="trip", sections=[section], output_type=output_type)


def test_a_base_model_is_a_tool_s_parameters_and_its_result_type() -> None:
    assert PLAN.params_type is Trip
    assert PLAN.result_type is Forecast
    explicit = Tool(name="p", description="d", handler=plan, params_type=Trip)
    assert explicit.params_type is Trip


def test_its_schema_is_pydantic_s_with_nested_models_written_out() -> None:
    schema = PLAN.parameters_schema
    assert "$defs" not in json.dumps(schema)
    assert "$ref" not in json.dumps(schema)
    place = schema["properties"]["stops"]["items"]
    assert place["properties"]["country"]["description"] == "ISO 3166 code"
    assert place["required"] == ["city", "country"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["days"] == {
        "maximum": 14,
        "minimum": 1,
        "title": "Days",
        "type": "integer",
    }
    # strict mode needs every property required: `country` has no default, `days` neither
    strict = strict_schema(schema)
    assert strict is not None
    assert strict["properties"]["stops"]["items"]["additionalProperties"] is False


def test_a_recursive_model_keeps_the_definitions_its_references_need() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node]

    Node.model_rebuild()

    class Tree(BaseModel):
        root: Node

    schema = inline_schema_refs(Tree.model_json_schema())
    root = schema["properties"]["root"]
    assert root["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert set(schema["$defs"]) == {"Node"}


def test_draft_07_definitions_are_inlined_too_and_a_reference_to_nothing_is_left() -> None:
    """Schemas written elsewhere (an MCP server's): `definitions` as well as `$defs`, a
    property that happens to be named `definitions`, a reference that resolves nowhere."""
    schema = inline_schema_refs(
        {
            "type": "object",
            "properties": {
                "point": {"$ref": "#/definitions/Point", "description": "where"},
                "definitions": {"type": "string"},
                "elsewhere": {"$ref": "https://example.com/schema.json"},
                "missing": {"$ref": "#/$defs/Missing"},
            },
            "definitions": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        }
    )
    assert schema == {
        "type": "object",
        "properties": {
            "point": {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "description": "where",
            },
            "definitions": {"type": "string"},
            "elsewhere": {"$ref": "https://example.com/schema.json"},
            "missing": {"$ref": "#/$defs/Missing"},
        },
    }


def test_arguments_are_validated_into_the_model_and_failures_go_back() -> None:
    session = Session()
    adapter = ScriptedAdapter(
        [
            tool_turn(
                call("plan", {"stops": [{"city": "Paris"}], "days": 30}, id="bad"),
                call("plan", {"stops": [], "days": 2, "budget": 9}, id="extra"),
                call("plan", {"stops": [{"city": "Paris", "country": "FR"}], "days": 2}, id="ok"),
            ),
            final("done"),
        ]
    )
    adapter.evaluate(make_prompt(), session=session)
    bad, extra, ok = session[ToolInvoked]
    assert (bad.result.success, bad.result.code) == (False, "invalid_input")
    assert bad.result.message == (
        "Invalid arguments for 'plan': stops.0.country: Field required; days: Input should "
        "be less than or equal to 14"
    )
    assert isinstance(bad.error, ToolValidationError)
    assert isinstance(bad.error.__cause__, ValidationError)
    assert "budget: Extra inputs are not permitted" in extra.result.message
    assert isinstance(ok.params, Trip)
    assert ok.params.stops == [Place(city="Paris", country="FR")]
    results = [m for m in adapter.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert [result.success for result in results] == [False, False, True]
    assert results[2].content == '{"summary": "sunny in Paris", "shout": "SUNNY IN PARIS"}'


def test_a_model_result_is_sent_as_the_model_s_own_json() -> None:
    """Field names as the model dumps them, excluded fields left out, computed ones in;
    nested in a plain value, pydantic's own serialisation as before."""
    forecast = Forecast(Summary="rain", station_key="secret")
    assert render_tool_result(ToolResult.ok(forecast, message="ok")) == (
        'ok\n{"summary": "rain", "shout": "RAIN"}'
    )
    assert json.loads(render_tool_result(ToolResult.ok([Place(city="Lyon", country="FR")]))) == [
        {"city": "Lyon", "country": "FR"}
    ]


def test_a_model_is_a_prompt_s_output_type() -> None:
    prompt = Prompt(name="t", sections=[], output_type=Trip)
    spec = prompt.render().output
    assert spec is not None
    assert spec.name == "Trip"
    assert spec.schema == PLAN.parameters_schema
    text = '```json\n{"stops": [{"city": "Oslo", "country": "NO"}], "days": 3}\n```'
    assert parse_output(Trip, text) == Trip(stops=[Place(city="Oslo", country="NO")], days=3)
    adapter = ScriptedAdapter([final({"stops": [], "days": 0}), final({"stops": [], "days": 1})])
    response = adapter.evaluate(make_prompt(Trip), session=Session())
    assert response.output == Trip(stops=[], days=1)


def untyped(params: Any, *, context: ToolContext) -> ToolResult[None]:
    raise AssertionError("never called")


@pytest.mark.parametrize("kind", [dict, int, Place.model_fields])
def test_anything_else_is_still_refused(kind: Any) -> None:
    with pytest.raises(PromptValidationError, match="dataclass or a pydantic BaseModel"):
        Prompt(name="p", sections=[], output_type=kind)
    with pytest.raises(PromptValidationError, match="dataclass or a pydantic BaseModel"):
        Tool(name="t", description="d", handler=untyped, params_type=kind)
