"""Real MCP servers for the tests: `tests/mcp/mcp_server.py` (the `mcp` package's FastMCP
server), started over stdio by wink, or over streamable HTTP on loopback (`HttpProcess`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wink import MarkdownSection, Prompt
from wink.mcp import MCPServerHTTP, MCPServerStdio

SCRIPT = str(Path(__file__).parents[1] / "mcp" / "mcp_server.py")
SECRET_ENV = "env-secret-value-0123456789"
SECRET_HEADER = "Bearer header-secret-value-9876543210"


def stdio_server(*arguments: str, **options: Any) -> MCPServerStdio:
    """The test server, started by wink over stdio (with a secret in its environment)."""
    options.setdefault("env", {"TEST_API_KEY": SECRET_ENV})
    return MCPServerStdio(sys.executable, [SCRIPT, *arguments], **options)


class HttpProcess:
    """The test server serving streamable HTTP on loopback, in a process of its own that a
    test may kill and start again (on the same port)."""

    def __init__(self, *arguments: str) -> None:
        self.arguments = arguments
        self.port = 0
        self.process = self._start()

    def _start(self) -> subprocess.Popen[str]:
        command = [sys.executable, SCRIPT, "--http", "--port", str(self.port), *self.arguments]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])
        return process

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def server(self, **options: Any) -> MCPServerHTTP:
        options.setdefault("headers", {"Authorization": SECRET_HEADER})
        return MCPServerHTTP(self.url, **options)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.process = self._start()


def prompt_with(*servers: Any, tools: Any = ()) -> Prompt[None]:
    return Prompt(
        name="mcp",
        sections=[
            MarkdownSection(
                key="task",
                title="Task",
                template="Use the tools.",
                tools=tools,
                mcp_servers=servers,
            )
        ],
    )


def kill_when_started(marker: Path, pid: Callable[[], int]) -> threading.Thread:
    """A thread that kills the process `pid()` names once `marker` exists (a slow call
    has reached the server)."""

    def run() -> None:
        for _ in range(3000):  # 30 s at most
            if marker.exists():
                os.kill(pid(), signal.SIGKILL)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def alive(pid: int) -> bool:
    """True while `pid` is a running process (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def mcp_sessions() -> list[object]:
    """The MCP sessions open on wink's event loop (the keeper task of each)."""
    import asyncio

    from wink.core.foundation.runtime import running_portal

    current = running_portal()
    if current is None:
        return []
    tasks = asyncio.all_tasks(current.loop)
    return [task for task in tasks if task.get_coro().__qualname__ == "_Link._keep"]
