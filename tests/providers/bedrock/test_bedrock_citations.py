"""`Document(citations=True)` on Bedrock Converse: the document block asks for citations
(`citations: {enabled: true}`), the `citationsContent` block of the answer reads back as
`wink.Citation`s with the place cited, streamed (`citation` deltas) and not, equal both
ways; the emulator answers in that shape; the turn goes back to Converse as it came."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import wink
from tests.helpers.adapters import make_adapter
from tests.helpers.media import pdf
from wink.core.foundation.content import TextPart
from wink.core.foundation.messages import ModelRequest, UserMessage
from wink.core.foundation.settings import ModelSettings
from wink.core.transport.errors import MalformedResponse
from wink.providers.bedrock.converse import build_request, parse_response
from wink.testing import ProviderEmulator, Turn

TEXT = "The grass is green. The sky is blue."
FACTS = wink.Document.from_text(TEXT, name="Facts", citations=True)

# The answer shape of the Bedrock API reference (CitationsContentBlock, Citation,
# CitationLocation): a text piece cited by page of the request's second document.
DOCUMENTED = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "In short: "},
                {
                    "citationsContent": {
                        "content": [{"text": "the report covers 2024."}],
                        "citations": [
                            {
                                "title": "Annual report",
                                "sourceContent": [{"text": "This report covers 2024."}],
                                "location": {
                                    "documentPage": {"documentIndex": 1, "start": 2, "end": 3}
                                },
                            }
                        ],
                    }
                },
            ],
        }
    },
    "stopReason": "end_turn",
    "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
}
DOCUMENTED_CITATION = wink.Citation(
    "This report covers 2024.",
    document_index=1,
    document_title="Annual report",
    pages=(2, 3),
    span=(10, 33),
)
# What the emulator cites of `FACTS` for the answer "The grass is green."
GRASS_CITATION = wink.Citation(
    "The grass is green. ", document_index=0, document_title="Facts", chars=(0, 20), span=(0, 19)
)


def _streamed(adapter: Any, *attachments: wink.Document) -> tuple[Any, list[wink.Citation]]:
    """The streamed answer, and the citations its `CitationDelta`s carried."""
    with adapter.stream("Grass?", attachments=list(attachments)) as stream:
        seen = [e.citation for e in stream if isinstance(e, wink.CitationDelta)]
    return stream.response, seen


def test_the_document_block_asks_for_citations_only_when_told() -> None:
    plain = wink.Document.from_text(TEXT, name="Facts")
    for document, asked in ((FACTS, {"enabled": True}), (plain, None)):
        request = ModelRequest("p", (UserMessage((TextPart("Grass?"), document)),))
        body = build_request(
            request, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", ModelSettings()
        )
        (block,) = [b["document"] for b in body["messages"][0]["content"] if "document" in b]
        assert block.get("citations") == asked


def test_the_documented_answer_reads_as_citations_with_their_places() -> None:
    response = parse_response(DOCUMENTED)
    assert response.text == "In short: the report covers 2024."
    assert response.citations == (DOCUMENTED_CITATION,)


def test_a_round_trip_on_the_emulator_cites_the_document_streamed_and_not() -> None:
    with ProviderEmulator(default_turn=Turn.text("The grass is green.")) as emulator:
        adapter = make_adapter("bedrock", emulator)
        plain = adapter.evaluate("Grass?", attachments=[FACTS])
        streamed, seen = _streamed(adapter, FACTS)
        sent = emulator.requests[0].body["messages"][0]["content"]
    assert [b["document"]["citations"] for b in sent if "document" in b] == [{"enabled": True}]
    assert plain.citations == (GRASS_CITATION,)
    assert streamed.text == plain.text == "The grass is green."
    assert streamed.citations == plain.citations
    # a delta comes before the answer's text is whole: it knows no span yet
    assert seen == [replace(GRASS_CITATION, span=None)]


def test_a_pdf_is_cited_by_page() -> None:
    report = replace(
        wink.Document.from_bytes(pdf(), "application/pdf", name="Report"), citations=True
    )
    with ProviderEmulator(default_turn=Turn.text("It covers 2024.")) as emulator:
        adapter = make_adapter("bedrock", emulator)
        response = adapter.evaluate("Covers?", attachments=[FACTS, report])
    second = response.citations[1]
    assert (second.document_index, second.document_title, second.pages) == (1, "Report", (1, 2))


def test_the_cited_turn_goes_back_to_converse_as_it_came() -> None:
    expected = ("user: Grass?", "assistant: The grass is green.", "user: Sure?")
    answers = [Turn.text("The grass is green."), Turn.text("Yes.").expecting_history(*expected)]
    with ProviderEmulator(answers) as emulator:
        adapter = make_adapter("bedrock", emulator)
        first = adapter.evaluate("Grass?", attachments=[FACTS])
        again = adapter.evaluate("Sure?", history=first.transcript)
        echoed = emulator.requests[1].body["messages"][1]["content"]
    assert again.text == "Yes."
    assert echoed == [dict(block) for block in first.transcript[-1].native.items]
    assert "citationsContent" in echoed[0]


def test_a_malformed_citations_block_is_a_malformed_response() -> None:
    broken = {**DOCUMENTED, "output": {"message": {"content": [{"citationsContent": {}}]}}}
    with pytest.raises(MalformedResponse):
        parse_response(broken)
