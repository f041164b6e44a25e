"""Interrupts and exits, in child processes as a user meets them: Ctrl-C during
`evaluate()`, `sys.exit()` in a tool, `wink demo | head`, and a clean interpreter exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

ROOT = Path(__file__).resolve().parents[1]

_SETUP = """
import sys, time
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from wink import MarkdownSection, Prompt, Session, Tool, ToolResult, create_adapter
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

exporter = InMemorySpanExporter()
tracing = TracerProvider()
tracing.add_span_processor(SimpleSpanProcessor(exporter))
emulator = ProviderEmulator(default_turn=Turn.text("ok")).start()
adapter = create_adapter("anthropic:claude-sonnet-4-6", base_url=emulator.base_url("anthropic"),
                         api_key="k")
traced = create_adapter("anthropic:claude-sonnet-4-6", base_url=emulator.base_url("anthropic"),
                        api_key="k", tracer_provider=tracing)
hello = Prompt(name="hi", sections=[MarkdownSection(key="t", title="T", template="Hi.")])
"""


def _child(body: str, *arguments: str) -> subprocess.Popen[str]:
    code = _SETUP + textwrap.dedent(body)
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen(
        [sys.executable, *arguments, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def test_ctrl_c_during_evaluate_prints_one_traceback_after_the_finally_blocks_ran() -> None:
    child = _child(
        """
        import atexit
        def report():
            deadline = time.monotonic() + 5
            while emulator.open_connections and time.monotonic() < deadline:
                time.sleep(0.01)
            ended = [span.name for span in exporter.get_finished_spans()]
            print(f"open={emulator.open_connections} spans={ended}", flush=True)
        atexit.register(report)
        emulator.inject(Fault.latency(30))
        print("ready", flush=True)
        traced.evaluate(hello, session=Session())
        """
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    import time

    time.sleep(1.0)  # the request is out, the emulator holds its answer
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode != 0
    assert err.count("Traceback (most recent call last)") == 1, err
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert "Task exception was never retrieved" not in err
    assert "open=0" in out  # the response was closed
    assert "invoke_agent" in out or "chat" in out, out  # the spans were ended


@pytest.mark.parametrize(("calls", "deadline"), [(1, None), (2, None), (1, 30)])
def test_system_exit_from_a_tool_propagates_once(calls: int, deadline: int | None) -> None:
    child = _child(
        f"""
        from wink import Deadline
        calls = {calls}
        deadline = {f"Deadline.after({deadline})" if deadline else None}
        from dataclasses import dataclass
        @dataclass
        class Nothing:
            pass
        def quit_now(params: Nothing, *, context) -> ToolResult[str]:
            sys.exit(3)
        tool = Tool(name="quit", description="Quit", handler=quit_now)
        prompt = Prompt(name="q", sections=[
            MarkdownSection(key="t", title="T", template="Go.", tools=[tool])])
        emulator.set_script([Turn.tool_calls(*[EmulatedToolCall("quit", {{}})] * calls)])
        adapter.evaluate(prompt, session=Session(), deadline=deadline)
        print("not reached")
        """
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 3, err
    assert "not reached" not in out
    assert err == ""


def test_an_interpreter_exit_after_sync_calls_and_streams_is_quiet() -> None:
    child = _child(
        """
        emulator.set_streaming(chunk_size=3, chunk_delay=0.02)
        adapter.evaluate(hello, session=Session())
        for event in adapter.stream(hello, session=Session()):
            pass
        stream = adapter.stream(hello, session=Session())
        next(iter(stream))  # left open: exit closes it
        print("done")
        """,
        "-W",
        "default",
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.strip() == "done"
    assert err == ""


@pytest.mark.parametrize("options", [[], ["--stream"]])
def test_wink_demo_piped_into_head_exits_quietly(options: list[str]) -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    demo = subprocess.Popen(
        [sys.executable, "-m", "wink", "demo", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert demo.stdout is not None
    assert demo.stderr is not None
    demo.stdout.readline()  # `| head -1`: read one line, then stop reading
    demo.stdout.close()
    err = demo.stderr.read().decode()
    demo.wait(timeout=60)
    assert err == ""
    assert "BrokenPipeError" not in err
