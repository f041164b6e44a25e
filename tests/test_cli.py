"""`wink demo` (the main job), `wink emulator` and `wink --help`, as a newcomer runs them."""

from __future__ import annotations

import json
import logging
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from genai_prices import Usage as GenaiUsage, calc_price

import wink
from wink.cli import main
from wink.core.foundation.errors import DeadlineExceededError, PromptEvaluationError
from wink.demo import describe_failure, format_arguments, run_demo
from wink.testing import Fault

PROVIDERS = ["anthropic", "openai", "openai-responses", "google"]

# The one line the demo shows for the tool that raises (no traceback on screen).
BROKEN_TOOL_NOTICE = (
    "⚠ tool station_status failed: ConnectionError: station PAR-01 did not answer "
    "→ sent back to the model; wink logs the traceback on wink.tools"
)
SHOWN = {"→ ", "⚠ ", "✘ ", "⏳ ", "✔ "}  # the prefixes of the lines TOOL_LINES lists

# The lines the demo prints for its scripted model, in order, the same for every provider.
TOOL_LINES = [
    "→ prompt 'weather-agent' with tools get_forecast, station_status",
    BROKEN_TOOL_NOTICE,
    '✘ get_forecast(city="Paris", days="soon") → Invalid arguments for \'get_forecast\': '
    "days: Input should be a valid integer, unable to parse string as an integer",
    '✘ station_status(station="PAR-01") → ConnectionError: station PAR-01 did not answer',
    "✘ lookup_city(name=\"Paris\") → Unknown tool 'lookup_city'. "
    "Available tools: get_forecast, station_status.",
    "⏳ HTTP 429 rate_limit on attempt 1: the provider asked to wait 0.3s; attempt 2 in #s",
    "⏳ HTTP 429 rate_limit on attempt 2: the provider asked to wait 0.3s; attempt 3 in #s",
    '✔ get_forecast(city="Paris", days=2) → forecast',
]
# The demo's model per provider, and the genai-prices id its answers are priced under.
DEMO_MODELS = {
    "openai": ("gpt-4.1-mini", "openai"),
    "openai-responses": ("gpt-4.1-mini", "openai"),
    "anthropic": ("claude-sonnet-4-6", "anthropic"),
    "google": ("gemini-2.5-flash", "google"),
}


def summary_lines(provider: str) -> list[str]:
    """The demo's last lines: what the emulator saw, the usage, and what genai-prices
    itself says that usage costs on the demo's model."""
    model, provider_id = DEMO_MODELS[provider]
    price = calc_price(
        GenaiUsage(input_tokens=30, output_tokens=15), model, provider_id=provider_id
    )
    return [
        "emulator: 5 requests, 2 answered 429",
        "usage: 3 requests, 30 input tokens, 15 output tokens, 3 rounds",
        f"cost: ${price.total_price:f}",
    ]


# The last step: a tool that waits for a person, approved by the demo's policy.
APPROVAL_LINES = [
    "── a tool that asks a person first",
    "→ prompt 'storm-alert' with tools send_alert",
    '⏸ send_alert(city="Paris", subscribers=12000) waits for a person',
    "  policy: at most 50,000 subscribers → approved",
    "  the transcript, saved as JSON and read back, resumes the run",
    "→ prompt 'storm-alert' with tools send_alert",
    '✔ send_alert(city="Paris", subscribers=12000) → alert sent to 12000 subscribers in Paris',
]


def approval_cost_line(provider: str) -> str:
    """The last step's cost: its two rounds (before and after the approval, 10 input and 5
    output tokens each), each priced by genai-prices itself on the demo's model."""
    model, provider_id = DEMO_MODELS[provider]
    one = calc_price(GenaiUsage(input_tokens=10, output_tokens=5), model, provider_id=provider_id)
    return f"cost: ${one.total_price + one.total_price:f}"


def _step(lines: list[str]) -> list[str]:
    """The lines of the last step, up to its answer."""
    start = lines.index(APPROVAL_LINES[0])
    return lines[start : start + len(APPROVAL_LINES)]


def _before_step(lines: list[str]) -> list[str]:
    return lines[: lines.index(APPROVAL_LINES[0])]


