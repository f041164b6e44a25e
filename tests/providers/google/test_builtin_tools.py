"""Gemini's built-in tools and grounding: the request carries `googleSearch`,
`codeExecution` and `urlContext`, refusing what they lack; the recorded grounded answer reads
back as exact citations; code runs and searches round-trip on Gemini (streamed or not, with
the same result) and go on to Anthropic without the calls."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

import wink
from tests.helpers.wire import load_recording, ok, replay
from wink.core.foundation.builtin import Citation, WebSource
from wink.core.foundation.messages import ModelRequest, ToolSpec, UserMessage
from wink.core.foundation.settings import ModelSettings
from wink.providers.google.generate import build_request, parse_response
from wink.providers.google.stream import GeminiStreamDecoder
from wink.testing import ProviderEmulator, Turn

RECORDING = "google_builtin/web_search_citations.json"


def _request(*tools: wink.WebSearch | wink.CodeExecution | wink.UrlContext) -> ModelRequest:
    return ModelRequest("p", (UserMessage("hi"),), builtin_tools=tools)


def test_each_builtin_tool_is_its_own_gemini_tool() -> None:
    body = build_request(
        _request(wink.WebSearch(), wink.CodeExecution(), wink.UrlContext()), ModelSettings()
    )
    assert body["tools"] == [{"googleSearch": {}}, {"codeExecution": {}}, {"urlContext": {}}]


@pytest.mark.parametrize(
    ("search", "option"),
    [
        (wink.WebSearch(max_uses=2), "max_uses"),
        (wink.WebSearch(allowed_domains=["python.org"]), "allowed_domains"),
        (wink.WebSearch(user_location=wink.UserLocation(country="FR")), "user_location"),
        (wink.WebSearch(blocked_domains=["example.com"]), "blocked_domains"),
    ],
)
def test_search_options_google_search_lacks_are_refused_naming_them(
    search: wink.WebSearch, option: str
) -> None:
    with pytest.raises(wink.UnsupportedFeatureError, match=f"Gemini wire.*{option}") as caught:
        build_request(_request(search), ModelSettings())
    assert (caught.value.feature, caught.value.provider) == ("web_search", "Gemini")


def test_vertex_google_search_takes_blocked_domains_as_exclude_domains() -> None:
    search = wink.WebSearch(blocked_domains=["example.com"])
    body = build_request(_request(search), ModelSettings(), exclude_domains=True)
    assert body["tools"] == [{"googleSearch": {"excludeDomains": ["example.com"]}}]
    with ProviderEmulator([Turn.text("Done.")]) as emu:
        vertex = wink.create_adapter("vertex:gemini-2.5-flash", base_url=emu.url, api_key="k")
        with vertex:
            assert vertex.evaluate("Look it up.", builtin_tools=[search]).text == "Done."
        gemini = wink.create_adapter("google:gemini-2.5-flash", base_url=emu.url, api_key="k")
        with gemini, pytest.raises(wink.UnsupportedFeatureError, match="Gemini wire"):
            gemini.evaluate("Look it up.", builtin_tools=[search])
    (sent,) = emu.requests
    assert sent.path.startswith("/v1beta1/publishers/google/")
    assert sent.body["tools"] == [{"googleSearch": {"excludeDomains": ["example.com"]}}]


def test_the_recorded_grounded_answer_reads_as_its_citations_exactly() -> None:
    body = load_recording(RECORDING)["response"]["body"]
    candidate = body["candidates"][0]
    grounding = candidate["groundingMetadata"]
    pages = [WebSource(c["web"]["uri"], c["web"]["title"]) for c in grounding["groundingChunks"]]
    response = ok(replay("google", RECORDING)[0])
    text = response.text or ""
    expected: list[Citation] = []
    for support in grounding["groundingSupports"]:
        said = support["segment"]["text"]
        start = text.index(said)
        for index in support["groundingChunkIndices"]:
            page = pages[index]
            expected.append(
                Citation(url=page.url, title=page.title, span=(start, start + len(said)))
            )
    assert response.citations == tuple(expected)
    assert [text[c.span[0] : c.span[1]] for c in response.citations[:1]] == [  # type: ignore[index]
        "The official documentation for Pydantic AI can be found on the Pydantic website"
    ]
    (search,) = response.builtin_calls
    assert search.tool == "web_search"
    assert search.queries == ("Pydantic AI documentation", "Pydantic AI docs")
    assert search.sources == tuple(pages)
    assert response.usage.web_search_requests == 1  # gemini-2.5: billed per grounded prompt


def _grounded(text: str, segments: list[tuple[int, int]], model: str) -> dict[str, Any]:
    encoded = text.encode()
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["q1", "q2"],
                    "groundingChunks": [{"web": {"uri": "https://a.example/", "title": "a"}}],
                    "groundingSupports": [
                        {
                            "segment": {
                                "startIndex": start,
                                "endIndex": end,
                                "text": encoded[start:end].decode(),
                            },
                            "groundingChunkIndices": [0],
                        }
                        for start, end in segments
                    ],
                },
            }
        ],
        "modelVersion": model,
    }


def test_byte_offsets_become_character_spans_in_non_ascii_text() -> None:
    text = "Zürich liegt am See. Größe: 87,88 km²."
    encoded = text.encode()
    second = encoded.index("Größe".encode())
    response = parse_response(
        _grounded(
            text,
            [(0, len("Zürich liegt am See.".encode())), (second, len(encoded))],
            "gemini-3-flash",
        )
    )
    spans = [c.span for c in response.citations]
    assert spans == [(0, 20), (21, len(text))]
    assert [text[a:b] for a, b in spans] == ["Zürich liegt am See.", "Größe: 87,88 km²."]  # type: ignore[misc]
    assert response.usage.web_search_requests == 2  # Gemini 3: billed per search query


CODE = "print(sum(range(11)))"


def _code_parts() -> list[dict[str, Any]]:
    return [
        {"text": "Let me compute it."},
        {"executableCode": {"language": "PYTHON", "code": CODE, "id": "c1"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "55\n", "id": "c1"}},
        {"text": "The sum is 55."},
    ]


def test_a_code_run_reads_as_its_code_and_output_and_echoes_back() -> None:
    body = {
        "candidates": [
            {"content": {"parts": _code_parts(), "role": "model"}, "finishReason": "STOP"}
        ]
    }
    response = parse_response(body)
    assert response.text == "Let me compute it.The sum is 55."
    assert response.builtin_calls == (
        wink.BuiltinToolCall("google", "code_execution", "c1", code=CODE, output="55\n"),
    )
    failed = parse_response(
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"executableCode": {"language": "PYTHON", "code": "1/0"}},
                            {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "E"}},
                        ]
                    },
                    "finishReason": "STOP",
                }
            ]
        }
    )
    assert failed.builtin_calls[0].error == "OUTCOME_FAILED"


ANSWER = "Spain won Euro 2024. Ödegaard — not there; España 2:1 England."


def _run(adapter: wink.ProviderAdapter, *, streamed: bool, **options: Any) -> Any:
    if not streamed:
        return adapter.evaluate("Who won Euro 2024?", **options)
    with adapter.stream("Who won Euro 2024?", **options) as stream:
        for _ in stream:
            pass
    return stream.response


@pytest.mark.parametrize("streamed", [False, True])
def test_search_and_code_round_trip_on_gemini_and_go_on_to_anthropic(streamed: bool) -> None:
    tools = [wink.WebSearch(), wink.CodeExecution()]
    turns = [Turn.text(ANSWER), Turn.text("Yes."), Turn.text("Spain.")]
    with (
        ProviderEmulator(turns) as emu,
        wink.create_adapter(
            "google:gemini-2.5-flash", base_url=emu.base_url("google"), api_key="k"
        ) as gemini,
        wink.create_adapter(
            "anthropic:claude-sonnet-4-5", base_url=emu.base_url("anthropic"), api_key="k"
        ) as claude,
    ):
        response = _run(gemini, streamed=streamed, builtin_tools=tools)
        assert response.text == ANSWER
        assert [response.text[a:b] for a, b in (c.span for c in response.citations)] == [
            "Spain won Euro 2024.",
            "Ödegaard — not there; España 2:1 England.",
        ]
        turn = response.transcript[-1]
        assert turn.citations == response.citations
        assert [call.tool for call in turn.builtin_calls] == ["code_execution", "web_search"]
        assert turn.builtin_calls[0].code == f"print({ANSWER!r})\n"
        assert turn.builtin_calls[1].queries == ("Who won Euro 2024?",)
        assert response.usage.web_search_requests == 1
        again = gemini.evaluate("Sure?", history=response.transcript, builtin_tools=tools)
        assert again.text == "Yes."
        echoed = emu.requests[-1].body["contents"][1]["parts"]
        assert [next(iter(part)) for part in echoed] == [
            "executableCode",
            "codeExecutionResult",
            "text",
        ]
        moved = claude.evaluate("Who?", history=response.transcript)
        assert moved.text == "Spain."
        sent = emu.requests[-1].body["messages"][1]
        assert sent["role"] == "assistant"
        assert [block["type"] for block in sent["content"]] == ["text"]
        assert sent["content"][0]["text"] == ANSWER


def test_streamed_and_whole_answers_are_equal() -> None:
    tools = [wink.WebSearch(), wink.CodeExecution()]
    with (
        ProviderEmulator([Turn.text(ANSWER), Turn.text(ANSWER)]) as emu,
        wink.create_adapter(
            "google:gemini-2.5-flash", base_url=emu.base_url("google"), api_key="k"
        ) as gemini,
    ):
        whole = _run(gemini, streamed=False, builtin_tools=tools)
        streamed = _run(gemini, streamed=True, builtin_tools=tools)
    assert streamed.citations == whole.citations != ()
    assert streamed.transcript[-1].builtin_calls == whole.transcript[-1].builtin_calls
    assert streamed.usage.web_search_requests == whole.usage.web_search_requests == 1


def test_gemini_2_refuses_a_builtin_tool_beside_functions_in_its_words() -> None:
    spec = ToolSpec("lookup", "Look a city up.", {"type": "object", "properties": {}})
    request = ModelRequest(
        "p", (UserMessage("Where?"),), (spec,), builtin_tools=(wink.WebSearch(),)
    )
    body = build_request(request, ModelSettings())
    path = "/v1beta/models/{}:generateContent"
    with ProviderEmulator([Turn.text("Here."), Turn.text("Here.")]) as emu:
        refused = httpx.post(emu.base_url("google") + path.format("gemini-2.5-flash"), json=body)
        taken = httpx.post(
            emu.base_url("google") + path.format("gemini-3-flash-preview"), json=body
        )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "Tool use with function calling is unsupported by the model."
    )
    assert taken.status_code == 200


def test_the_google_genai_sdk_reads_the_emulated_grounding_and_code() -> None:
    config = types.GenerateContentConfig(
        tools=[
            types.Tool(google_search=types.GoogleSearch()),
            types.Tool(code_execution=types.ToolCodeExecution()),
        ]
    )
    with ProviderEmulator([Turn.text(ANSWER)]) as emu:
        options = types.HttpOptions(base_url=emu.base_url("google"))
        with genai.Client(api_key="k", http_options=options) as client:
            response = client.models.generate_content(
                model="gemini-2.5-flash", contents="Who won Euro 2024?", config=config
            )
    candidate = (response.candidates or [])[0]
    parts = (candidate.content.parts or []) if candidate.content else []
    assert parts[0].executable_code is not None
    assert parts[1].code_execution_result is not None
    assert parts[1].code_execution_result.output == ANSWER + "\n"
    grounding = candidate.grounding_metadata
    assert grounding is not None
    assert grounding.web_search_queries == ["Who won Euro 2024?"]
    supports = grounding.grounding_supports or []
    assert [s.segment.text for s in supports if s.segment] == [
        "Spain won Euro 2024.",
        "Ödegaard — not there; España 2:1 England.",
    ]


@pytest.mark.parametrize(
    "name",
    ["streams/google/code_execution_parts.json", "streams/google/text_thought_signature.json"],
)
def test_recorded_code_runs_stream_into_their_calls(name: str) -> None:
    body = load_recording(name)["response"]["body"]
    chunks = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    decoder = GeminiStreamDecoder("p", (), parse_response)
    events: list[Any] = []
    for chunk in chunks:
        decoder.feed("", chunk, events)
    response = decoder.finish()
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    codes = [part["executableCode"] for part in parts if "executableCode" in part]
    results = [part["codeExecutionResult"] for part in parts if "codeExecutionResult" in part]
    assert codes
    assert len(codes) == len(results)
    assert response.builtin_calls == tuple(
        wink.BuiltinToolCall(
            "google", "code_execution", code.get("id"), code=code["code"], output=result["output"]
        )
        for code, result in zip(codes, results, strict=True)
    )
    native = [next(iter(part)) for part in response.native.items]  # type: ignore[union-attr]
    assert native.count("executableCode") == len(codes)


def test_a_url_context_read_reads_as_its_pages_and_their_status() -> None:
    with (
        ProviderEmulator([Turn.text("It is about wink.")]) as emu,
        wink.create_adapter(
            "google:gemini-2.5-flash", base_url=emu.base_url("google"), api_key="k"
        ) as gemini,
    ):
        response = gemini.evaluate(
            "Summarize https://example.com/a and https://example.org/b",
            builtin_tools=[wink.UrlContext()],
        )
    assert emu.requests[0].body["tools"] == [{"urlContext": {}}]
    assert response.transcript[-1].builtin_calls == (
        wink.BuiltinToolCall(
            "google", "url_context", sources=(WebSource("https://example.com/a"),)
        ),
        wink.BuiltinToolCall(
            "google", "url_context", sources=(WebSource("https://example.org/b"),)
        ),
    )
    failed = parse_response(
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "No."}]},
                    "finishReason": "STOP",
                    "urlContextMetadata": {
                        "urlMetadata": [
                            {
                                "retrievedUrl": "https://x.example/",
                                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_ERROR",
                            }
                        ]
                    },
                }
            ]
        }
    )
    assert failed.builtin_calls[0].error == "URL_RETRIEVAL_STATUS_ERROR"
