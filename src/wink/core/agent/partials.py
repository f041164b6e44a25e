"""Structured output while it streams: `OutputDelta` events, on every wire.

A prompt with an `output_type` gets its answer as the JSON text of the provider's native
structured output, or as the arguments of the output tool (`final_result_*`); both arrive
in pieces (`TextDelta`, `ToolCallDelta`), or whole (a Gemini call's `ToolCallReady`).
`PartialOutputs` sits between the loop and the stream's queue: it passes every event on
and, after a batch that grew the answer, adds an `OutputDelta` with the answer validated
so far (`parse_partial_output`: pydantic's partial JSON parsing). It only shows: the
loop still parses the whole answer at the end of the round, with its retries
(`wink.core.agent.answers`). One round's partials start over after `RoundFinished`,
`RoundRestarted` or `OutputRejected`.
"""

from __future__ import annotations

import json
from typing import Any

from ..foundation.events import (
    EventSink,
    OutputDelta,
    OutputRejected,
    RoundFinished,
    RoundRestarted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
)
from ..prompting.prompt import parse_output, parse_partial_output

__all__ = ["PartialOutputs"]

_ENDS_A_ROUND = (RoundFinished, RoundRestarted, OutputRejected)


class PartialOutputs:
    """The sink of a streamed evaluation whose prompt has an output type: `sink` with an
    `OutputDelta` after each batch that grew the answer. `tool` is the output tool's
    name."""

    __slots__ = (
        "_arguments",
        "_call",
        "_last",
        "_output_type",
        "_sink",
        "_text",
        "_tool",
        "count",
    )

    def __init__(self, sink: EventSink, output_type: Any, tool: str) -> None:
        self._sink = sink
        self._output_type = output_type
        self._tool = tool
        self._text: list[str] = []
        self._call: int | None = None  # the index of the round's output-tool call
        self._arguments: list[str] = []
        self._last: tuple[Any, ...] = ()  # the last partial shown, if any
        self.count = sink.count  # the events queued so far: the queue's

    def put(self, events: list[StreamEvent]) -> None:
        self._sink.put(self._with_partials(events))
        self.count = self._sink.count

    async def send(self, events: list[StreamEvent]) -> None:
        await self._sink.send(self._with_partials(events))
        self.count = self._sink.count

    def _with_partials(self, events: list[StreamEvent]) -> list[StreamEvent]:
        grew = False
        out: list[StreamEvent] = []
        for event in events:
            if isinstance(event, _ENDS_A_ROUND):
                finished = isinstance(event, RoundFinished)
                if grew or finished:
                    self._show(out, whole=finished)  # what the round's last piece completed
                grew = False
                self._start_over()
            else:
                grew = self._read(event) or grew
            out.append(event)
        if grew:
            self._show(out)
        return out

    def _read(self, event: StreamEvent) -> bool:
        """Take in one event; whether it grew the answer."""
        if isinstance(event, TextDelta):
            self._text.append(event.text)
            return self._call is None
        if isinstance(event, ToolCallStarted):
            if self._call is None and event.name == self._tool:
                self._call = event.index
            return False
        if isinstance(event, ToolCallDelta):
            if event.index == self._call:
                self._arguments.append(event.arguments)
                return True
            return False
        if isinstance(event, ToolCallReady) and event.index == self._call:
            arguments = event.arguments
            whole = arguments if isinstance(arguments, str) else json.dumps(arguments)
            self._arguments = [whole]  # as sent whole, or as the fragments joined
            return True
        return False

    def _show(self, out: list[StreamEvent], *, whole: bool = False) -> None:
        """Add the answer so far, if it validates and differs from the last one shown;
        `whole`: the round is over, so the answer is complete (a number at its end too)."""
        answer = "".join(self._arguments if self._call is not None else self._text)
        if not answer.strip():
            return
        if whole:
            try:
                valid, partial = True, parse_output(self._output_type, answer)
            except ValueError:  # pydantic's ValidationError: the loop tells the model
                return
        else:
            valid, partial = parse_partial_output(self._output_type, answer)
        if valid and (not self._last or partial != self._last[0]):
            self._last = (partial,)
            out.append(OutputDelta(partial))

    def _start_over(self) -> None:
        self._text.clear()
        self._arguments = []
        self._call = None
        self._last = ()
