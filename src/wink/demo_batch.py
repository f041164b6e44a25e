"""`wink demo --batch`: five questions as one provider batch, with a tool round.

Against the emulator the batch goes: `paris` calls the forecast tool (a tool round: the
tool runs here, in the process that advances the job, and the item's next round goes
into a second batch); `lyon` calls it for a city it has no forecast for, reads the
failure and answers anyway; `front` is answered at once; `novel` asks for more output
tokens than the model may write (its own `ModelSettings`) and the provider refuses it, a
`BadRequestError` for that item only; `outlook` answers with structured output. The job
is saved as JSON after each step and read back, as another process would resume it
(docs/batch.md).

With `--live` the same items go to the real provider's batch API, which answers within
24 hours: the demo saves the job as JSON, polls every `LIVE_POLL_SECONDS`, and on Ctrl-C
says how to resume it later (`wink demo --batch --live --resume FILE`).
"""

from __future__ import annotations

import json
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import (
    BatchItem,
    BatchJob,
    BatchStatus,
    MarkdownSection,
    ModelSettings,
    Prompt,
    PromptResponse,
    ProviderAdapter,
    RetryPolicy,
    Session,
    Tool,
    ToolInvoked,
    WinkError,
)
from .testing import EmulatedRequest, EmulatedToolCall, Fault, ProviderEmulator, Turn

if TYPE_CHECKING:
    from .demo import Screen

__all__ = ["LIVE_POLL_SECONDS", "QUESTIONS", "batch_items", "emulated_model", "run_batch"]

LIVE_POLL_SECONDS = 30.0
"""How long the live demo waits between two polls of a real batch."""
QUESTIONS = {
    "paris": "What will the weather be in Paris in the next two days? Use the tool.",
    "lyon": "What will the weather be in Lyon tomorrow? Use the tool.",
    "front": "In one sentence: what is a weather front?",
    "novel": "Write a very long novel about the weather.",
    "outlook": "Give tomorrow's outlook for Paris as JSON: a city and a one-line summary.",
}
_TOO_MANY_TOKENS = 1_000_000  # more than any of the demo's models may write


@dataclass(frozen=True)
class Question:
    text: str


@dataclass(frozen=True)
class Outlook:
    city: str
    summary: str


def _prompt(key: str) -> Prompt[Any]:
    from .demo import get_forecast

    forecast: Tool[Any, Any] = Tool(
        name="get_forecast", description="Forecast by city", handler=get_forecast
    )
    section = MarkdownSection(
        key="question",
        title="Question",
        template="${text}",
        tools=[forecast] if key in ("paris", "lyon") else [],
    )
    output = Outlook if key == "outlook" else None
    return Prompt(name=f"weather-{key}", sections=[section], output_type=output).bind(
        Question(QUESTIONS[key])
    )


def batch_items(screen: Screen) -> list[BatchItem[Any]]:
    """The demo's items, rebuilt the same way by whichever process submits or resumes the
    job; each item's session shows its tool calls as they run."""
    items: list[BatchItem[Any]] = []
    for key in QUESTIONS:
        session = Session()
        session.subscribe(lambda event, key=key: _show_tool(screen, key, event))
        settings = ModelSettings(max_tokens=_TOO_MANY_TOKENS) if key == "novel" else None
        items.append(BatchItem(_prompt(key), key=key, session=session, settings=settings))
    return items


def emulated_model(request: EmulatedRequest) -> Turn | Fault:
    """The emulator's model: answers each item by its question and what came back."""
    asked = request.history[0].text if request.history else ""
    results = [entry for entry in request.history if entry.role == "result"]
    if QUESTIONS["paris"] in asked:
        if not results:
            call = EmulatedToolCall("get_forecast", {"city": "Paris", "days": 2})
            return Turn.tool_calls(call, text="Let me check the forecast.")
        return Turn.text("Paris: sunny tomorrow (21°C), light rain the day after (17°C).")
    if QUESTIONS["lyon"] in asked:
        if not results:
            return Turn.tool_calls(EmulatedToolCall("get_forecast", {"city": "Lyon", "days": 1}))
        return Turn.text("I have no forecast for Lyon; the nearest one I have is for Paris.")
    if QUESTIONS["novel"] in asked:
        return Fault.bad_request(
            f"{_TOO_MANY_TOKENS:,} output tokens were asked for; this model writes at most 64,000"
        )
    if QUESTIONS["outlook"] in asked:
        return Turn.json({"city": "Paris", "summary": "sunny, 21°C"})
    return Turn.text("A boundary between two air masses of different temperature.")


