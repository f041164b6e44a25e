"""How an MCP server's connection lives: opened once and reused by every entry point and
thread, restarted (stdio) or reconnected (HTTP) after it died, closed by `with server:`
or by the adapter that connected it, and nothing left behind once closed."""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path

import pytest

from tests.helpers.adapters import make_adapter
from tests.helpers.mcp_servers import (
    HttpProcess,
    alive,
    kill_when_started,
    mcp_sessions,
    prompt_with,
    stdio_server,
)
from wink import FallbackAdapter, Session, ToolInvoked
from wink.testing import EmulatedRequest, EmulatedToolCall, ProviderEmulator, Turn

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

PID = Turn.tool_calls(EmulatedToolCall("pid", {}))


def pids(session: Session) -> list[int]:
    return [event.result.value["result"] for event in session[ToolInvoked] if event.name == "pid"]


def test_one_connection_serves_every_entry_point_until_the_adapter_closes(
    ok_emulator: ProviderEmulator,
) -> None:
    server = stdio_server()  # never entered: connected on first use
    prompt = prompt_with(server)
    ok_emulator.set_script([PID, Turn.text("a")] * 4)
    adapter = make_adapter("anthropic", ok_emulator)
    session = Session()
    adapter.evaluate(prompt, session=session)

    async def on_a_loop() -> None:
        await adapter.evaluate_async(prompt, session=session)
        async with adapter.stream_async(prompt, session=session) as stream:
            async for _ in stream:
                pass

    asyncio.run(on_a_loop())
    with adapter.stream(prompt, session=session) as stream:
        streamed = [event for event in stream if isinstance(event, ToolInvoked)]

    (pid,) = set(pids(session))  # four evaluations, three event loops, one process
    assert len(session[ToolInvoked]) == 4
    assert streamed[0].source == "python"
    assert alive(pid)
    adapter.close()
    assert not alive(pid)
    assert not mcp_sessions()


def test_with_server_connects_at_once_and_only_its_block_closes_it(
    ok_emulator: ProviderEmulator,
) -> None:
    with stdio_server() as server:
        assert mcp_sessions()  # connected on entering, before any evaluation
        tools = asyncio.run(server.list_tools())
        assert "add" in {tool.name for tool in tools}
        ok_emulator.set_script([PID, Turn.text("a"), PID, Turn.text("b")])
        session = Session()
        with make_adapter("openai", ok_emulator) as adapter:
            adapter.evaluate(prompt_with(server), session=session)
        adapter.evaluate(prompt_with(server), session=session)  # the adapter closed: not it
        first, second = pids(session)
        assert first == second
        assert alive(first)
    assert not alive(first)
    assert not mcp_sessions()


async def test_async_with_server_and_concurrent_evaluations_share_one_process(
    ok_emulator: ProviderEmulator,
) -> None:
    ok_emulator.set_script(lambda request: PID if not request.tool_results else Turn.text("done"))
    adapter = make_adapter("google", ok_emulator)
    async with stdio_server() as server:
        prompt = prompt_with(server)
        sessions = [Session() for _ in range(6)]

        def in_a_thread(session: Session) -> None:
            adapter.evaluate(prompt, session=session)

        threads = [threading.Thread(target=in_a_thread, args=(s,)) for s in sessions[:3]]
        for thread in threads:
            thread.start()
        await asyncio.gather(*(adapter.evaluate_async(prompt, session=s) for s in sessions[3:]))
        for thread in threads:
            await asyncio.to_thread(thread.join)
        found = {pid for session in sessions for pid in pids(session)}
        (pid,) = found
        assert alive(pid)
        await adapter.aclose()
        assert alive(pid)  # entered: the adapter leaves it open
    assert not alive(pid)


