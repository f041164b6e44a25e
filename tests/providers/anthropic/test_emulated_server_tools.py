"""Anthropic's server tools through the emulator and the real anthropic SDK: a web search,
a code run and a page read end with Claude's answer, in the shapes the API records; the
turn goes back verbatim to Claude (the emulator checks it) and moves to another provider
without its calls; a beta tool without its flag is refused in the API's words; a search
past `max_uses` is an error result, not a refusal. Streamed and not, on `anthropic:` and
`vertex-anthropic:`."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import anthropic
import pytest

import wink
from tests.helpers.google_auth import service_account
from tests.helpers.wire import load_recording
from wink import CodeExecution, UrlContext, WebSearch, create_adapter
from wink.testing import (
    EmulatedCitation,
    EmulatedCodeRun,
    EmulatedFetch,
    EmulatedSearch,
    EmulatorInternalError,
    ProviderEmulator,
    ScriptFileError,
    Turn,
    parse_script,
)

RECORDED = Path(__file__).parents[2] / "conformance" / "streams" / "anthropic"
MODEL = "anthropic:claude-sonnet-4-5"
SOURCE = "https://www.python.org/downloads/release/python-3140/"
TITLE = "Python Release Python 3.14.0"
TEXT = "Python 3.14.0 came out on 7 October 2025; 2**100 is 1267650600228229401496703205376."
ANSWER = Turn.text(
    TEXT,
    ran=[
        EmulatedSearch("python 3.14 release date", [SOURCE]),
        EmulatedCodeRun("print(2**100)", "1267650600228229401496703205376\n"),
    ],
    citations=[EmulatedCitation(SOURCE, TITLE, 0, 40)],
)
TOOLS = [WebSearch(allowed_domains=["python.org"]), CodeExecution()]
# The same request through the SDK's own client (which wink does not shape)
SEARCH_AND_RUN: Any = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "When?"}],
    "tools": [
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "code_execution_20250825", "name": "code_execution"},
    ],
    "extra_headers": {"anthropic-beta": "code-execution-2025-08-25"},
}


def _recorded_events(name: str) -> list[dict[str, Any]]:
    body = json.loads((RECORDED / name).read_text())["response"]["body"]
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]


def _recorded_blocks(name: str) -> dict[str, dict[str, Any]]:
    """Each block type's first `content_block_start` block in a recorded stream, and the
    first citation (under `citation`)."""
    found: dict[str, dict[str, Any]] = {}
    for event in _recorded_events(name):
        if event["type"] == "content_block_start":
            found.setdefault(event["content_block"]["type"], event["content_block"])
        elif event["type"] == "content_block_delta" and "citation" in event["delta"]:
            found.setdefault("citation", event["delta"]["citation"])
    return found


def _shape(value: Any) -> Any:
    """The keys of a block, nested (values and a call's input dropped)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items() if key != "input"}
    if isinstance(value, list) and value:
        return [_shape(value[0])]
    return "value"


def _evaluated(adapter: Any, streamed: bool, prompt: str, **options: Any) -> Any:
    if not streamed:
        return adapter.evaluate(prompt, **options)
    with adapter.stream(prompt, **options) as stream:
        for _ in stream:
            pass
    return stream.response


@pytest.mark.parametrize("streamed", [False, True])
def test_a_search_and_a_code_run_end_with_the_answer_and_continue_on_claude(
    streamed: bool,
) -> None:
    with (
        ProviderEmulator([ANSWER, Turn.text("You're welcome.")]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as adapter,
    ):
        response = _evaluated(adapter, streamed, "When, and 2**100?", builtin_tools=TOOLS)
        search, code = response.transcript[-1].builtin_calls
        assert (search.tool, search.queries) == ("web_search", ("python 3.14 release date",))
        assert [(s.url, s.title) for s in search.sources] == [(SOURCE, TITLE)]
        assert (code.tool, code.code, code.output) == (
            "code_execution",
            "print(2**100)",
            "1267650600228229401496703205376\n",
        )
        assert response.text == TEXT
        (citation,) = response.citations
        assert (citation.url, citation.title, citation.span) == (SOURCE, TITLE, (0, 40))
        assert citation.cited_text == TEXT[:40]
        assert response.usage.web_search_requests == 1
        answered = emulator.requests[0]
        assert answered.headers["anthropic-beta"] == "code-execution-2025-08-25"
        again = adapter.evaluate("Thanks", history=response.transcript, builtin_tools=TOOLS)
        assert again.text == "You're welcome."
        echoed = emulator.requests[1].body["messages"][1]["content"]
    kinds = [block["type"] for block in echoed]
    assert kinds == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "bash_code_execution_tool_result",
        "text",
        "text",
    ]
    assert echoed[4]["citations"][0]["type"] == "web_search_result_location"


def test_the_blocks_are_the_recorded_shapes() -> None:
    """The emulator's blocks carry the keys of the API's recorded ones."""
    searched = _recorded_blocks("server_tool_web_search_citations.json")
    coded = _recorded_blocks("thinking_signature_server_tool_blocks.json")
    client = anthropic.Anthropic(api_key="sk", max_retries=0)
    with ProviderEmulator([ANSWER]) as emulator:
        client = client.with_options(base_url=emulator.base_url("anthropic"))
        raw = client.messages.with_raw_response.create(**SEARCH_AND_RUN)
    answer = raw.parse()  # the SDK reads it
    blocks = json.loads(raw.http_response.text)["content"]
    by_type = {block["type"]: block for block in blocks}
    for kind in ("server_tool_use", "web_search_tool_result"):
        assert _shape(by_type[kind]) == _shape(searched[kind]), kind
    result = by_type["bash_code_execution_tool_result"]
    assert _shape(result) == _shape(coded["bash_code_execution_tool_result"])
    cited = next(block for block in blocks if block.get("citations"))
    assert set(cited["citations"][0]) == set(searched["citation"])
    documented = load_recording("anthropic_docs/web_search_answer.json")["response"]["body"]
    for block in documented["content"]:
        if block["type"] != "text":  # the cited text block's keys are checked above
            assert _shape(by_type[block["type"]]) == _shape(block), block["type"]
    assert answer.usage.server_tool_use is not None
    assert answer.usage.server_tool_use.web_search_requests == 1


def test_the_stream_sends_the_recorded_events() -> None:
    """`server_tool_use` starts with an empty input filled by `input_json_delta`s, the
    result block comes whole, a cited text block starts with empty citations and a
    `citations_delta`; the final delta carries the billed counts and the container."""
    client = anthropic.Anthropic(api_key="sk", max_retries=0)
    with ProviderEmulator([ANSWER]) as emulator:
        client = client.with_options(base_url=emulator.base_url("anthropic"))
        events = list(client.messages.create(**SEARCH_AND_RUN, stream=True))
    raw = [event.model_dump() for event in events]
    starts = [e["content_block"] for e in raw if e["type"] == "content_block_start"]
    assert starts[0] == {**starts[0], "type": "server_tool_use", "input": {}}
    assert starts[1]["type"] == "web_search_tool_result"
    assert starts[1]["content"]
    cited = next(i for i, block in enumerate(starts) if block.get("citations") == [])
    deltas = [e["delta"] for e in raw if e["type"] == "content_block_delta" and e["index"] == cited]
    assert deltas[0]["type"] == "citations_delta"
    assert deltas[0]["citation"]["url"] == SOURCE
    pieces = "".join(
        d["partial_json"]
        for d in (
            e["delta"] for e in raw if e.get("index") == 0 and e["type"] == "content_block_delta"
        )
    )
    assert json.loads(pieces) == {"query": "python 3.14 release date"}
    (last,) = [e for e in raw if e["type"] == "message_delta"]
    assert last["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert re.match(r"^container_011", last["delta"]["container"]["id"])


def test_a_changed_block_sent_back_is_refused() -> None:
    search = [{"type": "web_search_20250305", "name": "web_search"}]
    question = {"role": "user", "content": "When?"}
    searched = Turn.text(TEXT, ran=[EmulatedSearch("python 3.14", [SOURCE])])
    with ProviderEmulator([searched, Turn.text("Again.")]) as emulator:
        client = anthropic.Anthropic(
            api_key="sk", base_url=emulator.base_url("anthropic"), max_retries=0
        )
        first = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5", max_tokens=100, messages=[question], tools=search
        )
        blocks = json.loads(first.http_response.text)["content"]
        thanks = {"role": "user", "content": "Thanks"}
        intact = [question, {"role": "assistant", "content": blocks}, thanks]
        again = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=100, messages=intact, tools=search
        )
        assert again.content[0].type == "text"
        blocks[1]["content"][0]["encrypted_content"] = "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5"
        changed = [question, {"role": "assistant", "content": blocks}, thanks]
        with pytest.raises(anthropic.BadRequestError, match="sent back as the API returned"):
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=100, messages=changed, tools=search
            )


