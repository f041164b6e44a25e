"""`wink demo`: one small agent that shows the whole error contract on screen.

Against the built-in emulator (default) the model is scripted: it calls a tool with
invalid arguments, a tool that raises and a tool that does not exist, is throttled twice
(429 with a `retry-after`), then recovers to a correct answer. A last step runs a tool
that asks a person first (`wink.demo_approval`). `--batch` sends questions as one
provider batch instead (`wink.demo_batch`). With `--live` the same prompts and tools run
against the real provider.

The screen uses rich when it is installed (the `cli` extra) and plain text otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any, Protocol, cast

from pydantic import BaseModel, Field

from . import (
    ConfigurationError,
    Cost,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptRendered,
    ProviderAdapter,
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

if TYPE_CHECKING:
    from rich.console import Console

    from .testing import Provider

__all__ = [
    "PlainScreen",
    "RichScreen",
    "Screen",
    "cost_line",
    "demo_adapter",
    "describe_failure",
    "emulated_adapter",
    "format_arguments",
    "open_screen",
    "run_demo",
    "show_event",
]

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
        Fault.rate_limit(retry_after=0.3),
        Fault.rate_limit(retry_after=0.3),
        Turn.tool_calls(EmulatedToolCall("get_forecast", {"city": "Paris", "days": 2})),
        Turn.text(_FINAL),
    ]


# --- what is shown


def format_arguments(params: object) -> str:
    """Tool arguments as `name=value, ...` with JSON values, however they arrived.

    `ToolInvoked.params` is the parameter dataclass (or model) when the arguments were
    valid, else what the provider sent: a JSON string (OpenAI) or a decoded object
    (Anthropic, Gemini).
    """
    values: Mapping[str, Any]
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        values = dataclasses.asdict(params)
    elif isinstance(params, BaseModel):
        values = params.model_dump(mode="json")
    elif isinstance(params, Mapping):
        values = cast(Mapping[str, Any], params)
    elif isinstance(params, str):
        try:
            decoded: Any = json.loads(params)
        except ValueError:
            return f"<not JSON: {params!r}>"
        if not isinstance(decoded, dict):
            return params
        values = cast(dict[str, Any], decoded)
    else:
        return repr(params)
    return ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False, default=str)}"
        for name, value in values.items()
    )


def describe_failure(error: WinkError) -> str:
    """One line for a failed evaluation: the error's class, its phase if it has one, and
    its message."""
    if isinstance(error, ThrottleError):
        details = error.details
        safe = "retry-safe" if details.retry_safe else "not retry-safe"
        return (
            f"ThrottleError in phase {error.phase!r} ({details.kind}, {safe}, "
            f"{details.attempts} attempt{'s' if details.attempts != 1 else ''}): {error.message}"
        )
    if isinstance(error, PromptEvaluationError):
        return f"{type(error).__name__} in phase {error.phase!r}: {error.message}"
    return f"{type(error).__name__}: {error}"


def _seconds(value: float | timedelta | None) -> str:
    if value is None:
        return "nothing"
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    return f"{seconds:g}s"


def _throttle_line(error: ThrottleError, wait: float) -> str:
    details = error.details
    status = f"HTTP {details.status_code} " if details.status_code is not None else ""
    return (
        f"{status}{details.kind} on attempt {details.attempts}: the provider asked to wait "
        f"{_seconds(details.retry_after)}; attempt {details.attempts + 1} in {wait:.2f}s"
    )


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the screen: rich when installed, plain text otherwise

Part = str | tuple[str, str]  # text, or (text, rich style)


class Screen(Protocol):
    def line(self, *parts: Part) -> None: ...

    def panel(self, body: str, title: str = "", style: str = "") -> None: ...

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None: ...


class PlainScreen:
    """Plain text on stdout, for terminals (or installs) without rich."""

    def line(self, *parts: Part) -> None:
        print("".join(part if isinstance(part, str) else part[0] for part in parts))

    def panel(self, body: str, title: str = "", style: str = "") -> None:
        print(f"--- {title} ---" if title else "---")
        print(body)
        print("---")

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        widths = [max(len(cell) for cell in column) for column in zip(columns, *rows, strict=True)]
        print(f"{title}:")
        for row in (columns, *rows):
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            print(("  " + "  ".join(cells)).rstrip())


class RichScreen:
    """rich on stdout; text is never read as rich markup (tool messages may contain `[`)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, *parts: Part) -> None:
        from rich.text import Text

        text = Text()
        for part in parts:
            if isinstance(part, str):
                text.append(part)
            else:
                text.append(part[0], style=part[1])
        self.console.print(text, soft_wrap=True)

    def panel(self, body: str, title: str = "", style: str = "") -> None:
        from rich.panel import Panel
        from rich.text import Text

        self.console.print(Panel(Text(body), title=title or None, style=style))

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        from rich.table import Table

        table = Table(title=title)
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        self.console.print(table)


def open_screen() -> Screen:
    """A `RichScreen` when rich is installed, else a `PlainScreen`."""
    try:
        from rich.console import Console
    except ImportError:
        return PlainScreen()
    return RichScreen(Console())


