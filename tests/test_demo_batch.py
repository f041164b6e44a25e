"""`wink demo --batch`: five questions as one provider batch, on every wire, and live
(against the emulator standing in for the provider) stopped and resumed from its JSON."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from wink import demo_batch
from wink.cli import main

PROVIDERS = ["anthropic", "openai", "openai-responses", "google"]
SUBMITTED = re.compile(
    r"^⇪ submitted 5 items \(paris, lyon, front, novel, outlook\) as batch (\S+)$"
)
NEXT_ROUND = re.compile(r"paris, lyon wait for their next round, in batch (\S+)$")
TOOL_ROUND = [
    '  paris: ✔ get_forecast(city="Paris", days=2) → forecast',
    '  lyon: ✘ get_forecast(city="Lyon", days=1) → no forecast for Lyon; try Paris',
]
RESULTS = [
    "── results (adapter.batch_results(job))",
    "✔ paris (2 rounds): Paris: sunny tomorrow (21°C), light rain the day after (17°C).",
    "✔ lyon (2 rounds): I have no forecast for Lyon; the nearest one I have is for Paris.",
    "✔ front (1 round): A boundary between two air masses of different temperature.",
    "✘ novel: BadRequestError in phase 'request': HTTP 400: 1,000,000 output tokens were "
    "asked for; this model writes at most 64,000",
    "✔ outlook (1 round): Outlook(city='Paris', summary='sunny, 21°C')",
]


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


def _check_the_run(lines: list[str]) -> None:
    """A tool round between two batches, a failed tool recovered, a refused item, the
    job read back from its JSON before its second round, and each item's result."""
    first = next(m for line in lines if (m := SUBMITTED.match(line))).group(1)
    second = next(m for line in lines if (m := NEXT_ROUND.search(line))).group(1)
    assert first != second  # the tool round went into a new batch
    tools = lines.index(TOOL_ROUND[0])
    assert lines[tools : tools + 2] == TOOL_ROUND
    assert lines[tools - 1].startswith("⚙ the batch has ended: advance_batch(job)")
    assert lines[tools + 2].startswith("⟳ advanced: front, novel, outlook settled; ")
    held = (
        "  it holds: paris waiting for round 2, lyon waiting for round 2, front answered, "
        "novel failed (BadRequestError), outlook answered"
    )
    read_back = [i for i, line in enumerate(lines) if line.startswith("↺ read back with ")]
    assert len(read_back) == 1
    assert lines[read_back[0] - 1] == held
    assert f"2 waiting in '{second}')" in lines[read_back[0]]
    assert lines[-len(RESULTS) :] == RESULTS


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_batch_demo_runs_a_tool_round_and_resumes_from_json(
    provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--batch", "--provider", provider]) == 0
    lines = _lines(capsys.readouterr().out)
    _check_the_run(lines)
    polls = [line for line in lines if line.startswith("· poll: ")]
    assert polls[-1].endswith("is completed (2 answered, 0 failed, 0 pending of 2)")
    assert any(line.endswith("(4 answered, 1 failed, 0 pending of 5)") for line in polls)
    if provider.startswith("openai"):  # its batches write their files before they complete
        assert any(" is finalizing " in line for line in polls)


@pytest.mark.parametrize("flag", ["--stream", "--ask"])
def test_batch_is_not_combined_with_stream_or_ask(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--batch", flag])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "wink demo: error: --batch cannot be combined with --stream or --ask" in error


@pytest.mark.parametrize("argv", [["--resume", "job.json"], ["--batch", "--resume", "job.json"]])
def test_resume_needs_a_live_batch(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo", *argv])
    assert exited.value.code == 2
    assert "--resume needs --batch --live" in capsys.readouterr().err


def test_a_live_batch_stopped_while_it_runs_resumes_from_its_file(
    provider_emulator_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--live against the emulator standing in for Anthropic (its SDK's own variables):
    Ctrl-C while the batch runs says how to resume; a second run resumes from the file."""
    emulator = provider_emulator_factory(script=demo_batch.emulated_model, batch_items_per_poll=1)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url("anthropic"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-live-secret")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def interrupted(seconds: float) -> None:
        assert seconds == demo_batch.LIVE_POLL_SECONDS
        raise KeyboardInterrupt

    monkeypatch.setattr(demo_batch.time, "sleep", interrupted)
    assert main(["demo", "--batch", "--live", "--provider", "anthropic"]) == 130
    stopped = _lines(capsys.readouterr().out)
    assert "LIVE · batch" in stopped[1]
    hint = stopped[-1]
    assert hint.startswith("⏸ stopped waiting; the batch goes on at anthropic. Resume it later: ")
    saved = Path(hint.rsplit("--resume ", 1)[1])
    assert saved.parent == tmp_path
    assert saved.is_file()
    assert "sk-ant-live-secret" not in saved.read_text(encoding="utf-8")

    monkeypatch.setattr(demo_batch.time, "sleep", lambda seconds: None)
    resume = ["demo", "--batch", "--live", "--provider", "anthropic", "--resume", str(saved)]
    assert main(resume) == 0
    lines = _lines(capsys.readouterr().out)
    resumed = lines[3]  # after the panel's three lines
    assert resumed.startswith("↺ read back with ")
    assert "5 items, 5 waiting in" in resumed
    assert not any(SUBMITTED.match(line) for line in lines)  # nothing submitted again
    assert lines[-len(RESULTS) :] == RESULTS
    assert lines.index(TOOL_ROUND[0]) + 1 == lines.index(TOOL_ROUND[1])


def test_resuming_a_job_of_another_provider_says_so(
    provider_emulator_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    emulator = provider_emulator_factory(script=demo_batch.emulated_model)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url("anthropic"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    saved = tmp_path / "job.json"
    saved.write_text(
        '{"version":1,"type":"wink.batch_job","id":"batch_1","provider":"openai:gpt-4.1-mini",'
        + '"items":['
        + ",".join(
            f'{{"key":"{key}","prompt":"weather-{key}","state":{{"round":1,'
            '"transcript":{"version":1,"messages":[]}}}'
            for key in demo_batch.QUESTIONS
        )
        + "]}",
        encoding="utf-8",
    )
    argv = ["demo", "--batch", "--live", "--provider", "anthropic", "--resume", str(saved)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "✘ batch failed: InvalidArgumentError" in out
    assert "submitted by openai:gpt-4.1-mini" in out
    assert emulator.requests == []


def test_a_missing_job_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    missing = tmp_path / "nothing.json"
    argv = ["demo", "--batch", "--live", "--provider", "openai", "--resume", str(missing)]
    assert main(argv) == 1
    assert f"✘ cannot read or write the job file {missing}" in capsys.readouterr().out


@pytest.mark.slow
def test_python_dash_m_wink_runs_the_batch_demo_in_plain_text() -> None:
    code = (
        "import sys\n"
        "sys.modules['rich'] = None  # as if the cli extra were not installed\n"
        "from wink.cli import main\n"
        "sys.exit(main(['demo', '--batch', '--provider', 'google']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = _lines(done.stdout)
    _check_the_run(lines)
    assert lines[0].startswith("---")  # the plain screen's panel
