"""`serve()` in the foreground: prints the base URLs, answers any SDK, stops on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx
import pytest


@pytest.mark.slow
def test_serve_prints_urls_answers_and_stops_on_sigint() -> None:
    code = "from wink.testing import serve; serve(0)"
    process = subprocess.Popen(
        [sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", banner)
        assert match is not None, banner
        root = match.group(0)
        assert f"base_url={root}/v1" in process.stdout.readline()
        body = {"model": "claude-x", "max_tokens": 5, "messages": []}
        reply = httpx.post(f"{root}/v1/messages", json=body, timeout=5)
        assert reply.json()["content"][0]["text"] == "Hello from the wink provider emulator."
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0  # generous: CI machines can be loaded
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_serve_prints_an_internal_error_as_it_happens() -> None:
    """The standalone server has no test to fail: it tells its stderr."""
    code = (
        "from wink.testing import serve\n"
        "from wink.testing.wire import WIRES\n"
        "def bug(*args, **kwargs):\n"
        "    raise KeyError('input')\n"
        "WIRES['anthropic'].render_turn = bug  # an emulator bug, planted\n"
        "serve(0)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-u", "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        match = re.search(r"http://127\.0\.0\.1:(\d+)", process.stdout.readline())
        assert match is not None
        body = {"model": "claude-x", "max_tokens": 5, "messages": []}
        reply = httpx.post(f"{match.group(0)}/v1/messages", json=body, timeout=5)
        assert reply.status_code == 418
        assert process.stderr.readline().startswith(
            "wink emulator internal error: KeyError('input') while answering request #1 "
            "(POST /v1/messages)."
        )
    finally:
        process.kill()
        process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
