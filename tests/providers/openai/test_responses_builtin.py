"""OpenAI Responses built-in tools and citations: `WebSearch` / `CodeExecution` as
`web_search` / `code_interpreter`, the recorded answers read back as calls and citations
exactly, and round trips through the real openai SDK against the emulator (streamed and
not) that continue on Responses and on Anthropic."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

import pytest

import wink
from tests.helpers.adapters import KEY, make_adapter
from tests.helpers.wire import load_recording, ok, replay
from wink.core.foundation.messages import AssistantMessage, ModelRequest, UserMessage
from wink.core.foundation.settings import ModelSettings
from wink.core.transport.errors import MalformedResponse
from wink.providers.openai.responses import build_request, parse_response
from wink.testing import (
    EmulatedCitation,
    EmulatedCodeRun,
    EmulatedSearch,
    EmulatorInternalError,
    ProviderEmulator,
    ScriptFileError,
    Turn,
    parse_script,
)

SEARCH_RECORDING = "builtin/openai_responses_web_search_citation.json"
BLOCKED_RECORDING = "builtin/openai_responses_web_search_blocked_domains.json"
CODE_RECORDING = "builtin/openai_responses_code_interpreter.json"

ALBERTA = "https://www.britannica.com/place/Mount-Columbia?utm_source=openai"
ALBERTA_TITLE = "Mount Columbia | mountain, Alberta, Canada | Britannica"


def _request(*tools: wink.WebSearch | wink.CodeExecution | wink.UrlContext) -> ModelRequest:
    return ModelRequest("p", (UserMessage("How tall is Mount Columbia?"),), builtin_tools=tools)


# --- the request


def test_the_request_carries_each_tool_and_asks_for_its_results() -> None:
    search = wink.WebSearch(
        allowed_domains=["britannica.com"],
        user_location=wink.UserLocation(city="Calgary", region="Alberta", country="CA"),
    )
    body = build_request(_request(search, wink.CodeExecution()), "gpt-5", ModelSettings())
    assert body["tools"] == [
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["britannica.com"]},
            "user_location": {
                "type": "approximate",
                "city": "Calgary",
                "region": "Alberta",
                "country": "CA",
            },
        },
        {"type": "code_interpreter", "container": {"type": "auto"}},
    ]
    assert body["include"] == ["web_search_call.action.sources", "code_interpreter_call.outputs"]


def test_blocked_domains_go_in_the_filters_as_the_recorded_request_sends_them() -> None:
    search = wink.WebSearch(blocked_domains=["ai.pydantic.dev"])
    body = build_request(_request(search), "gpt-5-mini", ModelSettings())
    recorded = load_recording(BLOCKED_RECORDING)["request"]["body"]["tools"][0]
    assert body["tools"] == [{"type": "web_search", "filters": recorded["filters"]}]


def test_the_includes_add_to_the_encrypted_reasoning_one() -> None:
    settings = ModelSettings(thinking="low")  # type: ignore[arg-type]
    body = build_request(_request(wink.WebSearch()), "gpt-5", settings)
    assert body["include"] == ["reasoning.encrypted_content", "web_search_call.action.sources"]


def test_function_tools_come_first_then_the_builtin_ones() -> None:
    spec = wink.core.foundation.messages.ToolSpec("lookup", "Look up.", {"type": "object"})
    request = ModelRequest("p", (UserMessage("hi"),), (spec,), builtin_tools=(wink.WebSearch(),))
    tools = build_request(request, "gpt-5", ModelSettings())["tools"]
    assert [tool["type"] for tool in tools] == ["function", "web_search"]


@pytest.mark.parametrize(
    ("tool", "feature", "option"),
    [
        (wink.UrlContext(), "url_context", "UrlContext:"),
        (wink.WebSearch(max_uses=2), "web_search", "WebSearch(max_uses=)"),
    ],
)
def test_what_the_api_lacks_is_refused_naming_the_wire_and_the_option(
    tool: wink.UrlContext | wink.WebSearch, feature: str, option: str
) -> None:
    with pytest.raises(wink.UnsupportedFeatureError) as caught:
        build_request(_request(tool), "gpt-5", ModelSettings())
    assert caught.value.feature == feature
    assert caught.value.provider == "OpenAI Responses"
    assert f"has no {option.rstrip(':')}" in str(caught.value)


# --- the recorded answers


def test_the_recorded_search_reads_as_its_call_and_its_citation_exactly() -> None:
    response = ok(replay("openai-responses", SEARCH_RECORDING)[0])
    text = response.text or ""
    assert response.citations == (wink.Citation(url=ALBERTA, title=ALBERTA_TITLE, span=(126, 211)),)
    assert (
        text[126:211]
        == "([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))"
    )
    assert response.builtin_calls == (
        wink.BuiltinToolCall(
            "openai-responses",
            "web_search",
            "ws_057daac88567bde400696c45fac8448190aa2141ad7de1b6bb",
            queries=(
                "tallest mountain in Alberta",
                "Mount Columbia tallest mountain in Alberta elevation",
            ),
        ),
    )
    assert response.usage.web_search_requests == 1  # counted: the answer gives no billed count


def test_the_billed_search_count_is_read_where_the_answer_gives_it() -> None:
    body = load_recording(BLOCKED_RECORDING)["response"]["body"]
    assert parse_response(body).usage.web_search_requests == 1
    body = {**body, "tool_usage": {"web_search": {"num_requests": 3}}}
    assert parse_response(body).usage.web_search_requests == 3


def test_the_recorded_blocked_domain_search_cites_its_source() -> None:
    response = ok(replay("openai-responses", BLOCKED_RECORDING)[0])
    url = "https://github.com/pydantic/pydantic-ai?ref=robotpaper.ai&utm_source=openai"
    title = "GitHub - pydantic/pydantic-ai at robotpaper.ai · GitHub"
    assert response.citations == (wink.Citation(url=url, title=title, span=(41, 132)),)
    (call,) = response.builtin_calls
    assert call.queries == ("Pydantic AI", "Pydantic AI GitHub", "PydanticAI official site")


def test_the_recorded_code_run_reads_as_its_code_and_logs() -> None:
    body = load_recording(CODE_RECORDING)["response"]["body"]
    response = ok(replay("openai-responses", CODE_RECORDING)[0])
    (call,) = response.builtin_calls
    item = body["output"][1]
    assert (call.tool, call.id, call.code, call.output) == (
        "code_execution",
        item["id"],
        item["code"],
        "'/mnt/data/y_equals_x_squared.png'",
    )
    assert response.citations == ()  # container file citations name no web source
    assert response.usage.web_search_requests == 0


def test_a_citation_span_counts_from_the_start_of_the_whole_answer() -> None:
    part = {"type": "output_text", "text": "Second.", "annotations": []}
    cited = {
        "type": "output_text",
        "text": "Cited.",
        "annotations": [
            {"type": "url_citation", "start_index": 0, "end_index": 6, "url": "u", "title": "t"}
        ],
    }
    body = {
        "output": [
            {"type": "message", "content": [part]},
            {"type": "message", "content": [cited]},
        ]
    }
    response = parse_response(body)
    assert response.citations[0].span == (7, 13)
    assert (response.text or "")[7:13] == "Cited."


def test_a_malformed_annotation_is_a_malformed_response() -> None:
    bad = {"type": "url_citation", "start_index": 0, "url": "u", "title": "t"}
    body = {
        "output": [
            {
                "type": "message",
                "content": [{"type": "output_text", "text": "x", "annotations": [bad]}],
            }
        ]
    }
    with pytest.raises(MalformedResponse, match="url_citation"):
        parse_response(body)


# --- round trips through the real SDK, against the emulator

ANSWER = "Mount Columbia is 3,747 m high."
SOURCE = "https://www.britannica.com/place/Mount-Columbia"


def _search_turn() -> Turn:
    return Turn.text(
        ANSWER,
        ran=[EmulatedSearch("Mount Columbia height", (SOURCE, "https://peakbagger.com/"))],
        citations=[EmulatedCitation(SOURCE, "Mount Columbia | Britannica", 0, 14)],
    )


def _code_turn() -> Turn:
    return Turn.text("The sum is 55.", ran=[EmulatedCodeRun("print(sum(range(11)))", "55\n")])


def _last_turn(response: wink.PromptResponse[Any]) -> AssistantMessage:
    turn = response.transcript[-1]
    assert isinstance(turn, AssistantMessage)
    return turn


@pytest.mark.parametrize("streamed", [False, True])
def test_a_web_search_round_trip_ends_with_the_answer_and_its_citation(streamed: bool) -> None:
    with (
        ProviderEmulator([_search_turn()]) as emulator,
        make_adapter("openai-responses", emulator) as adapter,
    ):
        question = "How tall is Mount Columbia?"
        if streamed:
            with adapter.stream(question, builtin_tools=[wink.WebSearch()]) as stream:
                for _ in stream:
                    pass
            response = stream.response
        else:
            response = adapter.evaluate(question, builtin_tools=[wink.WebSearch()])
    assert response.text == ANSWER
    assert response.citations == (
        wink.Citation(url=SOURCE, title="Mount Columbia | Britannica", span=(0, 14)),
    )
    (call,) = _last_turn(response).builtin_calls
    assert (call.tool, call.queries) == ("web_search", ("Mount Columbia height",))
    assert call.sources == (
        wink.WebSource(SOURCE, "Mount Columbia | Britannica"),
        wink.WebSource("https://peakbagger.com/"),
    )
    assert response.usage.web_search_requests == 1


def test_a_stream_yields_each_url_citation_as_it_arrives_with_its_span() -> None:
    text = "Checked. " + ANSWER
    start = len("Checked. ")
    turn = Turn.text(text, citations=[EmulatedCitation(SOURCE, "Britannica", start, start + 14)])
    with (
        ProviderEmulator([turn]) as emulator,
        make_adapter("openai-responses", emulator) as adapter,
        adapter.stream("q", builtin_tools=[wink.WebSearch()]) as stream,
    ):
        seen = [event.citation for event in stream if isinstance(event, wink.CitationDelta)]
    expected = wink.Citation(url=SOURCE, title="Britannica", span=(start, start + 14))
    assert seen == [expected]
    assert stream.response.citations == (expected,)
    assert stream.response.text[start : start + 14] == "Mount Columbia"


def test_the_streamed_answer_equals_the_one_not_streamed() -> None:
    responses: list[wink.PromptResponse[Any]] = []
    for streamed in (False, True):
        turns = [_search_turn()]
        with (
            ProviderEmulator(turns) as emulator,
            make_adapter("openai-responses", emulator) as adapter,
        ):
            tools = [wink.WebSearch(), wink.CodeExecution()]
            if streamed:
                with adapter.stream("q", builtin_tools=tools) as stream:
                    for _ in stream:
                        pass
                responses.append(stream.response)
            else:
                responses.append(adapter.evaluate("q", builtin_tools=tools))
    plain, streamed_response = responses
    assert streamed_response.citations == plain.citations
    assert streamed_response.usage == plain.usage
    plain_turn, streamed_turn = _last_turn(plain), _last_turn(streamed_response)
    # the ids the emulator draws differ from one run to the next; the rest is equal
    assert [(c.tool, c.queries, c.sources) for c in streamed_turn.builtin_calls] == [
        (c.tool, c.queries, c.sources) for c in plain_turn.builtin_calls
    ]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_code_run_round_trip_ends_with_the_answer_and_the_output(streamed: bool) -> None:
    with (
        ProviderEmulator([_code_turn()]) as emulator,
        make_adapter("openai-responses", emulator) as adapter,
    ):
        if streamed:
            with adapter.stream("Sum 0..10", builtin_tools=[wink.CodeExecution()]) as stream:
                for _ in stream:
                    pass
            response = stream.response
        else:
            response = adapter.evaluate("Sum 0..10", builtin_tools=[wink.CodeExecution()])
        (request,) = emulator.requests
    assert response.text == "The sum is 55."
    (call,) = _last_turn(response).builtin_calls
    assert (call.tool, call.code, call.output) == (
        "code_execution",
        "print(sum(range(11)))",
        "55\n",
    )
    assert request.body["include"] == ["code_interpreter_call.outputs"]


@pytest.mark.parametrize("streamed", [False, True])
def test_azure_responses_searches_and_runs_code_too(streamed: bool) -> None:
    """Azure OpenAI's Responses API takes `web_search` (Microsoft's "Web search" how-to)
    and `code_interpreter` with an `auto` container (the Responses how-to's "Code
    Interpreter"): the same round trip on its path."""
    turn = Turn.text(ANSWER, ran=[*_search_turn().ran, *_code_turn().ran])
    turn = replace(turn, citations=_search_turn().citations)
    tools = [wink.WebSearch(), wink.CodeExecution()]
    with (
        ProviderEmulator([turn]) as emulator,
        wink.create_adapter(
            "azure-responses:prod-gpt", endpoint=emulator.url, api_key=KEY
        ) as adapter,
    ):
        if streamed:
            with adapter.stream("How tall?", builtin_tools=tools) as stream:
                for _ in stream:
                    pass
            response = stream.response
        else:
            response = adapter.evaluate("How tall?", builtin_tools=tools)
        (request,) = emulator.requests
    assert request.path == "/openai/v1/responses"
    assert [tool["type"] for tool in request.body["tools"]] == ["web_search", "code_interpreter"]
    search, code = _last_turn(response).builtin_calls
    assert (search.queries, code.output) == (("Mount Columbia height",), "55\n")
    assert response.citations[0].url == SOURCE
    assert response.usage.web_search_requests == 1


def test_the_conversation_continues_on_responses_with_the_items_echoed() -> None:
    with (
        ProviderEmulator([_search_turn(), Turn.text("In Alberta.")]) as emulator,
        make_adapter("openai-responses", emulator) as adapter,
    ):
        first = adapter.evaluate("How tall?", builtin_tools=[wink.WebSearch()])
        second = adapter.evaluate("Where?", history=first.transcript)
        assert second.text == "In Alberta."
        sent = emulator.requests[1].body["input"]
    echoed = [item for item in sent if item.get("type") == "web_search_call"]
    assert [item["action"]["query"] for item in echoed] == ["Mount Columbia height"]
    (message,) = [item for item in sent if item.get("type") == "message"]
    assert message["content"][0]["annotations"][0]["url"] == SOURCE


def test_the_conversation_continues_on_anthropic_without_the_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        ProviderEmulator([_search_turn()]) as responses_emulator,
        make_adapter("openai-responses", responses_emulator) as adapter,
    ):
        first = adapter.evaluate("How tall?", builtin_tools=[wink.WebSearch()])
    later = Turn.text("In Alberta.").expecting_history(
        "user: How tall?", f"assistant: {ANSWER}", "user: Where?"
    )
    with (
        ProviderEmulator([later]) as anthropic_emulator,
        make_adapter("anthropic", anthropic_emulator) as other,
        caplog.at_level(logging.INFO, logger="wink.portable"),
    ):
        second = other.evaluate("Where?", history=first.transcript)
    assert second.text == "In Alberta."
    assert "web_search" in caplog.text
    moved = second.transcript[1]
    assert isinstance(moved, AssistantMessage)
    assert moved.citations == first.citations


