"""AWS event-stream framing: messages decoded whatever the network's cuts, both CRCs
checked, every header type read; a corrupt frame fails the round in its response phase at
once (never a wait for bytes a bad length promised). botocore's own parser is the
reference the decoder is checked against."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from wink import PromptEvaluationError, TextDelta
from wink.core.foundation.events import StreamEvent
from wink.core.foundation.messages import ModelResponse
from wink.core.transport.eventstream import (
    CorruptFrame,
    EventStreamFraming,
    decode_headers,
)
from wink.core.transport.reading import BodyReader
from wink.testing.eventstream import encode_message, event_frame, exception_frame

_WHEN = datetime.datetime(2026, 11, 28, 12, 30, 15, 123000, tzinfo=datetime.UTC)
_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
_EVERY_TYPE: list[tuple[str, int, Any]] = [
    ("yes", 0, True),
    ("no", 1, False),
    ("byte", 2, -7),
    ("short", 3, -300),
    ("int", 4, 70000),
    ("long", 5, -(2**40)),
    ("bytes", 6, b"\x00\xff"),
    ("text", 7, "héllo"),
    ("when", 8, _WHEN),
    ("id", 9, _ID),
]


def test_every_header_type_is_read() -> None:
    message = encode_message(_EVERY_TYPE, b"payload")
    (decoded,) = EventStreamFraming().messages(message)
    assert decoded.headers == {name: value for name, _, value in _EVERY_TYPE}
    assert decoded.payload == b"payload"


def test_the_decoder_agrees_with_botocores_parser() -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    message = encode_message(_EVERY_TYPE, b'{"a": 1}')
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(message)
    (reference,) = list(buffer)
    (decoded,) = EventStreamFraming().messages(message)
    assert decoded.payload == reference.payload
    expected = dict(reference.headers)
    expected["when"] = _WHEN  # botocore gives the timestamp as its integer milliseconds
    expected["id"] = _ID  # and the UUID as its 16 bytes
    assert _ID.bytes == reference.headers["id"]
    assert int(_WHEN.timestamp() * 1000) == reference.headers["when"]
    assert decoded.headers == expected


def test_frames_name_events_exceptions_and_errors() -> None:
    error = encode_message(
        [
            (":message-type", 7, "error"),
            (":error-code", 7, "InternalFailure"),
            (":error-message", 7, "boom"),
        ],
        b"",
    )
    framing = EventStreamFraming()
    body = event_frame("messageStart", {"role": "assistant"})
    body += exception_frame("throttlingException", "slow down") + error
    assert framing.feed(body) == [
        ("messageStart", b'{"role":"assistant"}'),
        ("throttlingException", b'{"message": "slow down"}'),
        ("InternalFailure", b'{"message": "boom"}'),
    ]


def test_repeated_and_many_distinct_header_blocks_each_name_their_own_frame() -> None:
    """The framing reads each distinct header block once: the same block names the same
    frame, a block differing by one value (an error's message) its own, and a stream of
    more distinct blocks than it keeps is still read right."""

    def error(text: str) -> bytes:
        headers = [(":message-type", 7, "error"), (":error-code", 7, "Failure")]
        return encode_message([*headers, (":error-message", 7, text)], b"")

    framing = EventStreamFraming()
    names = [f"event{number}" for number in range(150)]
    body = b"".join(event_frame(name, {"n": name}) for name in [*names, *reversed(names)])
    expected = [(name, f'{{"n":"{name}"}}'.encode()) for name in [*names, *reversed(names)]]
    assert framing.feed(body) == expected
    assert framing.feed(error("one") + error("two") + error("one")) == [
        ("Failure", b'{"message": "one"}'),
        ("Failure", b'{"message": "two"}'),
        ("Failure", b'{"message": "one"}'),
    ]


_messages = st.lists(
    st.tuples(
        st.sampled_from(["messageStart", "contentBlockDelta", "metadata"]),
        st.binary(max_size=40),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(_messages, st.data())
def test_a_body_cut_at_any_byte_boundaries_gives_the_same_frames(
    messages: list[tuple[str, bytes]], data: st.DataObject
) -> None:
    body = b"".join(
        encode_message([(":event-type", 7, name), (":message-type", 7, "event")], payload)
        for name, payload in messages
    )
    cuts = sorted(data.draw(st.sets(st.integers(1, len(body) - 1), max_size=len(body))))
    framing = EventStreamFraming()
    frames: list[tuple[str, bytes]] = []
    for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True):
        frames += framing.feed(body[start:end])
    assert frames == [(name, payload or b"{}") for name, payload in messages]


def test_a_body_fed_one_byte_at_a_time_gives_each_frame_when_its_last_byte_arrives() -> None:
    first, second = event_frame("a", {"x": 1}), event_frame("b", {"y": 2})
    framing = EventStreamFraming()
    seen = [framing.feed(bytes([byte])) for byte in first + second]
    completed = [index for index, frames in enumerate(seen) if frames]
    assert completed == [len(first) - 1, len(first) + len(second) - 1]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 255), st.data())
def test_any_flipped_byte_is_caught_however_the_body_is_cut(
    where: int, flip: int, data: st.DataObject
) -> None:
    body = bytearray(event_frame("contentBlockDelta", {"delta": {"text": "hello there"}}))
    body[where % len(body)] ^= flip
    cuts = sorted(data.draw(st.sets(st.integers(1, len(body) - 1), max_size=8)))
    framing = EventStreamFraming()
    pieces = [bytes(body[a:b]) for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]

    def feed_all() -> None:  # a flipped length fails its prelude CRC: no wait for more
        for piece in pieces:
            framing.feed(piece)

    with pytest.raises(CorruptFrame):
        feed_all()


def test_a_corrupt_length_fails_at_once_rather_than_waiting_for_its_bytes() -> None:
    body = bytearray(event_frame("a", {}))
    body[0:4] = (2**31).to_bytes(4, "big")  # claims 2 GiB; its prelude CRC no longer fits
    with pytest.raises(CorruptFrame, match="prelude CRC"):
        EventStreamFraming().feed(bytes(body[:12]))


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        (b"\x03abc\x07\x00\x05ab", "cut short"),  # a string value cut short
        (b"\x03abc\x0c", "unknown type 12"),
        (b"\x01a\x00\x01a\x01", "twice"),
        (b"\x02\xff\xfe\x00", "malformed"),  # a name that is not UTF-8
    ],
)
def test_malformed_headers_are_corrupt(block: bytes, problem: str) -> None:
    with pytest.raises(CorruptFrame, match=problem):
        decode_headers(block)


class _Recorder:
    end_marker: str | None = None
    usage_reported = False

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any] | None]] = []

    def feed(self, event: str, payload: dict[str, Any] | None, out: list[StreamEvent]) -> None:
        self.seen.append((event, payload))
        out.append(TextDelta(str((payload or {}).get("text", ""))))

    def finish(self) -> ModelResponse:
        raise AssertionError("not reached")


def test_the_reader_reads_a_wire_s_framing_and_fails_a_corrupt_frame_in_its_response() -> None:
    decoder = _Recorder()
    reader = BodyReader(decoder, "p", ("secret",), EventStreamFraming())
    good = event_frame("contentBlockDelta", {"text": "hi"})
    bad = bytearray(event_frame("contentBlockDelta", {"text": "no"}))
    bad[-1] ^= 1  # the message CRC
    assert reader.feed(good + bytes(bad)) == []  # the piece failed as a whole
    failure = reader.failure
    assert isinstance(failure, PromptEvaluationError)
    assert failure.phase == "response"
    assert "CRC" in str(failure)
    reader = BodyReader(_Recorder(), "p", (), EventStreamFraming())
    assert reader.feed(good) == [TextDelta("hi")]
