"""The prompts and tools the loop, matrix and runtime tests evaluate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from wink.core.foundation.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)


@dataclass(frozen=True)
class CityParams:
    city: str


@dataclass(frozen=True)
class Weather:
    summary: str


@dataclass(frozen=True)
class Answer:
    """The structured output `make_prompt(Answer)` asks for."""

    city: str
    degrees: int


def weather(params: CityParams, *, context: ToolContext) -> ToolResult[Weather]:
    """Sunny in Paris; any other city is a failure the model can read."""
    if params.city != "Paris":
        return ToolResult.error(f"no station in {params.city}", code="not_found")
    return ToolResult.ok(Weather("sunny"), message="report")


def crash(params: CityParams, *, context: ToolContext) -> ToolResult[Weather]:
    """A handler with a bug: it always raises."""
    raise RuntimeError("sensor offline")


WEATHER_TOOL = Tool(name="weather", description="Weather by city", handler=weather)
CRASH_TOOL = Tool(name="crash", description="Always crashes", handler=crash)


def make_prompt(output_type: type[Any] | None = None) -> Prompt:
    """One section offering `weather` and `crash`; `output_type` asks for structured output."""
    section = MarkdownSection(
        key="task", title="Task", template="Weather in Paris?", tools=[WEATHER_TOOL, CRASH_TOOL]
    )
    return Prompt(name="weather", sections=[section], output_type=output_type)


HELLO = Prompt(name="hello", sections=[MarkdownSection(key="task", title="Task", template="Hi.")])
"""A prompt with no tools: one request, one answer."""


# --- tools as a translator sees them (`ModelRequest.tools`)

WEATHER_SPEC = ToolSpec(
    "weather",
    "Weather by city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SEARCH_SPEC = ToolSpec(
    "search",
    "Search the web",
    {
        "type": "object",
        "properties": {"q": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
        "required": ["q"],
    },
)
"""`search` has an optional parameter: OpenAI's strict mode cannot express it."""

CONVERSATION: tuple[Message, ...] = (
    SystemMessage("Be brief."),
    UserMessage("Weather?"),
    SystemMessage("Use metric units."),
    AssistantMessage(
        text="Checking.",
        tool_calls=(
            ToolCall("call_1", "weather", {"city": "Paris"}),
            ToolCall("call_2", "weather", '{"city": '),  # arguments that are not JSON
        ),
    ),
    ToolResultMessage("call_1", "weather", "sunny"),
    ToolResultMessage("call_2", "weather", "not valid JSON", success=False),
    UserMessage("And tomorrow?"),
)
"""One tool round in the neutral transcript, for each translator to map: two system texts,
a call whose arguments are not JSON, a failed result, and a question after the results."""