class _ThrottleLog(logging.Handler):
    """Shows each retry wink makes (`wink.throttle` logs them with the `ThrottleError`)."""

    def __init__(self, screen: Screen) -> None:
        super().__init__(logging.DEBUG)
        self.screen = screen

    def emit(self, record: logging.LogRecord) -> None:
        arguments = cast(tuple[Any, ...], record.args if isinstance(record.args, tuple) else ())
        if len(arguments) == 2 and isinstance(arguments[1], ThrottleError):
            self.screen.line(("⏳ ", "yellow"), _throttle_line(arguments[1], arguments[0]))
        else:
            self.screen.line(("⏳ ", "yellow"), record.getMessage())


class _BrokenToolLog(logging.Handler):
    """Shows a tool whose handler broke (`wink.tools` logs it at WARNING with the
    traceback) as one line of the demo's screen: the failure is a value the model reads,
    not a crash, so the demo does not print the traceback mid-screen. The library's log
    is untouched: an application's own handlers still get the record."""

    def __init__(self, screen: Screen) -> None:
        super().__init__(logging.WARNING)
        self.screen = screen

    def emit(self, record: logging.LogRecord) -> None:
        # the executor logs (tool, handler, prompt, call id, message)
        arguments = cast(tuple[Any, ...], record.args if isinstance(record.args, tuple) else ())
        if len(arguments) == 5:
            notice = f"tool {arguments[0]} failed: {arguments[4]}"
        else:
            notice = record.getMessage().splitlines()[0]
        self.screen.line(
            ("⚠ ", "yellow"),
            f"{notice} → sent back to the model; wink logs the traceback on wink.tools",
        )