def _lines(out: str) -> list[str]:
    # the waits are jittered: '0.36s' -> '#s'
    return [re.sub(r"in \d+\.\d\ds$", "in #s", line.rstrip()) for line in out.splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_demo_shows_the_whole_contract(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--provider", provider]) == 0
    lines = _lines(capsys.readouterr().out)
    shown = [line for line in _before_step(lines) if line[:2] in SHOWN]
    assert shown == TOOL_LINES
    assert _before_step(lines)[-3:] == summary_lines(provider)
    assert _step(lines) == APPROVAL_LINES
    assert any("The storm alert went out to 12,000 subscribers" in line for line in lines)
    assert lines[-1] == approval_cost_line(provider)  # under the answer after the approval
    assert any("Paris: sunny tomorrow (21°C)" in line for line in lines)
    assert any(f"failed tool results as sent to {provider}" in line for line in lines)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_demo_failure_prints_class_phase_and_message(
    provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo(provider=provider, script=[Fault.unauthorized()]) == 1
    lines = _lines(capsys.readouterr().out)
    failure = [line for line in lines if line.startswith("✘ evaluation failed")]
    assert len(failure) == 1, lines
    assert failure[0].startswith("✘ evaluation failed: AuthenticationError in phase 'request': ")
    assert "HTTP 401" in failure[0]
    assert "prompt_name=" not in failure[0]  # not the repr


@pytest.mark.slow
@pytest.mark.parametrize(("typed", "answer"), [("y", "went out"), ("", "did not send")])
def test_with_ask_a_person_approves_or_denies_the_risky_tool(
    typed: str, answer: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or typed)
    assert main(["demo", "--provider", "anthropic", "--ask"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert asked == ["  approve send_alert? [y/N] "]
    decided = "approved" if typed else "denied"
    assert f"  you → {decided}" in lines
    assert any(answer in line for line in lines)


def test_the_demo_policy_denies_an_alert_to_too_many_people() -> None:
    from wink import PendingToolCall
    from wink.demo_approval import policy

    assert policy(PendingToolCall("c", "send_alert", {"city": "Paris", "subscribers": 50_000}))
    assert not policy(PendingToolCall("c", "send_alert", {"city": "Paris", "subscribers": 50_001}))
    assert not policy(PendingToolCall("c", "send_alert", {"city": "Paris"}))


def test_describe_failure() -> None:
    evaluation = PromptEvaluationError("no final answer", prompt_name="p", phase="tool")
    assert describe_failure(evaluation) == "PromptEvaluationError in phase 'tool': no final answer"
    deadline = DeadlineExceededError("deadline passed", prompt_name="p")
    assert describe_failure(deadline) == "DeadlineExceededError: deadline passed"


def test_throttle_failure_says_kind_and_whether_to_retry(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_demo(provider="google", script=[Fault.quota_exhausted()]) == 1
    out = capsys.readouterr().out
    assert (
        "✘ evaluation failed: ThrottleError in phase 'request' "
        "(quota_exhausted, not retry-safe, 1 attempt): HTTP 429" in out
    )


def test_arguments_are_shown_one_way_however_they_arrived() -> None:
    from wink.demo import ForecastParams

    expected = 'city="Paris", days=2'
    assert format_arguments(ForecastParams("Paris", 2)) == expected  # validated
    assert format_arguments({"city": "Paris", "days": 2}) == expected  # Anthropic, Gemini
    assert format_arguments('{"city":"Paris","days":2}') == expected  # OpenAI
    assert format_arguments('{"city": "Par') == '<not JSON: \'{"city": "Par\'>'


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_demo_runs_in_plain_text_without_rich() -> None:
    done = _run(
        "import sys\n"
        "sys.modules['rich'] = None  # as if the cli extra were not installed\n"
        "from wink.cli import main\n"
        "sys.exit(main(['demo', '--provider', 'openai']))\n"
    )
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert [line for line in _before_step(lines) if line[:2] in SHOWN] == TOOL_LINES
    assert _before_step(lines)[-3:] == summary_lines("openai")
    assert _step(lines) == APPROVAL_LINES
    assert "--- final answer ---" in lines
    assert not any(character in done.stdout for character in "╭│┃")  # no rich boxes


def test_demo_without_the_provider_sdk_says_what_to_install() -> None:
    done = _run(
        "import sys\n"
        "sys.modules['anthropic'] = None\n"
        "from wink.cli import main\n"
        "sys.exit(main(['demo', '--provider', 'anthropic']))\n"
    )
    assert done.returncode == 1
    assert "pip install 'wink[anthropic]'" in done.stdout
    assert "Traceback" not in done.stderr


def test_demo_live_needs_a_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    assert main(["demo", "--live", "--provider", "anthropic"]) == 2
    out = capsys.readouterr().out
    assert "--live needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the environment" in out


@pytest.mark.parametrize("variable", ["GOOGLE_API_KEY", "GEMINI_API_KEY"])
def test_demo_live_on_google_reads_the_variables_the_adapter_reads(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str
) -> None:
    """Either variable gets past the key check (the adapter reads GOOGLE_API_KEY, then
    GEMINI_API_KEY); with neither, the demo names both, in that order."""
    from wink import demo

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["demo", "--live", "--provider", "google"]) == 2
    out = capsys.readouterr().out
    assert "--live needs GOOGLE_API_KEY or GEMINI_API_KEY in the environment" in out
    monkeypatch.setenv(variable, "a-key")
    assert demo._missing_key("google") is None


@pytest.mark.slow
@pytest.mark.parametrize("mode", [[], ["--stream"]], ids=["evaluated", "streamed"])
def test_python_dash_m_wink_runs_the_demo(mode: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wink", "demo", "--provider", "openai", *mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "final answer" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
def test_a_raising_tool_is_one_line_of_the_demo_not_a_traceback() -> None:
    """Run as a newcomer runs it (no logging configured, where Python prints a warning's
    traceback to stderr): the failure is one notice, the run goes on."""
    done = subprocess.run(
        [sys.executable, "-m", "wink", "demo", "--provider", "google"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr == ""
    assert BROKEN_TOOL_NOTICE in _lines(done.stdout)


@pytest.mark.slow
def test_the_demo_leaves_the_librarys_log_to_the_application(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    with caplog.at_level("WARNING", logger="wink.tools"):
        assert main(["demo", "--provider", "anthropic"]) == 0
    (record,) = [r for r in caplog.records if r.name == "wink.tools"]
    assert record.exc_info is not None  # the traceback is still logged, for the application
    assert BROKEN_TOOL_NOTICE in _lines(capsys.readouterr().out)
    assert logging.getLogger("wink.tools").handlers == []  # the demo's handler is gone


# --- help and version


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_help_describes_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys)
    assert "wink runs one prompt-with-tools loop over OpenAI, Anthropic and Google Gemini" in text
    assert "argument parsing" not in text  # not the module's docstring
    for command in ("demo", "emulator"):
        assert re.search(rf"^\s+{command}\s+\w", text, re.MULTILINE), command
    assert "examples:" in text


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("demo", ["--provider", "--live", "--stream", "--ask", "--batch", "--resume", "--model"]),
        ("emulator", ["--port", "--host", "--script"]),
    ],
)
def test_every_option_has_help_with_its_default(
    command: str, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(capsys, command)
    listing = text[text.index("options:") :]
    blocks = re.split(r"\n  (?=-)", listing)  # one block per option
    for option in options:
        block = next(b for b in blocks if b.startswith(option))
        assert "(default:" in " ".join(block.split()), block


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"wink {wink.__version__}"


# --- wink emulator


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_emulator_command_serves_the_wire_formats() -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "wink", "emulator", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        body = json.dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]})
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=body.encode(),
            headers={"content-type": "application/json", "authorization": "Bearer x"},
        )
        for _ in range(100):
            try:
                with urllib.request.urlopen(request, timeout=2) as answer:
                    reply = json.loads(answer.read())
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("the emulator did not come up")
        assert reply["object"] == "chat.completion"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_emulator_on_a_port_in_use_says_so_in_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "wink", "emulator", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"wink emulator: port {port} on 127.0.0.1 is already in use; stop the program "
        "using it, or choose another port with --port (--port 0 picks a free one)"
    ]


def test_emulator_rejects_a_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["emulator", "--port", "70000"])
    assert exited.value.code == 2
    assert "port must be in 0..65535" in capsys.readouterr().err


SCRIPT = {
    "script": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_1"}]},
        {"fault": "rate_limit", "retry_after": 0.25},
        {"text": "Sunny in Paris.", "thinking": "The tool said so."},
    ],
    "default_turn": {"text": "That is all."},
}


