"""MCP tools on every wire format: real servers (stdio and streamable HTTP), the real SDKs,
the emulator. Each failure of an MCP call reaches the model as a failed result in the
provider's native form, and the evaluation goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.adapters import PROVIDERS, Recorder, make_adapter
from tests.helpers.mcp_servers import SECRET_ENV, HttpProcess, prompt_with, stdio_server
from wink import Session, ToolInvoked
from wink.mcp import MCPServerHTTP, MCPServerStdio
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[MCPServerStdio, MCPServerHTTP]]:
    """One stdio and one HTTP server for the module, opened once: every test reuses them."""
    process = HttpProcess()
    try:
        with (
            stdio_server(prefix="local", timeout=1.5) as local,
            process.server(prefix="web", name="web") as web,
        ):
            yield local, web
    finally:
        process.kill()


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


def test_one_evaluation_uses_tools_of_a_stdio_and_an_http_server(
    provider: str, emulator: ProviderEmulator, servers: tuple[MCPServerStdio, MCPServerHTTP]
) -> None:
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("local_add", {"a": 2, "b": 3}, id="call_stdio"),
            EmulatedToolCall("web_search", {"query": "mcp"}, id="call_http"),
        ),
        Turn.text("5, and results."),
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(prompt_with(*servers), session=session)

    assert response.text == "5, and results."
    offered = recorder.seen[0].tools
    assert {"local_add", "local_search", "web_add", "web_search"} <= set(offered)
    texts = [result.text for result in recorder.seen[1].tool_results]
    assert texts == ["5", "results for mcp"]
    events = session[ToolInvoked]
    assert [(event.name, event.source, event.result.success) for event in events] == [
        ("local_add", "python", True),  # named after its command by default
        ("web_search", "web", True),
    ]
    assert events[0].params == {"a": 2, "b": 3}
    assert events[0].result.value == {"result": 5}  # the structured content


def test_every_failure_of_an_mcp_call_reaches_the_model_as_a_failed_result(
    provider: str, emulator: ProviderEmulator, servers: tuple[MCPServerStdio, MCPServerHTTP]
) -> None:
    calls = [
        ("local_crash", {"reason": "oops"}),  # raises inside the server
        ("local_refuse", {"reason": "no"}),  # a result with isError
        ("web_declined", {"reason": "later"}),  # raises the SDK's ToolError
        ("web_protocol_error", {}),  # a JSON-RPC error instead of a result
        ("local_slow", {"seconds": 30}),  # outlasts the server's timeout (1.5 s)
        ("local_secret_error", {}),  # its error quotes the server's env
        ("local_add", {"a": "two", "b": 3}),  # arguments the server refuses
    ]
    recorder = Recorder(
        Turn.tool_calls(
            *(EmulatedToolCall(name, args, id=f"c{n}") for n, (name, args) in enumerate(calls))
        ),
        Turn.text("Understood."),
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(prompt_with(*servers), session=session)

    assert response.text == "Understood."
    events = session[ToolInvoked]
    assert [event.result.success for event in events] == [False] * len(calls)
    messages = [event.result.message for event in events]
    assert "Error executing tool crash" in messages[0]
    assert messages[1] == "refused: no"
    assert "declined: later" in messages[2]
    assert "protocol error (-32602): the server rejects this call" in messages[3]
    assert "did not answer the call to 'slow' within 1.5 s" in messages[4]
    assert events[4].result.code == "timeout"
    assert "key *** was refused" in messages[5]
    assert "integer" in messages[6]
    results = recorder.seen[1].tool_results
    assert len(results) == len(calls)
    for event, result in zip(events, results, strict=True):
        assert event.result.message in result.text
    assert SECRET_ENV not in json.dumps(emulator.requests[1].body)
    if provider in {"anthropic", "google"}:  # a native error flag
        assert all(result.is_error for result in results)
    else:  # OpenAI has none: the text says it
        assert all(result.text.startswith("Error") for result in results)


def test_a_ref_schema_reaches_gemini_written_out(
    emulator: ProviderEmulator, servers: tuple[MCPServerStdio, MCPServerHTTP]
) -> None:
    emulator.set_script(
        Recorder(
            Turn.tool_calls(EmulatedToolCall("local_distance", {"start": {"x": 3, "y": 4}})),
            Turn.text("5."),
        )
    )
    session = Session()
    make_adapter("google", emulator).evaluate(prompt_with(servers[0]), session=session)

    declarations = emulator.requests[0].body["tools"][0]["functionDeclarations"]
    (distance,) = [d for d in declarations if d["name"] == "local_distance"]
    schema: dict[str, Any] = distance["parametersJsonSchema"]
    text = json.dumps(schema)
    assert "$ref" not in text
    assert "$defs" not in text
    point = schema["properties"]["start"]
    assert point["properties"] == {
        "x": {"title": "X", "type": "number"},
        "y": {"title": "Y", "type": "number"},
    }
    assert schema["properties"]["end"]["anyOf"][0] == point  # the optional one, too
    (event,) = session[ToolInvoked]
    assert event.result.message == "5.0"


def test_openai_takes_an_mcp_schema_strict_only_when_it_can(
    emulator: ProviderEmulator, servers: tuple[MCPServerStdio, MCPServerHTTP]
) -> None:
    emulator.set_script(Recorder(Turn.text("ok")))
    make_adapter("openai", emulator).evaluate(prompt_with(servers[0]), session=Session())

    tools = {
        tool["function"]["name"]: tool["function"] for tool in emulator.requests[0].body["tools"]
    }
    assert tools["local_add"]["strict"] is True
    assert tools["local_add"]["parameters"]["additionalProperties"] is False
    assert not tools["local_distance"].get("strict")  # `end` has a default: not expressible