# --- what the emulated API refuses, in its words (through the openai SDK itself)


def _create(emulator: ProviderEmulator, tools: list[dict[str, Any]]) -> Any:
    import openai

    client = openai.OpenAI(
        api_key=KEY, base_url=emulator.base_url("openai-responses"), max_retries=0
    )
    try:
        client.responses.create(model="gpt-5", input="hi", tools=tools)  # type: ignore[arg-type]
    except openai.BadRequestError as error:
        return error.response
    raise AssertionError("the emulator took it")


@pytest.mark.parametrize(
    ("tool", "message", "param"),
    [
        (
            {"type": "web_fetch"},
            "Invalid value: 'web_fetch'. Supported values are: 'function'",
            "tools[0].type",
        ),
        (
            {"type": "web_search", "max_uses": 2},
            "Unknown parameter: 'tools[0].max_uses'.",
            "tools[0].max_uses",
        ),
        (
            {"type": "code_interpreter"},
            "Missing required parameter: 'tools[0].container'.",
            "tools[0].container",
        ),
    ],
)
def test_the_emulator_refuses_a_tool_the_api_refuses(
    tool: dict[str, Any], message: str, param: str
) -> None:
    with ProviderEmulator([Turn.text("unused")]) as emulator:
        response = _create(emulator, [tool])
    error = json.loads(response.text)["error"]
    assert error["message"].startswith(message)
    assert error["param"] == param


