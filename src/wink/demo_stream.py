"""`wink demo --stream`: the demo agent, streamed, with a stream that breaks and recovers.

Against the emulator the model announces and calls the forecast tool, then starts its
answer; the answer's stream breaks after a few words (an `overloaded_error` event, or the
provider's own form of it) and wink's `RetryPolicy` sends the round again: the screen
shows the tokens as they arrive, the `RoundRestarted` that voids the broken part, and
the answer streamed whole.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from . import (
    ProviderAdapter,
    RoundFinished,
    RoundRestarted,
    Session,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolInvoked,
    WinkError,
)
from .testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

if TYPE_CHECKING:
    from .demo import Screen

__all__ = ["STREAM_SCRIPT", "run_stream"]

FINAL = (
    "Paris: sunny tomorrow (21°C) with a light breeze, then light rain the day after "
    "(17°C). Take sunglasses first, an umbrella second."
)
STREAM_SCRIPT: list[Turn | Fault] = [
    Turn.tool_calls(
        EmulatedToolCall("get_forecast", {"city": "Paris", "days": 2}),
        text="Let me check the forecast.",
    ),
    Fault.stream_error(after=9),  # the answer breaks mid-sentence...
    Turn.text(FINAL),  # ...and is sent again, whole
]


def run_stream(
    screen: Screen,
    adapter: ProviderAdapter,
    session: Session,
    emulator: ProviderEmulator | None,
) -> int:
    """Stream the demo prompt, showing each event; returns the exit code. (The session's
    subscriber already shows `PromptRendered`.)"""
    from .demo import build_prompt, describe_failure, show_event

    if emulator is not None:
        emulator.set_streaming(chunk_size=4, chunk_delay=0.02)
    at_line_start = True

    def end_line() -> None:
        nonlocal at_line_start
        if not at_line_start:
            sys.stdout.write("\n")
            at_line_start = True

    try:
        with adapter.stream(build_prompt(), session=session) as stream:
            for event in stream:
                if isinstance(event, TextDelta | ThinkingDelta):
                    if at_line_start:
                        sys.stdout.write("  " if isinstance(event, TextDelta) else "  (thinking) ")
                    sys.stdout.write(event.text)
                    sys.stdout.flush()
                    at_line_start = False
                    continue
                end_line()
                if isinstance(event, ToolInvoked):
                    show_event(screen, event)
                elif isinstance(event, ToolCallReady):
                    screen.line(("⚙ ", "cyan"), f"calls {event.name}({event.arguments})")
                elif isinstance(event, RoundRestarted):
                    details = event.error.details
                    screen.line(
                        ("⟲ ", "yellow"),
                        f"the stream broke ({details.kind}, retry-safe): round {event.round} "
                        f"starts again, attempt {event.attempt}; drop what it showed",
                    )
                elif isinstance(event, RoundFinished):
                    screen.line(("· ", "dim"), f"round {event.round} done ({event.finish_reason})")
    except WinkError as error:
        end_line()
        screen.line(("✘ evaluation failed: ", "red"), describe_failure(error))
        return 1
    response = stream.response
    screen.panel(response.text or "", title="final answer (stream.response.text)", style="green")
    if emulator is not None:
        screen.line(f"emulator: {emulator.stats.requests} requests, one stream broken mid-way")
    usage = response.usage
    screen.line(
        f"usage: {usage.requests} requests, {usage.input_tokens} input tokens, "
        f"{usage.output_tokens} output tokens, {response.rounds} rounds"
    )
    return 0 if response.text else 1
