"""`wink demo` (the main job) and `wink emulator`, as a newcomer runs them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from wink.cli import main

PROVIDERS = ["anthropic", "openai", "openai-responses", "google"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_demo_shows_the_whole_contract(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--provider", provider]) == 0
    out = capsys.readouterr().out
    assert "Invalid arguments for 'get_forecast'" in out  # validation failure
    assert "ConnectionError: station PAR-01 did not answer" in out  # a raising tool
    assert "Unknown tool 'lookup_city'" in out  # unknown tool
    assert "HTTP 429 rate_limit" in out  # throttled, then retried
    assert "Paris: sunny tomorrow" in out  # the model recovered
    assert "1 answered 429" in out


def test_demo_live_needs_a_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["demo", "--live", "--provider", "anthropic"]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().out


def test_python_dash_m_wink_runs_the_demo() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wink", "demo", "--provider", "openai"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "final answer" in done.stdout


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