def test_the_emulator_streams_the_tool_and_annotation_events() -> None:
    import openai

    with ProviderEmulator([_search_turn(), _code_turn()]) as emulator:
        client = openai.OpenAI(api_key=KEY, base_url=emulator.base_url("openai-responses"))
        kinds: list[str] = []
        for tools in (
            [{"type": "web_search"}],
            [{"type": "code_interpreter", "container": {"type": "auto"}}],
        ):
            with client.responses.stream(model="gpt-5", input="hi", tools=tools) as stream:  # type: ignore[arg-type]
                kinds.extend(event.type for event in stream)
                final = stream.get_final_response()
            assert final.output_text in (ANSWER, "The sum is 55.")
    for kind in (
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_text.annotation.added",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call.completed",
    ):
        assert kind in kinds


def test_a_turn_that_runs_a_tool_the_request_does_not_offer_fails_the_test() -> None:
    with (
        pytest.raises(EmulatorInternalError, match="does not offer"),
        ProviderEmulator([_search_turn()]) as emulator,
        make_adapter("openai-responses", emulator) as adapter,
        pytest.raises(wink.WinkError),
    ):
        adapter.evaluate("q")


def test_a_scripted_citation_outside_the_text_is_refused() -> None:
    with pytest.raises(wink.InvalidArgumentError, match="outside"):
        Turn.text("short", citations=[EmulatedCitation(SOURCE, "t", 0, 99)])


