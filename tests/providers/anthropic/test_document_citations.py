"""`Document(citations=True)`: Anthropic is asked to cite the document and its
char / page / content-block citations read back as `wink.Citation`s equal to the documented
shape; the emulator refuses what the API refuses of them; every other wire refuses the
document before sending."""

from __future__ import annotations

import json

import anthropic
import pytest

import wink
from tests.helpers.adapters import make_adapter
from tests.helpers.media import pdf
from tests.helpers.wire import load_recording
from wink.core.foundation.content import TextPart
from wink.core.foundation.messages import AssistantMessage, UserMessage
from wink.core.foundation.transcript_json import load_messages
from wink.testing import Fault, ProviderEmulator, Turn

RECORDED = "anthropic_docs/document_citations.json"
TEXT = "The grass is green. The sky is blue."


def _facts(**options: bool) -> wink.Document:
    return wink.Document.from_text(TEXT, name="My Document", **options)


def test_the_document_block_asks_for_citations_only_when_told(
    ok_emulator: ProviderEmulator,
) -> None:
    adapter = make_adapter("anthropic", ok_emulator)
    report = wink.Document("application/pdf", data=pdf(), name="Annual report", citations=True)
    linked = wink.Document("application/pdf", url="https://example.com/a.pdf", citations=True)
    adapter.evaluate("Summarize", attachments=[_facts(citations=True), report, linked])
    adapter.evaluate("Summarize", attachments=[_facts()])
    asked, plain = (list(r.body["messages"][0]["content"]) for r in ok_emulator.requests)
    assert [block.get("citations") for block in asked[1:]] == [{"enabled": True}] * 3
    assert [block["source"]["type"] for block in asked[1:]] == ["text", "base64", "url"]
    assert "citations" not in plain[1]


def test_the_documented_answer_reads_as_citations_with_their_places(
    emulator: ProviderEmulator,
) -> None:
    recorded = load_recording(RECORDED)
    emulator.enqueue(Fault.http(200, json.dumps(recorded["response"]["body"])))
    adapter = make_adapter("anthropic", emulator)
    report = wink.Document("application/pdf", data=pdf(), name="Annual report", citations=True)
    response = adapter.evaluate("Colors?", attachments=[_facts(citations=True), report])
    text = response.text or ""
    grass, sky, pages, blocks = response.citations
    assert grass == wink.Citation(
        "The grass is green.",
        document_index=0,
        document_title="My Document",
        chars=(0, 20),
        span=grass.span,
    )
    assert (sky.chars, sky.cited_text) == ((20, 36), "The sky is blue.")
    assert (pages.document_index, pages.pages, pages.chars, pages.blocks) == (1, (5, 7), None, None)
    assert (blocks.document_index, blocks.blocks, blocks.document_title) == (2, (0, 1), "Chunks")
    supported = [text[c.span[0] : c.span[1]] for c in response.citations if c.span]
    assert supported == [
        "the grass is green",
        "the sky is blue",
        "The report covers pages five and six",
        "the chunks say First chunk",
    ]
    # the transcript keeps them, places included
    loaded = load_messages(response.transcript.to_json())
    (answer,) = [m for m in loaded if isinstance(m, AssistantMessage)]
    assert answer.citations == response.citations


def test_the_emulator_cites_each_kind_of_document_as_the_api_does(
    ok_emulator: ProviderEmulator,
) -> None:
    client = anthropic.Anthropic(api_key="sk-test", base_url=ok_emulator.base_url("anthropic"))
    recorded = load_recording(RECORDED)["request"]["body"]
    answer = client.messages.create(**recorded)
    (block,) = answer.content
    kinds = [
        (c.type, c.document_index, c.document_title, c.cited_text)
        for c in block.citations or []  # type: ignore[union-attr]
    ]
    assert kinds == [
        ("char_location", 0, "My Document", "The grass is green. "),
        ("page_location", 1, "Annual report", ""),
        ("content_block_location", 2, "Chunks", "First chunk"),
    ]


def test_the_emulator_refuses_what_the_api_refuses_of_citations(
    ok_emulator: ProviderEmulator,
) -> None:
    client = anthropic.Anthropic(
        api_key="sk-test", base_url=ok_emulator.base_url("anthropic"), max_retries=0
    )
    text_doc = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "x"},
    }
    mixed = [{**text_doc, "citations": {"enabled": True}}, text_doc, {"type": "text", "text": "?"}]
    with pytest.raises(anthropic.BadRequestError, match="all documents or on none"):
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=10,
            messages=[{"role": "user", "content": mixed}],  # type: ignore[misc]
        )
    image = {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/a.png"},
        "citations": {"enabled": True},
    }
    with pytest.raises(anthropic.BadRequestError, match=r"content\.0\.image\.citations: Extra"):
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=10,
            messages=[{"role": "user", "content": [image, {"type": "text", "text": "?"}]}],  # type: ignore[misc]
        )


def test_a_round_trip_on_the_emulator_cites_the_document(
    provider_emulator_factory: type[ProviderEmulator],
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("The grass is green."))
    adapter = make_adapter("anthropic", emulator)
    response = adapter.evaluate("Grass?", attachments=[_facts(citations=True)])
    (citation,) = response.citations
    assert (citation.cited_text, citation.chars, citation.span) == (
        "The grass is green. ",
        (0, 20),
        (0, 19),
    )


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "google"])
def test_a_wire_that_cannot_cite_refuses_the_document_before_sending(
    ok_emulator: ProviderEmulator, provider: str
) -> None:
    adapter = make_adapter(provider, ok_emulator)
    with pytest.raises(wink.UnsupportedContentError, match="cannot cite documents") as caught:
        adapter.evaluate("Grass?", attachments=[_facts(citations=True)])
    assert caught.value.provider
    assert ok_emulator.requests == []


def test_citations_takes_a_bool_and_survives_the_transcript() -> None:
    with pytest.raises(wink.InvalidArgumentError, match="citations"):
        wink.Document.from_text("x", citations="yes")  # type: ignore[arg-type]
    cited = _facts(citations=True)
    assert repr(cited).endswith("citations=True)")
    history = wink.Transcript((UserMessage((TextPart("Grass?"), cited)),))
    (message,) = load_messages(history.to_json())
    assert isinstance(message, UserMessage)
    assert message.parts[1] == cited
