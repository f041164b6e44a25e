"""`BodyReader`: one streamed body, SSE -> JSON -> the wire's decoder. Core decodes each
event's JSON once for every wire; a decoder sees objects, and None for its end marker."""

from __future__ import annotations

from typing import Any

from wink import PromptEvaluationError, TextDelta
from wink.core.foundation.events import StreamEvent
from wink.core.foundation.messages import ModelResponse
from wink.core.transport.reading import BodyReader


class Recorder:
    """A decoder that records what core hands it."""

    end_marker: str | None = "[END]"
    usage_reported = False

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any] | None]] = []

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        self.seen.append((event, payload))
        if payload is not None:
            out.append(TextDelta(str(payload.get("text", ""))))

    def finish(self) -> ModelResponse:
        raise AssertionError("not reached in these tests")


def test_each_event_reaches_the_decoder_as_an_object_and_the_end_marker_as_none() -> None:
    decoder = Recorder()
    reader = BodyReader(decoder, "p", ())
    body = b'event: delta\ndata: {"text": "hi"}\n\ndata: [END]\n\n'
    assert reader.feed(body) == [TextDelta("hi")]
    assert decoder.seen == [("delta", {"text": "hi"}), ("message", None)]
    assert reader.failure is None


def test_data_that_is_not_a_json_object_is_a_malformed_response() -> None:
    for data in (b"[1, 2]", b'{"text": "cut'):
        decoder = Recorder()
        reader = BodyReader(decoder, "p", ("secret-key",))
        assert reader.feed(b'data: {"text": "a"}\n\ndata: ' + data + b"\n\n") == [TextDelta("a")]
        failure = reader.failure
        assert isinstance(failure, PromptEvaluationError)
        assert failure.phase == "response"
        assert "malformed" in str(failure)
        assert decoder.seen == [("message", {"text": "a"})]  # the bad event never reached it