def test_another_provider_continues_without_the_calls(caplog: pytest.LogCaptureFixture) -> None:
    with (
        ProviderEmulator([ANSWER, Turn.text("Sure.")]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as claude,
        create_adapter(
            "openai-responses:gpt-5", base_url=emulator.base_url("openai-responses"), api_key="sk"
        ) as gpt,
    ):
        response = claude.evaluate("When?", builtin_tools=TOOLS)
        with caplog.at_level(logging.INFO, logger="wink.portable"):
            again = gpt.evaluate("Thanks", history=response.transcript)
        sent = emulator.requests[1].body["input"]
    assert again.text == "Sure."
    assert "web_search" in caplog.text
    kinds = [item.get("type", item.get("role")) for item in sent]
    assert "web_search_call" not in kinds
    assert "server_tool_use" not in json.dumps(sent)
    assert TEXT in json.dumps(sent)


def test_a_beta_tool_without_its_flag_is_refused_in_the_apis_words() -> None:
    client = anthropic.Anthropic(api_key="sk", max_retries=0)
    with ProviderEmulator([Turn.text("unused")]) as emulator:
        client = client.with_options(base_url=emulator.base_url("anthropic"))
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=100,
                messages=[{"role": "user", "content": "Read https://example.com"}],
                tools=[
                    {"type": "web_search_20250305", "name": "web_search"},
                    {"type": "web_fetch_20250910", "name": "web_fetch"},  # type: ignore[list-item]
                ],
            )
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "tools.1: Input tag 'web_fetch_20250910' found using 'type' does not match any of the "
        "expected tags: 'bash_20250124', 'custom', 'text_editor_20250124', "
        "'text_editor_20250429', 'text_editor_20250728', 'web_search_20250305'"
    )


