"""Plain functions as tools: schema from hints, descriptions from docstrings, results."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from wink import (
    ConfigurationError,
    MarkdownSection,
    Session,
    ToolContext,
    ToolResult,
    function_tool,
    tool,
)
from wink.core.prompting.functions import as_tool
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


class Place(BaseModel):
    lat: float
    lon: float


@dataclass
class Units:
    metric: bool = True


def forecast(
    city: str,
    days: Annotated[int, Field(ge=1, le=7, description="Days ahead, 1 to 7")] = 1,
    unit: Literal["c", "f"] = "c",
    place: Place | None = None,
    units: Units = Units(),  # noqa: B008 - an unhashable default: copied per call
    tags: list[str] = [],  # noqa: B006
) -> str:
    """Forecast for a city.

    The national service's numbers.

    Args:
        city: The city's name.
        days: Overridden by the Field's own description.
        unit: Celsius or Fahrenheit.
    """
    return f"{city}:{days}{unit}"


def test_the_schema_comes_from_the_hints_and_the_docstring() -> None:
    made = function_tool(forecast)
    schema = made.parameters_schema
    assert made.name == "forecast"
    assert made.description == "Forecast for a city.\n\nThe national service's numbers."
    assert schema["required"] == ["city"]
    properties = schema["properties"]
    assert properties["city"] == {
        "description": "The city's name.",
        "title": "City",
        "type": "string",
    }
    assert properties["days"]["description"] == "Days ahead, 1 to 7"  # the Field wins
    assert (properties["days"]["minimum"], properties["days"]["maximum"]) == (1, 7)
    assert properties["unit"]["enum"] == ["c", "f"]
    assert properties["unit"]["default"] == "c"
    assert properties["unit"]["description"] == "Celsius or Fahrenheit."
    assert properties["place"]["anyOf"][0]["required"] == ["lat", "lon"]  # refs inlined
    assert properties["units"]["properties"]["metric"]["type"] == "boolean"
    assert "$defs" not in schema


@pytest.mark.parametrize(
    ("style", "doc"),
    [
        ("sphinx", "Look up.\n\n:param city: The city's name.\n"),
        ("numpy", "Look up.\n\nParameters\n----------\ncity : str\n    The city's name.\n"),
    ],
)
def test_every_docstring_style_describes_the_parameters(style: str, doc: str) -> None:
    def lookup(city: str) -> str:
        return city

    lookup.__doc__ = doc
    made = function_tool(lookup)
    assert made.description == "Look up.", style
    assert made.parameters_schema["properties"]["city"]["description"] == "The city's name."


def test_a_plain_value_is_ok_and_a_tool_result_is_kept() -> None:
    def plain(x: int) -> int:
        """Doubles."""
        return x * 2

    def refusing(x: int) -> ToolResult[int]:
        """Refuses."""
        return ToolResult.error("no", code="invalid_input")

    made = function_tool(plain)
    assert made.handler(made.params_adapter.validate_python({"x": 2}), context=None) == (
        ToolResult.ok(4)
    )
    refused = function_tool(refusing)
    result = refused.handler(refused.params_adapter.validate_python({"x": 2}), context=None)
    assert (result.success, result.code) == (False, "invalid_input")
    assert made.result_type is int


def test_a_tool_context_parameter_gets_the_context_and_is_not_in_the_schema() -> None:
    seen: list[ToolContext] = []

    async def remember(note: str, ctx: ToolContext) -> str:
        """Remembers a note."""
        seen.append(ctx)
        return note

    made = function_tool(remember)
    assert made.is_async
    assert list(made.parameters_schema["properties"]) == ["note"]
    session = Session()
    response = ScriptedAdapter([tool_turn(call("remember", {"note": "hi"})), final("ok")]).evaluate(
        "Remember hi.", tools=[remember], session=session
    )
    assert response.tool_invocations[0].result.value == "hi"
    assert seen[0].session is session
    assert seen[0].tool_name == "remember"


def test_an_exception_is_a_failed_result_as_for_a_tool() -> None:
    async def explode(n: int) -> int:
        """Explodes."""
        raise RuntimeError(f"boom {n}")

    response = ScriptedAdapter([tool_turn(call("explode", {"n": 1})), final("sorry")]).evaluate(
        "Go.", tools=[explode]
    )
    [invoked] = response.tool_invocations
    assert (invoked.result.success, invoked.result.message) == (False, "RuntimeError: boom 1")
    assert invoked.result.code == "internal_error"


def test_the_decorator_names_describes_and_keeps_the_function() -> None:
    @tool(name="weather_now", description="The weather now.", requires_approval=True)
    def weather(city: str) -> str:
        return f"sunny in {city}"

    assert weather("Paris") == "sunny in Paris"  # still a plain function
    made = as_tool(weather)
    assert (made.name, made.description, made.requires_approval) == (
        "weather_now",
        "The weather now.",
        True,
    )
    assert as_tool(weather) is made

    @tool
    def bare(city: str) -> str:
        """Bare."""
        return city

    assert as_tool(bare).name == "bare"


def test_a_function_is_made_into_its_tool_once() -> None:
    assert as_tool(forecast) is as_tool(forecast)
    section = MarkdownSection(key="s", template="t", tools=[forecast])
    assert section.offered_tools == (as_tool(forecast),)


def bad_hint(conn: socket.socket) -> None:
    """Uses a socket."""


def variadic(*cities: str) -> None:
    """Many cities."""


def undocumented(city: str) -> str:
    return city


@pytest.mark.parametrize(
    ("function", "words"),
    [
        (bad_hint, "function 'bad_hint': parameter 'conn' has a type the model cannot be given"),
        (variadic, "function 'variadic': parameter 'cities' is variadic"),
        (undocumented, "function 'undocumented': a tool needs a description"),
    ],
)
def test_what_cannot_be_a_tool_is_refused_where_it_is_given(function: Any, words: str) -> None:
    with pytest.raises(ConfigurationError, match=words):
        function_tool(function)
    with pytest.raises(ConfigurationError, match=words):
        MarkdownSection(key="s", template="t", tools=[function])
    adapter = ScriptedAdapter([final("never")])
    with pytest.raises(ConfigurationError, match=words):
        adapter.evaluate("Go.", tools=[function])
    with pytest.raises(ConfigurationError, match=words):
        tool(function)


def test_a_bad_name_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not provider-safe"):
        function_tool(forecast, name="has space")


def test_sync_and_async_functions_run_in_the_loop() -> None:
    def add(a: int, b: int = 1) -> int:
        """Adds."""
        return a + b

    async def main() -> list[Any]:
        adapter = ScriptedAdapter(
            [tool_turn(call("add", {"a": 1}), call("add", {"a": 1, "b": 5})), final("done")]
        )
        response = await adapter.evaluate_async("Add.", tools=[add])
        return [invoked.result.value for invoked in response.tool_invocations]

    assert asyncio.run(main()) == [2, 6]