def test_emulator_answers_from_a_script_file(tmp_path: Path) -> None:
    """A script written by another process, served by the command, read by real SDKs."""
    (tmp_path / "turns.json").write_text(json.dumps(SCRIPT))
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "wink", "emulator", "--script", "turns.json", "--port", str(port)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    root = f"http://127.0.0.1:{port}"
    try:
        assert process.stdout is not None
        assert root in process.stdout.readline()  # listening
        chat = openai.OpenAI(api_key="test", base_url=f"{root}/v1", max_retries=0)
        claude = anthropic.Anthropic(api_key="test", base_url=root, max_retries=0)
        ask: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "?"}]}
        call = chat.chat.completions.create(**ask).choices[0].message.tool_calls or []
        assert [(c.id, c.function.name, c.function.arguments) for c in call] == [
            ("call_1", "get_weather", '{"city":"Paris"}')
        ]
        with pytest.raises(openai.RateLimitError) as throttled:
            chat.chat.completions.create(**ask)
        assert throttled.value.response.headers["retry-after"] == "0.25"
        answer = claude.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=4096,
            thinking={"type": "enabled", "budget_tokens": 2048},
            messages=[{"role": "user", "content": "?"}],
        )
        assert [block.type for block in answer.content] == ["thinking", "text"]
        assert answer.content[1].to_dict()["text"] == "Sunny in Paris."
        assert chat.chat.completions.create(**ask).choices[0].message.content == "That is all."
        chat.close()
        claude.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def test_emulator_refuses_a_bad_script_file_in_one_line(tmp_path: Path) -> None:
    bad = {"script": [{"text": "ok"}, {"fault": "rate_limited"}]}
    (tmp_path / "turns.json").write_text(json.dumps(bad))
    done = subprocess.run(
        [sys.executable, "-m", "wink", "emulator", "--script", "turns.json", "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # it never listened
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "wink emulator: turns.json: script[1].fault: unknown fault kind 'rate_limited' (known: "
    )