def test_a_stdio_server_killed_mid_call_fails_that_call_and_is_restarted_next_time(
    tmp_path: Path, ok_emulator: ProviderEmulator
) -> None:
    marker = tmp_path / "started"
    killed: list[int] = []

    def script(request: EmulatedRequest) -> Turn | None:
        if request.number == 1:
            return PID
        if request.number == 2:
            killed.append(int(request.tool_results[0].text))
            kill_when_started(marker, lambda: killed[0])
            return Turn.tool_calls(
                EmulatedToolCall("slow", {"seconds": 60, "started": str(marker)})
            )
        return None  # the default turn: "ok"

    ok_emulator.set_script(script)
    server = stdio_server()  # the default timeout (60 s): the death is seen, not waited out
    session = Session()
    with make_adapter("anthropic", ok_emulator) as adapter:
        assert adapter.evaluate(prompt_with(server), session=session).text == "ok"
        (_, died) = session[ToolInvoked]
        assert not died.result.success
        assert died.result.code == "external_service_error"
        assert died.result.message == (
            "MCP server 'python' closed the connection during the call to 'slow' (it exited "
            "or was disconnected); it is restarted at the next evaluation"
        )
        assert ok_emulator.requests[2].body["messages"][-1]["content"][0]["is_error"] is True

        ok_emulator.set_script([PID])
        adapter.evaluate(prompt_with(server), session=session)
        restarted = pids(session)[-1]
        assert restarted != killed[0]
        assert alive(restarted)
    assert not alive(restarted)


def test_an_http_server_killed_mid_call_fails_that_call_and_is_reconnected_next_time(
    tmp_path: Path, ok_emulator: ProviderEmulator, http_process: HttpProcess
) -> None:
    marker = tmp_path / "started"
    kill_when_started(marker, lambda: http_process.process.pid)
    ok_emulator.set_script(
        [Turn.tool_calls(EmulatedToolCall("slow", {"seconds": 60, "started": str(marker)}))]
    )
    server = http_process.server()
    session = Session()
    with make_adapter("openai-responses", ok_emulator) as adapter:
        adapter.evaluate(prompt_with(server), session=session)
        (died,) = session[ToolInvoked]
        assert died.result.code == "external_service_error"
        assert "it is reconnected at the next evaluation" in died.result.message

        http_process.process.wait()
        http_process.restart()  # on the same port
        ok_emulator.set_script([Turn.tool_calls(EmulatedToolCall("add", {"a": 1, "b": 1}))])
        adapter.evaluate(prompt_with(server), session=session)
        assert session[ToolInvoked][-1].result.message == "2"


def test_a_server_connected_on_first_use_and_never_closed_warns_and_is_closed(
    ok_emulator: ProviderEmulator,
) -> None:
    ok_emulator.set_script([PID])
    session = Session()
    server = stdio_server()
    make_adapter("openai", ok_emulator).evaluate(prompt_with(server), session=session)
    (pid,) = pids(session)
    assert alive(pid)
    del server
    with pytest.warns(ResourceWarning, match="was never closed"):
        gc.collect()
    assert not alive(pid)
    assert not mcp_sessions()


def test_a_tool_that_outlasts_its_timeout_leaves_the_server_usable(
    ok_emulator: ProviderEmulator,
) -> None:
    ok_emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("slow", {"seconds": 30})),
            Turn.tool_calls(EmulatedToolCall("add", {"a": 2, "b": 2})),
        ]
    )
    session = Session()
    with stdio_server(timeout=0.5) as server, make_adapter("anthropic", ok_emulator) as adapter:
        adapter.evaluate(prompt_with(server), session=session)
    slow, add = session[ToolInvoked]
    assert slow.result.code == "timeout"
    assert add.result.message == "4"  # the same session, after the cancelled call


async def test_a_fallback_adapter_closes_the_servers_its_evaluations_connected(
    ok_emulator: ProviderEmulator,
) -> None:
    ok_emulator.set_script([PID])
    server = stdio_server()
    fallback = FallbackAdapter(
        [make_adapter("anthropic", ok_emulator), make_adapter("openai", ok_emulator)]
    )
    session = Session()
    await fallback.evaluate_async(prompt_with(server), session=session)
    (pid,) = pids(session)
    assert alive(pid)
    await fallback.aclose()
    assert not alive(pid)
