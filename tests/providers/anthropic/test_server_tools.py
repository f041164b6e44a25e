"""Anthropic's server tools and citations: the request carries them (with the beta flag),
the answer's blocks read back as neutral calls and citations, the transcript keeps them,
and a turn goes to another provider without them."""

from __future__ import annotations

import logging

import pytest

import wink
from tests.helpers.wire import load_recording
from wink.core.foundation.messages import AssistantMessage, ModelRequest, UserMessage
from wink.core.foundation.portable import CallIdRules, portable_messages
from wink.core.foundation.settings import ModelSettings
from wink.core.foundation.transcript import Transcript
from wink.providers.anthropic.messages import build_request, parse_response
from wink.providers.anthropic.server_tools import beta_headers
from wink.providers.openai.chat import build_request as chat_request

# Anthropic's documented web search answer (server_tool_use, its result, a text block
# citing a result): tests/conformance/anthropic_docs/
WEB_SEARCH_ANSWER = load_recording("anthropic_docs/web_search_answer.json")["response"]["body"]

CODE_ANSWER = {
    "id": "msg_02",
    "type": "message",
    "role": "assistant",
    "content": [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_02",
            "name": "bash_code_execution",
            "input": {"command": "python -c 'print(sum(range(11)))'"},
        },
        {
            "type": "bash_code_execution_tool_result",
            "tool_use_id": "srvtoolu_02",
            "content": {
                "type": "bash_code_execution_result",
                "stdout": "55\n",
                "stderr": "",
                "return_code": 0,
                "content": [],
            },
        },
        {"type": "text", "text": "The sum is 55."},
    ],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 100, "output_tokens": 20},
}


def _request(*tools: wink.WebSearch | wink.CodeExecution | wink.UrlContext) -> ModelRequest:
    return ModelRequest("p", (UserMessage("When was Claude Shannon born?"),), builtin_tools=tools)


def test_the_request_carries_each_server_tool_and_its_beta_flag() -> None:
    search = wink.WebSearch(
        max_uses=3,
        allowed_domains=["wikipedia.org"],
        user_location=wink.UserLocation(city="Paris", country="FR"),
    )
    request = _request(search, wink.CodeExecution(), wink.UrlContext())
    body = build_request(request, "claude-sonnet-4-5", ModelSettings())
    assert body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 3,
            "allowed_domains": ["wikipedia.org"],
            "user_location": {"type": "approximate", "city": "Paris", "country": "FR"},
        },
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    assert beta_headers(request.builtin_tools) == {
        "anthropic-beta": "code-execution-2025-08-25,web-fetch-2025-09-10"
    }
    assert beta_headers(_request(wink.WebSearch()).builtin_tools) is None


def test_a_web_search_answer_reads_as_a_call_citations_and_billed_searches() -> None:
    response = parse_response(WEB_SEARCH_ANSWER)
    assert response.builtin_calls == (
        wink.BuiltinToolCall(
            "anthropic",
            "web_search",
            "srvtoolu_01",
            queries=("claude shannon birth date",),
            sources=(
                wink.WebSource(
                    "https://en.wikipedia.org/wiki/Claude_Shannon", "Claude Shannon - Wikipedia"
                ),
            ),
        ),
    )
    assert response.usage.web_search_requests == 1
    text = response.text or ""
    (citation,) = response.citations
    assert citation.url == "https://en.wikipedia.org/wiki/Claude_Shannon"
    assert citation.cited_text == "Claude Elwood Shannon (April 30, 1916 - February 24, 2001)"
    assert citation.span is not None
    start, end = citation.span
    assert text[start:end] == "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan"


def test_a_code_run_reads_as_its_code_and_output() -> None:
    (call,) = parse_response(CODE_ANSWER).builtin_calls
    assert (call.tool, call.code, call.output) == (
        "code_execution",
        "python -c 'print(sum(range(11)))'",
        "55\n",
    )


