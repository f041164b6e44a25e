"""A `BaseModel` tool and a `BaseModel` output on every wire format: the schema pydantic
makes goes out in each provider's rules (OpenAI strict mode, no `$ref` for Gemini), the
arguments come back as the model, the result goes to the model as its JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tests.helpers.adapters import PROVIDERS, Recorder, make_adapter
from wink import MarkdownSection, Prompt, Session, Tool, ToolContext, ToolInvoked, ToolResult
from wink.testing import EmulatedRequest, EmulatedToolCall, ProviderEmulator, Turn


class Stop(BaseModel):
    city: str
    nights: int = Field(ge=1)


class Itinerary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stops: list[Stop]


class Quote(BaseModel):
    total_eur: int = Field(alias="totalEur")
    lines: list[Stop]


def price(params: Itinerary, *, context: ToolContext) -> ToolResult[Quote]:
    nights = sum(stop.nights for stop in params.stops)
    return ToolResult.ok(Quote(totalEur=90 * nights, lines=params.stops))


PROMPT = Prompt(
    name="travel",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Price the trip.",
            tools=[Tool(name="price", description="Price an itinerary", handler=price)],
        )
    ],
    output_type=Quote,
)
ARGUMENTS = {"stops": [{"city": "Paris", "nights": 2}, {"city": "Lyon", "nights": 1}]}
ANSWER = {"totalEur": 270, "lines": ARGUMENTS["stops"]}


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


def answer_turn(provider: str) -> Turn:
    if provider in ("anthropic", "google", "bedrock"):  # output beside tools is a tool there
        return Turn.tool_calls(EmulatedToolCall("final_result_Quote", ANSWER))
    return Turn.json(ANSWER)


def schemas(provider: str, request: EmulatedRequest) -> dict[str, Any]:
    """Each function's parameters (and the native output schema) as the request sent them."""
    body = request.body
    if provider == "openai":
        found = {t["function"]["name"]: t["function"] for t in body["tools"]}
        found["output"] = body["response_format"]["json_schema"]
        return found
    if provider == "openai-responses":
        found = {tool["name"]: tool for tool in body["tools"]}
        found["output"] = body["text"]["format"]
        return found
    if provider == "anthropic":
        return {tool["name"]: tool for tool in body["tools"]}
    if provider == "bedrock":
        specs = [tool["toolSpec"] for tool in body["toolConfig"]["tools"]]
        return {spec["name"]: spec["inputSchema"]["json"] for spec in specs}
    (group,) = body["tools"]
    return {d["name"]: d for d in group["functionDeclarations"]}


def test_a_model_tool_and_a_model_output(provider: str, emulator: ProviderEmulator) -> None:
    recorder = Recorder(
        Turn.tool_calls(EmulatedToolCall("price", ARGUMENTS, id="call_price")),
        answer_turn(provider),
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(PROMPT, session=session)

    assert response.output == Quote(
        totalEur=270, lines=[Stop(city="Paris", nights=2), Stop(city="Lyon", nights=1)]
    )
    (invoked,) = session[ToolInvoked]
    assert invoked.params == Itinerary.model_validate(ARGUMENTS)
    (result,) = recorder.seen[1].tool_results
    assert json.loads(result.text) == {"total_eur": 270, "lines": ARGUMENTS["stops"]}

    sent = schemas(provider, recorder.seen[0])
    assert "$ref" not in json.dumps(sent)
    assert "$defs" not in json.dumps(sent)
    if provider == "openai":
        assert sent["price"]["strict"] is True
        assert sent["output"]["strict"] is True
        stop = sent["price"]["parameters"]["properties"]["stops"]["items"]
        assert stop["additionalProperties"] is False
        assert sent["output"]["schema"]["properties"]["totalEur"]["type"] == "integer"
    elif provider == "openai-responses":
        assert sent["price"]["strict"] is True
        assert sent["output"]["strict"] is True
    elif provider == "anthropic":
        assert sent["price"]["input_schema"]["properties"]["stops"]["items"]["required"] == [
            "city",
            "nights",
        ]
        assert "final_result_Quote" in sent
    elif provider == "bedrock":
        assert sent["price"]["properties"]["stops"]["items"]["required"] == ["city", "nights"]
        assert "final_result_Quote" in sent
    else:
        parameters = sent["price"]["parametersJsonSchema"]
        assert parameters["properties"]["stops"]["items"]["properties"]["nights"] == {
            "minimum": 1,
            "title": "Nights",
            "type": "integer",
        }
        assert "final_result_Quote" in sent


def test_model_arguments_that_do_not_validate_go_back_as_a_failed_result(
    provider: str, emulator: ProviderEmulator
) -> None:
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("price", {"stops": [{"city": "Paris", "nights": 0}], "x": 1})
        ),
        Turn.text("I could not price it."),
    )
    emulator.set_script(recorder)
    plain = Prompt(name="travel", sections=PROMPT.sections)
    session = Session()
    make_adapter(provider, emulator).evaluate(plain, session=session)
    (invoked,) = session[ToolInvoked]
    assert invoked.result.code == "invalid_input"
    assert invoked.result.message == (
        "Invalid arguments for 'price': stops.0.nights: Input should be greater than or "
        "equal to 1; x: Extra inputs are not permitted"
    )
    (result,) = recorder.seen[1].tool_results
    assert invoked.result.message in result.text
