"""`serve()` in the foreground: prints the base URLs, answers any SDK, stops on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx


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
