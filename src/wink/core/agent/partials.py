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

Each parse reads the whole answer so far, so parsing after every piece would cost the
square of the answer's length. Past `_EVERY_PIECE` characters the answer is parsed
again once it has grown by a quarter (`_GROWTH`) or `_INTERVAL` seconds after the last
parse, whichever comes first; when the answer so far does not validate (cut inside an
object whose required fields are not all there yet, or in a number), its part up to the
last object or list it closed is tried instead. The parses add up to a few times the
answer's length (not its square), and a stream as fast as a person reads still shows its
answer grow several times a second. The last piece of a round is always parsed (whole),
so the last `OutputDelta` is the checked output.
"""

from __future__ import annotations

import json
import time
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
_EVERY_PIECE = 512  # characters of answer parsed after every piece that grows it
_GROWTH = 4  # past that: parsed again once grown by 1/_GROWTH ...
_INTERVAL = 0.1  # ... or this many seconds after the last parse


class PartialOutputs:
    """The sink of a streamed evaluation whose prompt has an output type: `sink` with an
    `OutputDelta` after each batch that grew the answer. `tool` is the output tool's
    name."""

    __slots__ = (
        "_arguments",
        "_call",
        "_last",
        "_output_type",
        "_parsed_at",
        "_parsed_size",
        "_shown_size",
        "_sink",
        "_size",
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
        self._size = 0  # characters of the answer so far
        self._parsed_size = 0  # ... at the last parse
        self._parsed_at = 0.0  # when that was (time.monotonic)
        self._shown_size = 0  # characters of the answer the last partial shown was read from
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
            if self._call is None:
                self._size += len(event.text)
                return True
            return False
        if isinstance(event, ToolCallStarted):
            if self._call is None and event.name == self._tool:
                self._call = event.index
                self._size = self._parsed_size = self._shown_size = 0  # the call is the answer
            return False
        if isinstance(event, ToolCallDelta):
            if event.index == self._call:
                self._arguments.append(event.arguments)
                self._size += len(event.arguments)
                return True
            return False
        if isinstance(event, ToolCallReady) and event.index == self._call:
            arguments = event.arguments
            whole = arguments if isinstance(arguments, str) else json.dumps(arguments)
            self._arguments = [whole]  # as sent whole, or as the fragments joined
            self._size = len(whole)
            return True
        return False

    def _show(self, out: list[StreamEvent], *, whole: bool = False) -> None:
        """Add the answer so far, if it validates and differs from the last one shown;
        `whole`: the round is over, so the answer is complete (a number at its end too)."""
        if not whole and self._too_soon():
            return
        answer = "".join(self._arguments if self._call is not None else self._text)
        if not answer.strip():
            return
        if whole:
            try:
                valid, partial = True, parse_output(self._output_type, answer)
            except ValueError:  # pydantic's ValidationError: the loop tells the model
                return
        else:
            valid, partial = self._parse(answer)
        if valid and (not self._last or partial != self._last[0]):
            self._last = (partial,)
            out.append(OutputDelta(partial))

    def _too_soon(self) -> bool:
        """Whether this piece is parsed with a later one (see the module's docstring)."""
        size = self._size
        if size <= _EVERY_PIECE or size - self._parsed_size >= size // _GROWTH:
            return False
        return time.monotonic() - self._parsed_at < _INTERVAL

    def _parse(self, answer: str) -> tuple[bool, Any]:
        """The answer so far validated, or else its part up to the last object or list
        it closed, if that is more than the last partial shown was read from."""
        self._parsed_size, self._parsed_at = self._size, time.monotonic()
        valid, partial = parse_partial_output(self._output_type, answer)
        read = len(answer)
        if not valid and read > _EVERY_PIECE:
            read = max(answer.rfind("}"), answer.rfind("]")) + 1
            if read > self._shown_size:
                valid, partial = parse_partial_output(self._output_type, answer[:read])
        if valid:
            self._shown_size = read
        return valid, partial

    def _start_over(self) -> None:
        self._text.clear()
        self._arguments = []
        self._call = None
        self._last = ()
        self._size = self._parsed_size = self._shown_size = 0
