"""The batch the batch tests run: 100 items of every kind, a script that answers each
the same way whether it comes alone (`evaluate`) or in a batch, and what to compare.

Item `n` asks "item n"; what the model does depends on `n` only:

* n % 4 == 1: calls `weather` (a tool round), then answers;
* n % 4 == 2 and n % 8 != 2: calls `weather` for a city with no station (the tool fails,
  the model reads why), then answers;
* n % 10 == 3: a 400 (`BadRequestError`, request phase);
* n % 10 == 7: refuses (`RefusalError`, response phase);
* n % 16 == 8: structured output (`Forecast`), first wrong then right (one correction);
* n == 99: calls tools forever: `max_rounds=2` on its item ends it (`phase="budget"`);
* anything else: a plain answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import (
    BatchItem,
    MarkdownSection,
    Prompt,
    PromptResponse,
    Tool,
    ToolContext,
    ToolResult,
    WinkError,
)
from wink.core.foundation.messages import AssistantMessage, ToolResultMessage, UserMessage
from wink.testing import EmulatedRequest, EmulatedToolCall, Fault, Turn

ITEMS = 100
LOOPING = 99


@dataclass(frozen=True)
class City:
    city: str


@dataclass(frozen=True)
class Forecast:
    city: str
    degrees: int


@dataclass(frozen=True)
class Ask:
    n: int


def weather(params: City, *, context: ToolContext) -> ToolResult[None]:
    if params.city == "Atlantis":
        return ToolResult.error("no station in Atlantis")
    return ToolResult(message=f"sunny in {params.city}")


WEATHER = Tool("weather", "Weather by city", weather)


def prompt_for(n: int) -> Prompt[Any]:
    section = MarkdownSection(key="ask", title="Ask", template="item ${n}", tools=[WEATHER])
    output = Forecast if n % 16 == 8 else None
    return Prompt(name=f"item-{n}", sections=[section], output_type=output).bind(Ask(n))


def items() -> list[BatchItem[Any]]:
    """The 100 items, keyed `item-0`... (the looping one with its own round limit)."""
    return [
        BatchItem(prompt_for(n), key=f"item-{n}", max_rounds=2 if n == LOOPING else None)
        for n in range(ITEMS)
    ]


def options_for(n: int) -> dict[str, Any]:
    """What `evaluate` is given for item `n` (what its BatchItem carries)."""
    return {"max_rounds": 2} if n == LOOPING else {}


def _number(request: EmulatedRequest) -> int:
    first = next(entry for entry in request.history if entry.role == "user")
    return int(first.text.rsplit(" ", 1)[-1])


def script(request: EmulatedRequest) -> Turn | Fault:
    """Answers a request by its item's number and what it carried back."""
    n = _number(request)
    results = [entry for entry in request.history if entry.role == "result"]
    if n == LOOPING:
        return Turn.tool_calls(EmulatedToolCall("weather", {"city": "Oslo"}))
    if n % 10 == 3:
        return Fault.bad_request(f"item {n} is refused")
    if n % 10 == 7:
        return Turn.refusal(f"I will not answer item {n}.")
    if n % 16 == 8:
        corrected = any("does not match" in entry.text for entry in request.history)
        return Turn.json({"city": "Paris", "degrees": 21 if corrected else "warm"})
    if n % 4 in (1, 2) and not results:
        city = "Atlantis" if n % 4 == 2 and n % 8 != 2 else "Paris"
        return Turn.tool_calls(EmulatedToolCall("weather", {"city": city}), text="Checking.")
    if results:
        return Turn.text(f"item {n}: {results[-1].text}")
    return Turn.text(f"answer to item {n}")


def summary(result: PromptResponse[Any] | WinkError) -> tuple[Any, ...]:
    """What must be the same whether the item ran in a batch or alone: the answer, its
    output, why it ended, its rounds and usage, the conversation (call ids aside, the
    emulator makes new ones); or the error's class, phase, status and message."""
    if isinstance(result, WinkError):
        phase, status = getattr(result, "phase", None), getattr(result, "status_code", None)
        message = getattr(result, "message", str(result))
        return (type(result).__name__, phase, status, message)
    conversation: list[tuple[Any, ...]] = []
    for message in result.transcript:
        if isinstance(message, UserMessage):
            conversation.append(("user", message.text))
        elif isinstance(message, AssistantMessage):
            calls = tuple((call.name, call.arguments_json()) for call in message.tool_calls)
            conversation.append(("assistant", message.text, calls))
        elif isinstance(message, ToolResultMessage):
            conversation.append(("result", message.name, message.content, message.success))
    return (
        result.text,
        result.output,
        result.finish_reason,
        result.rounds,
        result.usage,
        tuple(conversation),
    )
