"""Where the wall time of one sync tool loop goes: `evaluate()` with one sync tool on
Anthropic against the benchmarks' emulator, timed phase by phase (`perf_counter_ns`
marks, no profiler), beside the raw sync SDK loop of `raw.py` in the same run.

`python -m benchmarks.trace_phases [LOOPS]` prints the median and the first quartile
of each phase in microseconds. The marks wrap a few of wink's internal functions (the
portal's task start and end, the SDK call, the hand-off of a sync tool to its worker
thread), so unlike `trace_time` this file follows the code it measures: it is a tool
for reading the current code, not for comparing checkouts.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from wink import MarkdownSection, Prompt, Session, Tool, ToolContext, ToolResult, create_adapter

from . import raw
from ._common import emulator

# the marks of one evaluation, in the order they happen
MARKS = (
    "called",  # the caller enters evaluate()
    "on the portal",  # the evaluation's task starts on the portal's thread
    "request 1 sent",  # wink hands request 1 to the SDK's async client
    "answer 1 in",  # the SDK returns the answer's bytes
    "tool handed off",  # the sync tool goes to a worker thread
    "tool started",  # ... and starts there
    "tool done",
    "loop resumed",  # the evaluation has the tool's result, on the portal
    "request 2 sent",
    "answer 2 in",
    "task done",  # the evaluation's task ends on the portal
    "returned",  # evaluate() returns in the caller
)
PHASES = {
    ("called", "on the portal"): "caller -> portal (call checks, the thread hop, task start)",
    ("on the portal", "request 1 sent"): "wink before request 1 (render, plan, translate, encode)",
    ("request 1 sent", "answer 1 in"): "request 1: SDK async client + httpx2 + emulator",
    ("answer 1 in", "tool handed off"): "wink: parse answer 1, pacing, dispatch the call",
    ("tool handed off", "tool started"): "hop: portal -> worker thread",
    ("tool started", "tool done"): "the tool",
    ("tool done", "loop resumed"): "hop: worker thread -> portal",
    ("loop resumed", "request 2 sent"): "wink: the result, request 2 (translate, encode)",
    ("request 2 sent", "answer 2 in"): "request 2: SDK async client + httpx2 + emulator",
    ("answer 2 in", "task done"): "wink: parse answer 2, finish (response, events)",
    ("task done", "returned"): "hop: portal -> caller",
}

_stamps: dict[str, int] = {}


def _mark(name: str) -> None:
    _stamps[name] = time.perf_counter_ns()


def _timed_lookup(
    params: raw.LookupParams, *, context: ToolContext | None = None
) -> ToolResult[raw.Found]:
    _mark("tool started")
    result = raw.lookup(params)
    _mark("tool done")
    return result


PROMPT = Prompt(
    name="bench",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template=raw.TASK,
            tools=[Tool(name="lookup", description="Look up a key", handler=_timed_lookup)],
        )
    ],
)


@contextmanager
def _marked() -> Iterator[None]:
    """Wrap the functions the marks sit in; put them back after."""
    from wink.core.agent import executor
    from wink.core.foundation import runtime
    from wink.providers import stainless

    originals: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
        original = getattr(owner, name)
        originals.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def begin(original: Any) -> Any:
        def begin(self: Any) -> None:
            _mark("on the portal")
            original(self)

        return begin

    def settle(original: Any) -> Any:
        def settle(self: Any, task: Any) -> None:
            _mark("task done")
            original(self, task)

        return settle

    def post(original: Any) -> Any:
        async def post_async(self: Any, client: Any, wire: Any, time_limit: float) -> Any:
            first = "request 1 sent" not in _stamps
            _mark("request 1 sent" if first else "request 2 sent")
            answer = await original(self, client, wire, time_limit)
            _mark("answer 1 in" if first else "answer 2 in")
            return answer

        return post_async

    def hand_off(original: Any) -> Any:
        async def run_in_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
            _mark("tool handed off")
            result = await original(function, *args, **kwargs)
            _mark("loop resumed")
            return result

        return run_in_thread

    wrap(runtime.Running, "begin", begin)
    wrap(runtime.Running, "_settle", settle)
    wrap(stainless.StainlessCalls, "post_async", post)
    wrap(executor, "run_in_thread", hand_off)
    try:
        yield
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


def measure(loops: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(wink's phases, the raw sync loop's), microseconds per loop, one list per phase."""
    wink_phases: dict[str, list[float]] = {label: [] for label in PHASES.values()}
    wink_phases["in all"] = []
    raw_phases: dict[str, list[float]] = {
        "request 1 (sync SDK create)": [],
        "the tool and the follow-up turn": [],
        "request 2 (sync SDK create)": [],
        "in all": [],
    }
    with emulator("--shape", "loop") as server:
        base_url = server.base_url("anthropic")
        adapter = create_adapter(
            f"anthropic:{raw.MODELS['anthropic']}", base_url=base_url, api_key="test-key-0123456789"
        )
        client = raw.sdk_client("anthropic", base_url, sync=True)
        ask: dict[str, Any] = {
            "model": raw.CLAUDE,
            "max_tokens": 1024,
            "tools": raw.ANTHROPIC_TOOLS,
        }
        with _marked():
            for index in range(loops + 10):  # the first ten warm up
                _stamps.clear()
                _mark("called")
                adapter.evaluate(PROMPT, session=Session())
                _mark("returned")
                messages: list[dict[str, Any]] = [{"role": "user", "content": raw.TASK}]
                started = time.perf_counter_ns()
                first = client.messages.create(messages=messages, **ask)
                answered = time.perf_counter_ns()
                raw._anthropic_follow_up(messages, first.content)  # pyright: ignore[reportPrivateUsage]
                followed = time.perf_counter_ns()
                client.messages.create(messages=messages, **ask)
                done = time.perf_counter_ns()
                if index < 10:
                    continue
                for (start, end), label in PHASES.items():
                    wink_phases[label].append((_stamps[end] - _stamps[start]) / 1000)
                wink_phases["in all"].append((_stamps["returned"] - _stamps["called"]) / 1000)
                for label, spent in zip(
                    raw_phases,
                    (answered - started, followed - answered, done - followed, done - started),
                    strict=True,
                ):
                    raw_phases[label].append(spent / 1000)
        adapter.close()
        client.close()
    return wink_phases, raw_phases


def main(argv: list[str]) -> None:
    loops = int(argv[0]) if argv else 300
    wink_phases, raw_phases = measure(loops)
    for title, phases in (("wink evaluate()", wink_phases), ("raw sync SDK loop", raw_phases)):
        print(f"{title}, one sync tool, Anthropic: us per loop, median (first quartile)")
        for label, spent in phases.items():
            quartile = statistics.quantiles(spent, n=4)[0]
            print(f"  {statistics.median(spent):8.1f} ({quartile:8.1f})  {label}")


if __name__ == "__main__":
    main(sys.argv[1:])
