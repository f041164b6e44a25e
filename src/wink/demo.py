"""`wink demo`: one small agent that shows the whole error contract on screen.

Against the built-in emulator (default) the model is scripted: it calls a tool with
invalid arguments, a tool that raises and a tool that does not exist, is throttled once
(429 with a `retry-after`), then recovers to a correct answer. With `--live` the same
prompt and tools run against the real provider.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, cast

from pydantic import Field
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from . import (
    MarkdownSection,
    Prompt,
    PromptRendered,
    RetryPolicy,
    Session,
    ThrottleError,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    WinkError,
    create_adapter,
)
from .testing import EmulatedToolCall, Fault, ProviderEmulator, RecordedRequest, Turn

__all__ = ["run_demo"]

_MODELS = {
    "openai": "gpt-4.1-mini",
    "openai-responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",
}
_KEYS = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GEMINI_API_KEY",
}
_FINAL = "Paris: sunny tomorrow (21°C), light rain the day after (17°C)."


# --- the agent


@dataclass(frozen=True)
class ForecastParams:
    city: str
    days: Annotated[int, Field(ge=1, le=7)]


@dataclass(frozen=True)
class Forecast:
    city: str
    days: tuple[str, ...]


@dataclass(frozen=True)
class StationParams:
    station: str


def get_forecast(params: ForecastParams, *, context: ToolContext) -> ToolResult[Forecast]:
    if params.city.lower() != "paris":
        return ToolResult.error(f"no forecast for {params.city}; try Paris", code="not_found")
    outlook = ("sunny, 21°C", "light rain, 17°C", "cloudy, 18°C")
    return ToolResult.ok(Forecast("Paris", outlook[: params.days]), message="forecast")


def station_status(params: StationParams, *, context: ToolContext) -> ToolResult[str]:
    raise ConnectionError(f"station {params.station} did not answer")


def build_prompt() -> Prompt:
    return Prompt(
        name="weather-agent",
        sections=[
            MarkdownSection(
                key="task",
                title="Task",
                template=(
                    "Give the weather forecast for Paris for the next two days. "
                    "Use the tools; if one fails, read its error and try again."
                ),
                tools=[
                    Tool(name="get_forecast", description="Forecast by city", handler=get_forecast),
                    Tool(
                        name="station_status",
                        description="Health of a weather station",
                        handler=station_status,
                    ),
                ],
            )
        ],
    )


def _script() -> list[Turn | Fault]:
    return [
        Turn.tool_calls(
            EmulatedToolCall("get_forecast", {"city": "Paris", "days": "soon"}),
            EmulatedToolCall("station_status", {"station": "PAR-01"}),
            EmulatedToolCall("lookup_city", {"name": "Paris"}),
        ),
        Fault.rate_limit(retry_after=0.5),
        Turn.tool_calls(EmulatedToolCall("get_forecast", {"city": "Paris", "days": 2})),
        Turn.text(_FINAL),
    ]


# --- showing it


class _ThrottleLog(logging.Handler):
    def __init__(self, console: Console) -> None:
        super().__init__(logging.DEBUG)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        arguments = cast(tuple[Any, ...], record.args if isinstance(record.args, tuple) else ())
        error = arguments[1] if len(arguments) == 2 else None
        if isinstance(error, ThrottleError):
            details = error.details
            asked = (
                "nothing" if details.retry_after is None else f"{details.retry_after_seconds:g}s"
            )
            self.console.print(
                f"[yellow]⏳ HTTP {details.status_code} {details.kind}[/]: provider asked to wait "
                f"{asked}; retrying in {arguments[0]:.2f}s (attempt {details.attempts})"
            )
        else:
            self.console.print(f"[yellow]⏳[/] {record.getMessage()}")


@contextmanager
def _watch_throttling(console: Console) -> Generator[None]:
    logger = logging.getLogger("wink.throttle")
    handler, level = _ThrottleLog(console), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _show_event(console: Console, event: object) -> None:
    if isinstance(event, PromptRendered):
        console.print(f"[cyan]→ prompt[/] {event.prompt_name!r} with tools {event.tool_names}")
    elif isinstance(event, ToolInvoked):
        mark = "[green]✔[/]" if event.result.success else "[red]✘[/]"
        console.print(
            f"{mark} tool [bold]{event.name}[/]({_short(event.params)}) → {event.result.message}"
        )


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _events_table(session: Session) -> Table:
    table = Table(title="ToolInvoked events in the session")
    for column in ("call id", "tool", "success", "message", "error"):
        table.add_column(column)
    for event in session[ToolInvoked]:
        table.add_row(
            event.call_id,
            event.name,
            "yes" if event.result.success else "no",
            event.result.message,
            type(event.error).__name__ if event.error is not None else "",
        )
    return table


def _failures_on_the_wire(provider: str, request: RecordedRequest) -> Any:
    """The failed tool results exactly as the adapter sent them, in the provider's form."""
    body: Any = request.body
    if provider == "openai":
        return [m for m in body.get("messages", []) if m.get("role") == "tool"]
    if provider == "openai-responses":
        return [i for i in body.get("input", []) if i.get("type") == "function_call_output"]
    if provider == "anthropic":
        return body.get("messages", [])[-1]
    return body.get("contents", [])[-1]


# --- entry point


def run_demo(*, provider: str = "anthropic", live: bool = False, model: str | None = None) -> int:
    """Run the demo agent; returns the process exit code."""
    console = Console()
    model = model or _MODELS[provider]
    session = Session()
    session.subscribe(lambda event: _show_event(console, event))
    policy = RetryPolicy(max_attempts=4, initial_delay=0.2, max_delay=5.0)
    title = f"wink demo · {provider}:{model} · {'LIVE' if live else 'emulator'}"
    console.print(Panel(title, style="bold"))
    if live:
        if not os.environ.get(_KEYS[provider]):
            console.print(f"[red]--live needs {_KEYS[provider]} in the environment[/]")
            return 2
        adapter = create_adapter(f"{provider}:{model}", retry_policy=policy)
        return _evaluate(console, adapter, session, None, provider)
    with ProviderEmulator(script=_script()) as emulator:
        adapter = create_adapter(
            f"{provider}:{model}",
            base_url=emulator.base_url(provider),  # type: ignore[arg-type]
            api_key="demo-key-not-secret",
            retry_policy=policy,
        )
        return _evaluate(console, adapter, session, emulator, provider)


def _evaluate(
    console: Console,
    adapter: Any,
    session: Session,
    emulator: ProviderEmulator | None,
    provider: str,
) -> int:
    try:
        with _watch_throttling(console):
            response = adapter.evaluate(build_prompt(), session=session)
    except WinkError as error:
        console.print(f"[red]evaluation failed:[/] {error!r}")
        return 1
    console.print(Panel(response.text or "", title="final answer", style="green"))
    console.print(_events_table(session))
    if emulator is not None:
        after_failures = next(
            (r for r in emulator.requests if r.number >= 2 and r.body), emulator.requests[-1]
        )
        wire = json.dumps(_failures_on_the_wire(provider, after_failures), indent=2)
        console.print(Panel(wire, title=f"failed tool results as sent to {provider}"))
        stats = emulator.stats
        console.print(
            f"emulator: {stats.requests} requests, {stats.responses.get(429, 0)} answered 429"
        )
    usage = response.usage
    console.print(
        f"usage: {usage.requests} requests, {usage.input_tokens} input tokens, "
        f"{usage.output_tokens} output tokens, {response.rounds} rounds"
    )
    return 0 if response.text else 1