def test_searches_past_max_uses_get_an_error_result_and_are_not_billed() -> None:
    twice = Turn.text(
        "Only one search ran.",
        ran=[EmulatedSearch("first", [SOURCE]), EmulatedSearch("second", [SOURCE])],
    )
    with (
        ProviderEmulator([twice]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as adapter,
    ):
        response = adapter.evaluate("Search twice", builtin_tools=[WebSearch(max_uses=1)])
    first, second = response.transcript[-1].builtin_calls
    assert (first.error, [s.url for s in first.sources]) == (None, [SOURCE])
    assert (second.queries, second.error) == (("second",), "max_uses_exceeded")
    assert response.usage.web_search_requests == 1


@pytest.mark.parametrize("streamed", [False, True])
def test_a_page_read_is_a_url_context_call(streamed: bool) -> None:
    page = "https://peps.python.org/pep-0779/"
    read = Turn.text(
        "PEP 779 sets the criteria.",
        ran=[EmulatedFetch(page, "PEP 779", "Criteria for supported status.")],
    )
    with (
        ProviderEmulator([read]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as adapter,
    ):
        response = _evaluated(adapter, streamed, f"Read {page}", builtin_tools=[UrlContext()])
        assert emulator.requests[0].headers["anthropic-beta"] == "web-fetch-2025-09-10"
    (call,) = response.transcript[-1].builtin_calls
    assert call.tool == "url_context"
    assert [(s.url, s.title) for s in call.sources] == [(page, "PEP 779")]
    assert response.usage.web_search_requests == 0


def test_a_tool_the_request_does_not_offer_fails_the_test() -> None:
    with (
        pytest.raises(EmulatorInternalError, match="runs code the request does not offer"),
        ProviderEmulator([ANSWER]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as adapter,
        pytest.raises(wink.WinkError),
    ):
        adapter.evaluate("When?", builtin_tools=[WebSearch()])


def _vertex_claude(emulator: ProviderEmulator, key_file: Path) -> Any:
    return create_adapter(
        "vertex-anthropic:claude-sonnet-4-5@20250929",
        base_url=emulator.url,
        credentials=key_file,
        location="us-east5",
    )


@pytest.mark.parametrize("streamed", [False, True])
def test_vertex_claude_searches_too(tmp_path: Path, streamed: bool) -> None:
    with service_account(tmp_path, project="my-project") as (key_file, _):
        searched = Turn.text(
            TEXT[:40],
            ran=[EmulatedSearch("python 3.14 release date", [SOURCE])],
            citations=[EmulatedCitation(SOURCE, TITLE, 0, 40)],
        )
        with (
            ProviderEmulator([searched]) as emulator,
            _vertex_claude(emulator, key_file) as adapter,
        ):
            response = _evaluated(adapter, streamed, "When?", builtin_tools=[WebSearch()])
    (call,) = response.transcript[-1].builtin_calls
    assert call.queries == ("python 3.14 release date",)
    assert [c.url for c in response.citations] == [SOURCE]
    assert response.usage.web_search_requests == 1


def test_the_adapter_sends_the_flags_the_emulator_asks_for() -> None:
    """wink sends each beta tool's flag itself: through the adapter the refusal above
    does not happen."""
    with (
        ProviderEmulator([Turn.text("ok")]) as emulator,
        create_adapter(MODEL, base_url=emulator.base_url("anthropic"), api_key="sk") as adapter,
    ):
        assert adapter.evaluate("Hi", builtin_tools=[UrlContext(), CodeExecution()]).text == "ok"
        assert emulator.requests[0].headers["anthropic-beta"] == (
            "web-fetch-2025-09-10,code-execution-2025-08-25"
        )


def test_a_script_file_scripts_a_page_read() -> None:
    page = {"fetch": "https://peps.python.org/pep-0779/", "title": "PEP 779", "text": "Criteria."}
    (turn,) = parse_script({"script": [{"text": "Read.", "ran": [page]}]}).items
    assert turn == Turn.text(
        "Read.", ran=[EmulatedFetch("https://peps.python.org/pep-0779/", "PEP 779", "Criteria.")]
    )
    with pytest.raises(ScriptFileError) as caught:
        parse_script({"script": [{"text": "Read.", "ran": [{**page, "html": "<p>"}]}]})
    assert caught.value.entry == "script[0].ran[0]"


def test_the_responses_wire_has_no_page_read() -> None:
    read = Turn.text("Read.", ran=[EmulatedFetch("https://peps.python.org/pep-0779/")])
    with (
        pytest.raises(EmulatorInternalError, match="the Responses API has no such tool"),
        ProviderEmulator([read]) as emulator,
        create_adapter(
            "openai-responses:gpt-5", base_url=emulator.base_url("openai-responses"), api_key="sk"
        ) as adapter,
        pytest.raises(wink.WinkError),
    ):
        adapter.evaluate("Read it", builtin_tools=[WebSearch()])


@pytest.mark.parametrize("tool", [CodeExecution(), UrlContext()])
def test_vertex_claude_refuses_code_runs_and_page_reads_before_sending(
    tmp_path: Path, tool: CodeExecution | UrlContext
) -> None:
    with (
        service_account(tmp_path, project="my-project") as (key_file, _),
        ProviderEmulator([Turn.text("unused")]) as emulator,
        _vertex_claude(emulator, key_file) as adapter,
    ):
        with pytest.raises(wink.UnsupportedFeatureError) as caught:
            adapter.evaluate("Run it", builtin_tools=[WebSearch(), tool])
        assert emulator.requests == []
    assert caught.value.provider == "Claude on Vertex AI"
    assert caught.value.feature == tool.kind
