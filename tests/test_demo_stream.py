"""`wink demo --stream`: tokens as they arrive, and a broken stream recovered, on every wire."""

from __future__ import annotations

import pytest

from wink.cli import main
from wink.demo import run_demo
from wink.demo_stream import FINAL
from wink.testing import EmulatedToolCall, Fault, Turn


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses", "google"])
def test_the_streamed_demo_breaks_and_recovers(
    provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--stream", "--provider", provider]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert "Let me check the forecast." in lines
    restart = next(i for i, line in enumerate(lines) if line.startswith("⟲ the stream broke"))
    broken = lines[restart - 1]
    assert FINAL.startswith(broken)  # a piece of the answer, shown before the break
    assert broken != FINAL
    assert lines[restart + 1] == FINAL  # then the whole answer, streamed again
    assert "overloaded, retry-safe" in lines[restart]
    usage = lines.index("usage: 2 requests, 20 input tokens, 10 output tokens, 2 rounds")
    assert lines[usage + 1] == "── a tool that asks a person first"  # the last step follows


def test_a_stream_that_cannot_recover_prints_the_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = [Fault.stream_error(after=2, kind="bad_request", message="bad request")]
    assert run_demo(provider="openai", script=[*script, Turn.text("never")], stream=True) == 1
    assert "✘ evaluation failed: BadRequestError in phase 'request'" in capsys.readouterr().out


def test_a_raising_tool_in_a_streamed_run_is_a_one_line_notice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = [
        Turn.tool_calls(EmulatedToolCall("station_status", {"station": "PAR-01"})),
        Turn.text("The station is down."),
    ]
    assert run_demo(provider="anthropic", script=script, stream=True) == 0
    captured = capsys.readouterr()
    assert (
        "⚠ tool station_status failed: ConnectionError: station PAR-01 did not answer "
        "→ sent back to the model; wink logs the traceback on wink.tools"
    ) in captured.out.splitlines()
    assert "Traceback" not in captured.out + captured.err
