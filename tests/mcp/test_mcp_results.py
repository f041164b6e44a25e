"""What an MCP server's answers become (`wink.mcp.results`), read off the SDK's own types,
and the options a server refuses."""

from __future__ import annotations

import base64
import sys
from typing import Any

import mcp.types as types
import pytest

from wink import ConfigurationError, Document, InvalidArgumentError
from wink.mcp import MCPServerHTTP, MCPServerStdio
from wink.mcp.results import describe_error, offered_name, redactor, to_tool_result

PLAIN = redactor([])


def result(*content: Any, structured: Any = None, is_error: bool = False) -> Any:
    return types.CallToolResult(
        content=list(content), structured_content=structured, is_error=is_error
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def test_text_is_what_the_model_reads_and_structured_content_the_value() -> None:
    both = to_tool_result(result(text('{"total": 3}'), structured={"total": 3}), PLAIN)
    assert (both.message, both.value, both.exclude_value_from_context) == (
        '{"total": 3}',
        {"total": 3},
        True,
    )
    alone = to_tool_result(result(structured={"total": 3}), PLAIN)
    assert (alone.message, alone.value, alone.exclude_value_from_context) == (
        "",
        {"total": 3},
        False,  # the model reads the value as JSON
    )
    plain = to_tool_result(result(text("one"), text("two")), PLAIN)
    assert (plain.message, plain.value) == ("one\ntwo", "one\ntwo")
    assert to_tool_result(result(), PLAIN).message == "(the tool returned no content)"


def test_an_error_result_is_a_failed_result_in_the_tools_words_without_secrets() -> None:
    failed = to_tool_result(
        result(text("token abcd-1234 expired"), is_error=True), redactor(["Bearer abcd-1234"])
    )
    assert not failed.success
    assert failed.message == "token *** expired"
    silent = to_tool_result(result(is_error=True), PLAIN)
    assert silent.message == "the tool reported an error without a message"


def test_images_and_pdfs_become_parts_and_other_binary_content_a_note() -> None:
    pdf = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()
    blocks = [
        types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///b.txt", text="inside b"),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///c.pdf", blob=pdf, mime_type="application/pdf"
            ),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///d.bin", blob="AAAA", mime_type="application/octet-stream"
            ),
        ),
        types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
        types.AudioContent(type="audio", data="AAAAAA==", mime_type="audio/wav"),
    ]
    converted = to_tool_result(result(*blocks), PLAIN)
    assert converted.message.splitlines() == [
        "[resource file:///a.txt: a.txt]",
        "[resource file:///b.txt]",
        "inside b",
        "[resource file:///d.bin, application/octet-stream, about 3 bytes, not shown: binary "
        "content]",
        "[image, image/png, about 3 bytes, not shown: it could not be read as image/png "
        "(Image: the bytes are not image/png (their format is not recognised); give the "
        "media type the bytes have)]",
        "[audio, audio/wav, about 4 bytes, not shown: audio from a tool is not passed to the "
        "model]",
    ]
    (document,) = converted.attachments
    assert isinstance(document, Document)
    assert document.media_type == "application/pdf"


def test_names_are_made_safe_for_every_provider() -> None:
    assert offered_name("db.query/run", None) == "db_query_run"
    assert offered_name("3d", None) == "_3d"
    assert offered_name("search", "web") == "web_search"


def test_the_telling_exception_is_found_inside_exception_groups() -> None:
    group = BaseExceptionGroup("tasks", [ExceptionGroup("inner", [ConnectionError("refused")])])
    assert describe_error(group) == "ConnectionError: refused"
    assert describe_error(TimeoutError()) == "TimeoutError"


def test_a_secret_and_each_of_its_words_are_masked_and_short_values_are_not() -> None:
    mask = redactor(["Bearer tok-123456", "en", ""])
    assert mask("sent Bearer tok-123456, then tok-123456 in en") == "sent ***, then *** in en"


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: MCPServerStdio(""), ConfigurationError, "command must not be empty"),
        (lambda: MCPServerStdio("x", "server.py"), InvalidArgumentError, "args must be a list"),
        (
            lambda: MCPServerStdio("x", env={"KEY": 1}),  # type: ignore[dict-item]
            InvalidArgumentError,
            "env must map strings to strings; the entry 'KEY' does not",
        ),
        (lambda: MCPServerStdio("x", prefix="2fast"), ConfigurationError, "prefix '2fast'"),
        (lambda: MCPServerStdio("x", timeout=0), ConfigurationError, "timeout must be a positive"),
        (
            lambda: MCPServerStdio("x", tool_filter="add"),
            InvalidArgumentError,
            "tool_filter must be a collection of tool names or a function",
        ),
        (
            lambda: MCPServerHTTP("ftp://host/mcp"),
            ConfigurationError,
            "url must be an http:// or https:// URL",
        ),
        (lambda: MCPServerHTTP("http://h/mcp", headers=["x"]), InvalidArgumentError, "headers"),
    ],
)
def test_options_a_server_cannot_use_are_refused_where_they_are_given(
    make: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(")):
        make()


def test_the_repr_names_env_variables_never_their_values() -> None:
    server = MCPServerStdio(sys.executable, ["s.py"], env={"API_KEY": "very-secret-value"})
    assert repr(server) == (
        f"MCPServerStdio(name='{server.name}', command={sys.executable!r}, args=['s.py'], "
        "env=<API_KEY>)"
    )
