"""A server that cannot start or be reached raises `ToolSourceError` when it connects,
naming the command or URL and no secret; secrets stay out of logs and reprs too; the tool
span names the server; closing leaves no process, thread or socket behind."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.adapters import make_adapter
from tests.helpers.mcp_servers import (
    SECRET_ENV,
    SECRET_HEADER,
    HttpProcess,
    alive,
    kill_when_started,
    mcp_sessions,
    prompt_with,
    stdio_server,
)
from wink import PromptFailed, Session, ToolInvoked, ToolSourceError
from wink.mcp import MCPServerHTTP, MCPServerStdio
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

SECRETS = (SECRET_ENV, SECRET_HEADER, SECRET_HEADER.split()[1], "query-secret-4242")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_command_that_does_not_exist_raises_at_connect() -> None:
    server = MCPServerStdio("/nonexistent/wink-mcp-server", ["--flag"], env={"K": SECRET_ENV})
    with pytest.raises(ToolSourceError) as raised, server:
        pass
    message = str(raised.value)
    assert message.startswith(
        "MCP server 'wink-mcp-server' could not be started or reached (the command "
        "'/nonexistent/wink-mcp-server --flag'): FileNotFoundError"
    )
    assert raised.value.source == "wink-mcp-server"
    assert raised.value.__cause__ is None  # nothing of the SDK's, which could quote more


def test_a_server_that_exits_at_once_fails_the_evaluation_that_needs_it(
    emulator: ProviderEmulator,
) -> None:
    server = MCPServerStdio(
        sys.executable, ["-c", "import sys; sys.exit(3)"], env={"K": SECRET_ENV}, name="broken"
    )
    session = Session()
    with (
        make_adapter("openai", emulator) as adapter,
        pytest.raises(ToolSourceError, match=r"^MCP server 'broken' could not be started"),
    ):
        adapter.evaluate(prompt_with(server), session=session)
    (failed,) = session[PromptFailed]
    assert isinstance(failed.error, ToolSourceError)
    assert not emulator.requests


def test_a_server_that_never_answers_the_handshake_is_stopped_at_its_connect_timeout(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    code = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
    server = MCPServerStdio(sys.executable, ["-c", code, str(pid_file)], connect_timeout=1)
    with pytest.raises(ToolSourceError, match=r"did not finish connecting within 1 s"):
        server.__enter__()
    assert not alive(int(pid_file.read_text()))


def test_an_http_server_that_is_not_there_is_named_by_its_url_and_no_secret() -> None:
    port = free_port()
    url = f"http://user:pass-secret-1234@127.0.0.1:{port}/mcp?token=query-secret-4242"
    server = MCPServerHTTP(url, headers={"Authorization": SECRET_HEADER})

    async def enter() -> None:
        async with server:
            pass

    with pytest.raises(ToolSourceError) as raised:
        asyncio.run(enter())
    message = str(raised.value)
    assert f"(the URL http://127.0.0.1:{port}/mcp?token=***): ConnectError" in message
    for secret in (*SECRETS, "pass-secret-1234"):
        assert secret not in message
        assert secret not in repr(server)
    assert repr(server) == (
        f"MCPServerHTTP(name='127.0.0.1', url='http://127.0.0.1:{port}/mcp?token=***', "
        "headers=<Authorization>)"
    )


def test_secrets_stay_out_of_reprs_results_and_logs(
    tmp_path: Path,
    ok_emulator: ProviderEmulator,
    http_process: HttpProcess,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    local = stdio_server(prefix="local")
    web = http_process.server(prefix="web")
    marker = tmp_path / "started"
    kill_when_started(marker, lambda: http_process.process.pid)
    ok_emulator.set_script(
        [
            Turn.tool_calls(
                EmulatedToolCall("local_secret_error", {}),
                EmulatedToolCall("web_slow", {"seconds": 60, "started": str(marker)}),
            )
        ]
    )
    session = Session()
    with make_adapter("google", ok_emulator) as adapter:
        adapter.evaluate(prompt_with(local, web), session=session)
    quoted, died = session[ToolInvoked]
    assert quoted.result.message.endswith("key *** was refused")
    assert not died.result.success
    assert "closed the connection during a call to 'slow'" in caplog.text  # logged
    seen = [caplog.text, repr(local), repr(web), *(repr(event) for event in session.events)]
    seen += [str(request.body) for request in ok_emulator.requests]
    for text in seen:
        for secret in SECRETS:
            assert secret not in text


def test_the_tool_span_names_the_server(ok_emulator: ProviderEmulator) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ok_emulator.set_script([Turn.tool_calls(EmulatedToolCall("add", {"a": 1, "b": 2}))])
    with (
        stdio_server(name="calculator") as server,
        make_adapter("anthropic", ok_emulator, tracer_provider=provider) as adapter,
    ):
        adapter.evaluate(prompt_with(server))
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool add"]
    assert span.attributes["wink.tool.source"] == "calculator"
    assert span.attributes["gen_ai.tool.name"] == "add"


def own_sockets_to(port: int) -> int:
    """How many sockets of this process are connected to `port` on loopback (Linux)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in inodes:
                count += 1
    return count


def test_nothing_is_left_behind_once_the_adapter_and_the_servers_are_closed(
    ok_emulator: ProviderEmulator, http_process: HttpProcess
) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("reads the socket table of Linux")
    pid_call = Turn.tool_calls(
        EmulatedToolCall("local_pid", {}), EmulatedToolCall("web_add", {"a": 1, "b": 2})
    )
    ok_emulator.set_script(lambda request: pid_call if not request.tool_results else None)
    local = stdio_server(prefix="local")  # connected on first use: the adapter closes it
    web = http_process.server(prefix="web")
    session = Session()
    adapter = make_adapter("openai", ok_emulator)
    adapter.evaluate(prompt_with(local, web), session=session)

    async def twice() -> None:
        await asyncio.gather(*(adapter.evaluate_async(prompt_with(local, web)) for _ in range(2)))

    asyncio.run(twice())
    pid: Any = session[ToolInvoked][0].result.value["result"]
    assert alive(pid)
    assert own_sockets_to(http_process.port) > 0
    adapter.close()

    assert not alive(pid)
    assert own_sockets_to(http_process.port) == 0
    assert not mcp_sessions()