def test_a_script_file_scripts_the_runs_and_citations() -> None:
    script = parse_script(
        {
            "script": [
                {
                    "text": ANSWER,
                    "ran": [
                        {"search": "Mount Columbia height", "sources": [SOURCE]},
                        {"code": "print(3747)", "output": "3747\n"},
                    ],
                    "citations": [
                        {
                            "url": SOURCE,
                            "title": "Mount Columbia | Britannica",
                            "start": 0,
                            "end": 14,
                        }
                    ],
                }
            ]
        }
    )
    (turn,) = script.items
    assert turn == Turn.text(
        ANSWER,
        ran=[
            EmulatedSearch("Mount Columbia height", [SOURCE]),
            EmulatedCodeRun("print(3747)", "3747\n"),
        ],
        citations=[EmulatedCitation(SOURCE, "Mount Columbia | Britannica", 0, 14)],
    )


@pytest.mark.parametrize(
    ("entry", "where"),
    [
        ({"text": "hi", "ran": [{"search": ""}]}, "script[0].ran[0]"),
        ({"text": "hi", "ran": [{"code": "x", "stdout": "y"}]}, "script[0].ran[0]"),
        (
            {"text": "hi", "citations": [{"url": "u", "title": "t", "start": 0, "end": 9}]},
            "script[0]",
        ),
        ({"text": "hi", "citations": {"url": "u"}}, "script[0].citations"),
    ],
)
def test_a_script_file_refuses_a_bad_run_or_citation_naming_the_entry(
    entry: dict[str, Any], where: str
) -> None:
    with pytest.raises(ScriptFileError) as caught:
        parse_script({"script": [entry]})
    assert caught.value.entry == where