def test_document_citations_carry_the_place_cited() -> None:
    answer = {
        "content": [
            {
                "type": "text",
                "text": "The grass is green.",
                "citations": [
                    {
                        "type": "char_location",
                        "cited_text": "The grass is green.",
                        "document_index": 0,
                        "document_title": "Facts",
                        "start_char_index": 0,
                        "end_char_index": 20,
                    },
                    {
                        "type": "page_location",
                        "cited_text": "green",
                        "document_index": 1,
                        "document_title": None,
                        "start_page_number": 2,
                        "end_page_number": 3,
                    },
                ],
            }
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    chars, pages = parse_response(answer).citations
    assert (chars.document_index, chars.document_title, chars.chars, chars.span) == (
        0,
        "Facts",
        (0, 20),
        (0, 19),
    )
    assert (pages.document_index, pages.pages, pages.chars) == (1, (2, 3), None)


def test_the_turn_echoes_its_own_blocks_and_keeps_them_in_the_transcript() -> None:
    response = parse_response(WEB_SEARCH_ANSWER)
    turn = AssistantMessage(
        response.text,
        native=response.native,
        origin="anthropic:claude",
        builtin_calls=response.builtin_calls,
        citations=response.citations,
    )
    history = Transcript([UserMessage("When?"), turn])
    again = Transcript.from_json(history.to_json())
    assert again == history
    assert again[1] == turn
    request = ModelRequest("p", (*again, UserMessage("And where?")))
    body = build_request(request, "claude-sonnet-4-5", ModelSettings())
    assert body["messages"][1]["content"] == WEB_SEARCH_ANSWER["content"]


def test_another_provider_gets_the_text_and_citations_without_the_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    response = parse_response(WEB_SEARCH_ANSWER)
    turn = AssistantMessage(
        response.text,
        native=response.native,
        origin="anthropic:claude",
        builtin_calls=response.builtin_calls,
        citations=response.citations,
    )
    with caplog.at_level(logging.INFO, logger="wink.portable"):
        (_, moved) = portable_messages((UserMessage("When?"), turn), "openai:gpt", CallIdRules())
    assert isinstance(moved, AssistantMessage)
    assert (moved.text, moved.native, moved.builtin_calls) == (response.text, None, ())
    assert moved.citations == response.citations
    assert "web_search" in caplog.text


@pytest.mark.parametrize(
    ("build", "wire"),
    [
        (lambda r: chat_request(r, "gpt-4o", ModelSettings()), "OpenAI Chat Completions"),
    ],
)
def test_a_wire_without_the_tool_refuses_it_naming_the_wire(build, wire) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(wink.UnsupportedFeatureError, match=wire) as caught:
        build(_request(wink.CodeExecution()))
    assert caught.value.feature == "code_execution"


def test_bad_builtin_tools_are_refused_where_given() -> None:
    with pytest.raises(wink.InvalidArgumentError, match="not both"):
        wink.WebSearch(allowed_domains=["a.com"], blocked_domains=["b.com"])
    with pytest.raises(wink.InvalidArgumentError, match="max_uses"):
        wink.WebSearch(max_uses=0)
    with pytest.raises(wink.PromptValidationError, match="twice"):
        wink.Prompt("p", [], builtin_tools=[wink.WebSearch(), wink.WebSearch(max_uses=2)])
    with pytest.raises(wink.PromptValidationError, match="builtin_tools"):
        wink.MarkdownSection(key="s", builtin_tools=["web_search"])  # type: ignore[list-item]


FLAGS = "files-api-2025-04-14, code-execution-2025-08-25"
SUMS = wink.Prompt(
    "sums", [wink.MarkdownSection("task", "Sum 1..10")], builtin_tools=[wink.CodeExecution()]
)


def _betas_sent(emulator: wink.testing.ProviderEmulator) -> list[str | None]:
    return [request.headers.get("anthropic-beta") for request in emulator.requests]


def test_a_server_tools_beta_flag_is_added_to_the_clients_own(
    ok_emulator: wink.testing.ProviderEmulator,
) -> None:
    import anthropic

    client = anthropic.Anthropic(
        api_key="sk-test",
        base_url=ok_emulator.base_url("anthropic"),
        default_headers={"anthropic-beta": FLAGS},
    )
    adapter = wink.create_adapter("anthropic:claude-sonnet-4-5", client=client)
    adapter.evaluate("Sum 1..10", builtin_tools=[wink.CodeExecution(), wink.UrlContext()])
    adapter.evaluate("Hello")
    adapter.count_tokens(SUMS)
    adapter.count_tokens("Fetch it", builtin_tools=[wink.UrlContext()])
    assert _betas_sent(ok_emulator) == [
        "files-api-2025-04-14,code-execution-2025-08-25,web-fetch-2025-09-10",
        FLAGS,  # nothing added: the client's own header as it is
        "files-api-2025-04-14,code-execution-2025-08-25",
        "files-api-2025-04-14,code-execution-2025-08-25,web-fetch-2025-09-10",
    ]
    assert "code_execution" in str(ok_emulator.requests[2].body["tools"])


def test_an_async_clients_beta_flag_is_kept_on_a_stream(
    ok_emulator: wink.testing.ProviderEmulator,
) -> None:
    import asyncio

    import anthropic

    async def main() -> None:
        client = anthropic.AsyncAnthropic(
            api_key="sk-test",
            base_url=ok_emulator.base_url("anthropic"),
            default_headers={"anthropic-beta": FLAGS},
        )
        adapter = wink.create_adapter("anthropic:claude-sonnet-4-5", client=client)
        async with adapter.stream_async(SUMS) as stream:
            async for _ in stream:
                pass

    asyncio.run(main())
    assert _betas_sent(ok_emulator) == ["files-api-2025-04-14,code-execution-2025-08-25"]


def test_a_server_tools_beta_flag_goes_out_with_winks_own_client(
    ok_emulator: wink.testing.ProviderEmulator,
) -> None:
    adapter = wink.create_adapter(
        "anthropic:claude-sonnet-4-5",
        base_url=ok_emulator.base_url("anthropic"),
        api_key="sk-test",
    )
    adapter.evaluate("Sum 1..10", builtin_tools=[wink.CodeExecution()])
    (request,) = ok_emulator.requests
    assert request.headers.get("anthropic-beta") == "code-execution-2025-08-25"
