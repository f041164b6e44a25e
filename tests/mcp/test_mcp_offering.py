"""Which tools of an MCP server the model is offered, under which names, and what it
reads back: prefixes, filters, names providers refuse, clashes, content."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import Recorder, make_adapter
from tests.helpers.mcp_servers import prompt_with, stdio_server
from wink import (
    ConfigurationError,
    MarkdownSection,
    Prompt,
    PromptFailed,
    PromptValidationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    apply_visibility,
)
from wink.mcp import MCPServerStdio
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md


@pytest.fixture(scope="module")
def server() -> Iterator[MCPServerStdio]:
    with stdio_server() as opened:
        yield opened


def offered(emulator: ProviderEmulator, *servers: Any, tools: Any = ()) -> tuple[str, ...]:
    """The tool names the model is offered by a prompt with `servers` (and `tools`)."""
    return offered_by(emulator, prompt_with(*servers, tools=tools))


def offered_by(
    emulator: ProviderEmulator, prompt: Any, opened: Any = None, provider: str = "anthropic"
) -> tuple[str, ...]:
    """The tool names the model is offered by `prompt`, with the sections `opened`."""
    session = Session()
    if opened is not None:
        apply_visibility(session, opened)
    recorder = Recorder(Turn.text("ok"))
    emulator.set_script(recorder)
    make_adapter(provider, emulator).evaluate(prompt, session=session)
    return recorder.seen[0].tools


def test_a_prefix_goes_before_every_name_and_a_name_providers_refuse_is_made_safe(
    emulator: ProviderEmulator,
) -> None:
    with stdio_server(prefix="kb") as server:
        names = offered(emulator, server)
        assert "kb_add" in names
        assert "kb_db_query" in names  # "db.query" on the server
        emulator.set_script(
            [Turn.tool_calls(EmulatedToolCall("kb_db_query", {"sql": "select 1"})), Turn.text("ok")]
        )
        session = Session()
        make_adapter("openai", emulator).evaluate(prompt_with(server), session=session)
    (event,) = session[ToolInvoked]
    assert event.result.message == "ran select 1"  # called by its own name on the server


@pytest.mark.parametrize(
    ("tool_filter", "expected"),
    [
        (["add", "search"], ("add", "search")),
        (lambda name: name.startswith("s"), ("search", "secret_error", "slow")),
    ],
)
def test_a_filter_picks_the_tools_offered(
    emulator: ProviderEmulator, tool_filter: Any, expected: tuple[str, ...]
) -> None:
    with stdio_server(tool_filter=tool_filter) as server:
        assert tuple(sorted(offered(emulator, server))) == expected


def test_a_filter_naming_a_tool_the_server_lacks_is_a_configuration_error(
    emulator: ProviderEmulator,
) -> None:
    emulator.set_script([Turn.text("never")])
    session = Session()
    with (
        stdio_server(tool_filter=["add", "sum"]) as server,
        pytest.raises(ConfigurationError) as raised,
    ):
        make_adapter("openai", emulator).evaluate(prompt_with(server), session=session)
    assert str(raised.value).startswith(
        "tool_filter of MCP server 'python' names tools it does not have: sum (it has: add, "
    )
    assert raised.value.option == "tool_filter"
    assert session[PromptFailed]
    assert not emulator.requests  # nothing was sent


def test_two_servers_with_clashing_names_need_a_prefix(emulator: ProviderEmulator) -> None:
    with (
        stdio_server("--tools", "search,add", name="docs") as docs,
        stdio_server("--tools", "search", name="web") as web,
    ):
        with pytest.raises(ConfigurationError) as raised:
            offered(emulator, docs, web)
        message = str(raised.value)
        assert message.startswith("two tools are named 'search': one of MCPServerStdio(name='docs'")
        assert "one of MCPServerStdio(name='web'" in message
        assert message.endswith("give the server a prefix= to tell them apart, or filter one out")

        with stdio_server("--tools", "search", name="web", prefix="web") as prefixed:
            assert sorted(offered(emulator, docs, prefixed)) == ["add", "search", "web_search"]


@dataclass(frozen=True)
class AddParams:
    a: int
    b: int


def add_locally(params: AddParams, *, context: ToolContext) -> ToolResult[int]:
    return ToolResult.ok(params.a + params.b)


def test_a_server_tool_named_like_a_tool_of_the_prompt_clashes(
    emulator: ProviderEmulator, server: MCPServerStdio
) -> None:
    local = Tool(name="add", description="Adds, locally", handler=add_locally)
    with pytest.raises(
        ConfigurationError, match="one of this prompt's own tools, one of MCPServer"
    ):
        offered(emulator, server, tools=[local])


def test_one_server_in_two_sections_is_offered_once(
    emulator: ProviderEmulator, server: MCPServerStdio
) -> None:
    prompt = Prompt(
        name="twice",
        sections=[
            MarkdownSection(key="a", title="A", template="a", mcp_servers=[server]),
            MarkdownSection(key="b", title="B", template="b", mcp_servers=[server]),
        ],
    )
    assert offered_by(emulator, prompt, provider="google").count("add") == 1


def test_a_server_in_a_summarized_section_is_offered_once_it_is_opened(
    emulator: ProviderEmulator, server: MCPServerStdio
) -> None:
    prompt = Prompt(
        name="hidden",
        sections=[
            MarkdownSection(
                key="extra", title="Extra", template="t", summary="s", mcp_servers=[server]
            )
        ],
    )
    assert offered_by(emulator, prompt) == ("open_sections",)
    assert "add" in offered_by(emulator, prompt, opened={("extra",): "full"})


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_image_reaches_the_model_as_a_part_and_audio_as_a_note(
    provider: str, emulator: ProviderEmulator, server: MCPServerStdio
) -> None:
    emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("picture", {}), EmulatedToolCall("recording", {})),
            Turn.text("Red.").expecting("image/png", "image/png"),  # both images arrived
        ]
    )
    session = Session()
    make_adapter(provider, emulator).evaluate(prompt_with(server), session=session)
    picture, recording = session[ToolInvoked]
    assert picture.result.message == "The tool returned the image/png image (69 bytes)."
    assert [part.media_type for part in picture.result.attachments] == ["image/png"]
    assert recording.result.message == (
        "a red pixel, and silence\n[audio, audio/wav, about 4 bytes, not shown: audio from a "
        "tool is not passed to the model]"
    )
    assert [part.media_type for part in recording.result.attachments] == ["image/png"]


def test_a_section_refuses_what_is_not_an_mcp_server() -> None:
    with pytest.raises(PromptValidationError, match="mcp_servers takes MCP servers"):
        MarkdownSection(key="a", title="A", template="a", mcp_servers=[sys.executable])  # type: ignore[list-item]
    with pytest.raises(PromptValidationError, match="mcp_servers must be a list of MCP servers"):
        MarkdownSection(key="a", title="A", template="a", mcp_servers=stdio_server())  # type: ignore[arg-type]