def run_batch(
    screen: Screen,
    provider: str,
    model: str,
    *,
    live: bool,
    resume: str | None,
    retry_policy: RetryPolicy,
) -> int:
    """Run the batch demo; returns the process exit code."""
    from .demo import demo_adapter, emulated_adapter

    if not live:
        with ProviderEmulator(script=emulated_model) as emulator:
            adapter = emulated_adapter(screen, provider, model, emulator, retry_policy=retry_policy)
            if adapter is None:
                return 1
            with adapter, tempfile.TemporaryDirectory() as folder:
                return _drive(screen, adapter, Path(folder) / "job.json", 0.0, resuming=False)
    adapter = demo_adapter(screen, provider, model, retry_policy=retry_policy)
    if adapter is None:
        return 1
    stamp = time.strftime("%Y%m%d-%H%M%S")
    saved = Path(resume) if resume else Path(tempfile.gettempdir()) / f"wink-batch-{stamp}.json"
    with adapter:
        try:
            return _drive(screen, adapter, saved, LIVE_POLL_SECONDS, resuming=resume is not None)
        except KeyboardInterrupt:
            screen.line(
                ("⏸ ", "yellow"),
                f"stopped waiting; the batch goes on at {provider}. Resume it later: "
                f"wink demo --batch --live --provider {provider} --resume {saved}",
            )
            return 130


def _drive(
    screen: Screen, adapter: ProviderAdapter, saved: Path, wait: float, *, resuming: bool
) -> int:
    """Submit (or read back) the job, advance it to its end, show its results."""
    from .demo import describe_failure

    try:
        if resuming:
            job = _read_back(screen, saved)
        else:
            job = adapter.submit_batch(batch_items(screen))
            screen.line(
                ("⇪ ", "cyan"),
                f"submitted {len(job)} items ({', '.join(job.keys)}) as batch {job.id}",
            )
            _save(screen, job, saved)
        while not job.finished:
            status = adapter.poll_batch(job)
            screen.line(("· ", "dim"), _status_line(status))
            if not status.ended:
                time.sleep(wait)
                continue
            before = job.waiting
            screen.line(
                ("⚙ ", "cyan"),
                "the batch has ended: advance_batch(job) reads its answers and runs the tools "
                "they call, here",
            )
            job = adapter.advance_batch(job)
            _show_round(screen, before, job)
            _save(screen, job, saved)
            if not job.finished:
                job = _read_back(screen, saved)
        results = adapter.batch_results(job)
    except WinkError as error:
        screen.line(("✘ batch failed: ", "red"), describe_failure(error))
        return 1
    except OSError as error:
        screen.line(("✘ ", "red"), f"cannot read or write the job file {saved}: {error}")
        return 1
    _show_results(screen, job, results)
    return 0


def _save(screen: Screen, job: BatchJob, saved: Path) -> None:
    text = job.to_json()
    saved.write_text(text, encoding="utf-8")
    screen.line(("💾 ", "cyan"), f"job saved as JSON ({len(text):,} bytes, no API key): {saved}")
    screen.line(f"  it holds: {_held(text)}")


def _held(text: str) -> str:
    """What the JSON holds for each item: a final answer, an error, or its loop's state."""
    shown: list[str] = []
    for item in json.loads(text)["items"]:
        if "answer" in item:
            shown.append(f"{item['key']} answered")
        elif "error" in item:
            shown.append(f"{item['key']} failed ({item['error']['type']})")
        else:
            shown.append(f"{item['key']} waiting for round {item['state']['round']}")
    return ", ".join(shown)


def _read_back(screen: Screen, saved: Path) -> BatchJob:
    """The job as another process resumes it: its JSON, with the items rebuilt."""
    job = BatchJob.from_json(saved.read_text(encoding="utf-8"), items=batch_items(screen))
    screen.line(
        ("↺ ", "cyan"),
        f"read back with BatchJob.from_json(text, items=...), as another process would: {job!r}",
    )
    return job


def _status_line(status: BatchStatus) -> str:
    counts = f"{status.succeeded} answered, {status.failed} failed, {status.pending} pending"
    return f"poll: batch {status.id} is {status.state} ({counts} of {status.total})"


def _show_tool(screen: Screen, key: str, event: object) -> None:
    if isinstance(event, ToolInvoked):
        from .demo import format_arguments

        mark = ("✔ ", "green") if event.result.success else ("✘ ", "red")
        call = f"{event.name}({format_arguments(event.params)})"
        screen.line(f"  {key}: ", mark, (call, "bold"), f" → {event.result.message}")


def _show_round(screen: Screen, before: tuple[str, ...], job: BatchJob) -> None:
    settled = [key for key in before if key not in job.waiting]
    line = f"advanced: {', '.join(settled) or 'no item'} settled"
    if job.waiting:
        line += f"; {', '.join(job.waiting)} wait for their next round, in batch {job.id}"
    screen.line(("⟳ ", "cyan"), line)


def _show_results(
    screen: Screen, job: BatchJob, results: list[PromptResponse[Any] | WinkError]
) -> None:
    from .demo import describe_failure

    screen.line(("── results (adapter.batch_results(job))", "bold"))
    for key, result in zip(job.keys, results, strict=True):
        if isinstance(result, WinkError):
            screen.line(("✘ ", "red"), f"{key}: ", describe_failure(result))
            continue
        rounds = f"{result.rounds} round{'s' if result.rounds != 1 else ''}"
        shown = repr(result.output) if result.output is not None else result.text or ""
        answer = textwrap.shorten(shown, 100, placeholder="...")
        screen.line(("✔ ", "green"), f"{key} ({rounds}): {answer}")
