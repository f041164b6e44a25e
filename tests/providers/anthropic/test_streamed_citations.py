"""Streamed citations: Anthropic's `citations_delta` events become `CitationDelta`s, and
the streamed answer's citations equal the whole answer's (a recorded stream, and the
emulator citing a document)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import anthropic

import wink
from tests.helpers.adapters import make_adapter
from wink.testing import Fault, ProviderEmulator, Turn

RECORDING = (
    Path(__file__).resolve().parents[2]
    / "conformance"
    / "streams"
    / "anthropic"
    / "server_tool_web_search_citations.json"
)
FACTS = wink.Document.from_text(
    "The grass is green. The sky is blue.", name="Facts", citations=True
)


def _unplaced(citations: tuple[wink.Citation, ...]) -> list[wink.Citation]:
    return [dataclasses.replace(citation, span=None) for citation in citations]


def test_a_recorded_citations_delta_streams_as_a_citation_event(
    emulator: ProviderEmulator,
) -> None:
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))["response"]
    emulator.enqueue(Fault.http(200, recorded["body"], {"content-type": "text/event-stream"}))
    adapter = make_adapter("anthropic", emulator)
    with adapter.stream("Briefly mention 1 event that happened yesterday") as stream:
        events = list(stream)
    cited = [event.citation for event in events if isinstance(event, wink.CitationDelta)]
    assert len(cited) >= 1
    assert cited[0].url == (
        "https://www.share-talk.com/what-happened-overnight-tuesday-16th-september-2025/"
    )
    assert cited[0].cited_text == "Asian Markets Higher as Fed Rate Cut Hopes Lift Global Sentiment"
    assert cited == _unplaced(stream.response.citations)
    # the citation comes before the text it supports
    first = events.index(next(e for e in events if isinstance(e, wink.CitationDelta)))
    later = "".join(e.text for e in events[first:] if isinstance(e, wink.TextDelta))
    assert later.startswith("Asian markets rose higher")


def test_the_streamed_answer_cites_as_the_whole_one(
    provider_emulator_factory: type[ProviderEmulator],
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("The grass is green."))
    emulator.set_streaming(chunk_size=4)
    adapter = make_adapter("anthropic", emulator)
    whole = adapter.evaluate("Grass?", attachments=[FACTS])
    with adapter.stream("Grass?", attachments=[FACTS]) as stream:
        events = list(stream)
    assert stream.response.citations == whole.citations
    assert whole.citations[0].span == (0, 19)
    cited = [event.citation for event in events if isinstance(event, wink.CitationDelta)]
    assert cited == _unplaced(whole.citations)


def test_the_emulator_streams_citations_in_anthropics_shape(
    ok_emulator: ProviderEmulator,
) -> None:
    client = anthropic.Anthropic(api_key="sk-test", base_url=ok_emulator.base_url("anthropic"))
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Grass is green."},
        "citations": {"enabled": True},
    }
    with client.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=100,
        messages=[{"role": "user", "content": [document, {"type": "text", "text": "?"}]}],
    ) as stream:
        kinds = [event.delta.type for event in stream if event.type == "content_block_delta"]
        message = stream.get_final_message()
    assert kinds[0] == "citations_delta"
    assert set(kinds[1:]) == {"text_delta"}
    (block,) = message.content
    assert block.type == "text"
    assert [(c.type, c.cited_text) for c in block.citations or []] == [
        ("char_location", "Grass is green.")
    ]