@contextmanager
def _watching(name: str, handler: logging.Handler, level: int | None = None) -> Generator[None]:
    """`handler` on logger `name` (and the logger at `level`, if given) for the block."""
    logger = logging.getLogger(name)
    before = logger.level
    logger.addHandler(handler)
    if level is not None:
        logger.setLevel(level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


def show_event(screen: Screen, event: object) -> None:
    """One line for a `PromptRendered` or a `ToolInvoked`."""
    if isinstance(event, PromptRendered):
        tools = ", ".join(event.tool_names)
        screen.line(("→ ", "cyan"), f"prompt {event.prompt_name!r} with tools {tools}")
    elif isinstance(event, ToolInvoked):
        mark = ("✔ ", "green") if event.result.success else ("✘ ", "red")
        call = f"{event.name}({_short(format_arguments(event.params))})"
        screen.line(mark, (call, "bold"), f" → {event.result.message}")


def _event_rows(session: Session) -> list[list[str]]:
    return [
        [
            event.call_id,
            event.name,
            "yes" if event.result.success else "no",
            event.result.code or "",
            type(event.error).__name__ if event.error is not None else "",
        ]
        for event in session[ToolInvoked]
    ]


def _added_to_the_conversation(before: RecordedRequest, after: RecordedRequest) -> Any:
    """What `after` added to the conversation `before` carried, exactly as the adapter sent
    it, in the wire's own form: the model's tool calls and the failed results that answer
    them. The conversation is the list of the body that grew (`messages`, `input`,
    `contents`: whatever the wire calls it)."""
    old: object = before.body
    new: object = after.body
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    was_body = cast(dict[str, Any], old)
    for key, items in cast(dict[str, Any], new).items():
        was = was_body.get(key)
        if isinstance(items, list) and isinstance(was, list):
            added = cast(list[Any], items)[len(cast(list[Any], was)) :]
            if added:
                return added
    return cast(dict[str, Any], new)


# --- entry point


def run_demo(
    *,
    provider: str = "anthropic",
    live: bool = False,
    model: str | None = None,
    script: Sequence[Turn | Fault] | None = None,
    screen: Screen | None = None,
    stream: bool = False,
    ask: bool = False,
    batch: bool = False,
    resume: str | None = None,
) -> int:
    """Run the demo agent; returns the process exit code.

    `script` replaces the emulator's scripted model (tests use it to show a failure).
    `stream` streams it instead (`wink.demo_stream`): tokens as they arrive, and a
    stream that breaks mid-answer and recovers. `ask`: the last step's approval is
    asked at the terminal instead of decided by the demo's policy. `batch` runs five
    questions as one provider batch instead (`wink.demo_batch`); `resume`, with `live`,
    goes on with a batch job saved as JSON.
    """
    screen = screen if screen is not None else open_screen()
    try:
        model = model or _demo_model(provider)
    except ConfigurationError as error:  # the provider's SDK is an optional dependency
        screen.line((f"wink demo --provider {provider}: ", "red"), str(error))
        return 1
    if model is None:
        screen.line((f"wink demo --provider {provider}: ", "red"), "give the model: --model")
        return 2
    session = Session()
    # a stream shows its tools in the stream's order, with its other events
    shown_here = (PromptRendered,) if stream else (PromptRendered, ToolInvoked)
    session.subscribe(
        lambda event: show_event(screen, event) if isinstance(event, shown_here) else None
    )
    policy = RetryPolicy(max_attempts=4, initial_delay=0.2, max_delay=5.0)
    mode = " · streamed" if stream else " · batch" if batch else ""
    screen.panel(f"wink demo · {provider}:{model} · {'LIVE' if live else 'emulator'}{mode}")
    missing = _missing_key(provider) if live else None
    if missing is not None:
        screen.line((f"--live needs {missing} in the environment", "red"))
        return 2
    if batch:
        from .demo_batch import run_batch

        return run_batch(screen, provider, model, live=live, resume=resume, retry_policy=policy)
    if live:
        adapter = demo_adapter(screen, provider, model, retry_policy=policy)
        if adapter is None:
            return 1
        with adapter:
            return _run(screen, adapter, session, None, provider, (stream, ask))
    default = _stream_script() if stream else _script()
    with ProviderEmulator(script=list(script or default)) as emulator:
        adapter = emulated_adapter(screen, provider, model, emulator, retry_policy=policy)
        if adapter is None:
            return 1
        with adapter:
            return _run(screen, adapter, session, emulator, provider, (stream, ask))


def _demo_model(provider: str) -> str | None:
    """The model the host's class names for the demo (`Host.demo_model`); loading it
    raises `ConfigurationError` naming the extra when its SDK is not installed."""
    from .adapters.registry import load_host

    return load_host(provider).demo_model


def _missing_key(provider: str) -> str | None:
    """The variables the adapter reads for its key, in its order, when none is set; None
    when one is (or when the provider's extra is missing: making the adapter says so)."""
    from .adapters.registry import load_host

    try:
        variables = load_host(provider).api_key_variables
    except ConfigurationError:
        return None
    if any(os.environ.get(name) for name in variables):
        return None
    return " or ".join(variables)


def _stream_script() -> list[Turn | Fault]:
    from .demo_stream import STREAM_SCRIPT

    return STREAM_SCRIPT


def _run(
    screen: Screen,
    adapter: ProviderAdapter,
    session: Session,
    emulator: ProviderEmulator | None,
    provider: str,
    modes: tuple[bool, bool],
) -> int:
    """The demo agent (evaluated or streamed), then the step whose tool asks first."""
    stream, ask = modes
    with _watching("wink.tools", _BrokenToolLog(screen)):
        if not stream:
            code = _evaluate(screen, adapter, session, emulator, provider)
        else:
            from .demo_stream import run_stream

            code = run_stream(screen, adapter, session, emulator)
    if code != 0:
        return code
    from .demo_approval import ask_at_the_terminal, run_approval_step

    return run_approval_step(screen, adapter, emulator, ask_at_the_terminal if ask else None)


def emulated_adapter(
    screen: Screen, provider: str, model: str, emulator: ProviderEmulator, **options: Any
) -> ProviderAdapter | None:
    """`demo_adapter` on the emulator, in `provider`'s wire format."""
    base_url = emulator.base_url(cast("Provider", provider))
    return demo_adapter(
        screen, provider, model, base_url=base_url, api_key="demo-key-not-secret", **options
    )


def demo_adapter(
    screen: Screen, provider: str, model: str, **options: Any
) -> ProviderAdapter | None:
    """The demo's adapter, or None once the screen says why it cannot be built."""
    try:
        return create_adapter(f"{provider}:{model}", **options)
    except ConfigurationError as error:  # the provider's SDK is an optional dependency
        screen.line((f"wink demo --provider {provider}: ", "red"), str(error))
        return None


def _evaluate(
    screen: Screen,
    adapter: ProviderAdapter,
    session: Session,
    emulator: ProviderEmulator | None,
    provider: str,
) -> int:
    try:
        with _watching("wink.throttle", _ThrottleLog(screen), logging.DEBUG):
            response = adapter.evaluate(build_prompt(), session=session)
    except WinkError as error:
        screen.line(("✘ evaluation failed: ", "red"), describe_failure(error))
        return 1
    screen.panel(response.text or "", title="final answer", style="green")
    screen.table(
        "ToolInvoked events in the session",
        ("call id", "tool", "success", "code", "exception"),
        _event_rows(session),
    )
    if emulator is not None:
        sent = [request for request in emulator.requests if request.body]
        if len(sent) >= 2:  # the model called tools: their results went back
            wire = json.dumps(_added_to_the_conversation(sent[0], sent[1]), indent=2)
            screen.panel(wire, title=f"failed tool results as sent to {provider}")
        stats = emulator.stats
        screen.line(
            f"emulator: {stats.requests} requests, {stats.responses.get(429, 0)} answered 429"
        )
    usage = response.usage
    screen.line(
        f"usage: {usage.requests} requests, {usage.input_tokens} input tokens, "
        f"{usage.output_tokens} output tokens, {response.rounds} rounds"
    )
    screen.line(cost_line(response.cost))
    return 0 if response.text else 1


def cost_line(cost: Cost | None) -> str:
    """What a step cost, priced by genai-prices, offline (None: a model it lacks)."""
    return f"cost: ${cost.total:f}" if cost is not None else "cost: not priced"
