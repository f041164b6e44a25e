"""The SSE parser: events as the spec defines them, whatever the pieces the body comes in."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from wink.core.transport.sse import SSEDecoder

BODY = (
    "event: message_start\n"
    'data: {"type":"message_start"}\n'
    "\n"
    ": a comment line\n"
    "event: content_block_delta\n"
    'data: {"text":"Pelé 🐦 “quoted”"}\n'
    "\n"
    "id: 7\n"
    "retry: 1000\n"
    "data: first line\n"
    "data:second line\n"
    "\n"
    "data: [DONE]\n"
    "\n"
).encode()
EVENTS = [
    ("message_start", '{"type":"message_start"}'),
    ("content_block_delta", '{"text":"Pelé 🐦 “quoted”"}'),
    ("message", "first line\nsecond line"),
    ("message", "[DONE]"),
]


def parse(pieces: list[bytes]) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    events: list[tuple[str, str]] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    events.extend(decoder.close())
    return events


def test_whole_body() -> None:
    assert parse([BODY]) == EVENTS


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    assert parse([BODY.replace(b"\n", newline)]) == EVENTS


def test_one_byte_at_a_time() -> None:
    assert parse([BODY[index : index + 1] for index in range(len(BODY))]) == EVENTS


def test_crlf_cut_between_cr_and_lf_is_one_line_end() -> None:
    body = b"data: a\r\n\r\ndata: b\r\n\r\n"
    cut = body.index(b"\n")  # the piece ends in "\r"; "\n" starts the next one
    assert parse([body[:cut], body[cut:]]) == [("message", "a"), ("message", "b")]


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=40))
def test_any_cuts_give_the_same_events(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(BODY)]
    crlf = BODY.replace(b"\n", b"\r\n")
    assert parse([BODY[a:b] for a, b in itertools.pairwise(points)]) == EVENTS
    scaled = [0, *sorted(min(len(crlf), 2 * cut) for cut in cuts), len(crlf)]
    assert parse([crlf[a:b] for a, b in itertools.pairwise(scaled)]) == EVENTS


def test_an_event_without_its_blank_line_is_dispatched_at_the_end() -> None:
    assert parse([b'data: {"done":true}\n']) == [("message", '{"done":true}')]


def test_a_line_cut_off_at_the_end_is_dropped() -> None:
    assert parse([b'data: {"a":1}\n\ndata: {"cut']) == [("message", '{"a":1}')]


def test_a_blank_line_without_data_resets_the_event_name() -> None:
    assert parse([b"event: ping\n\ndata: x\n\n"]) == [("message", "x")]


def test_a_body_that_is_not_utf8_is_an_error() -> None:
    with pytest.raises(UnicodeDecodeError):
        parse([b"data: \xff\xfe\n\n"])


def test_foreign_lines_are_remembered() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"<html><body>502 Bad Gateway</body></html>\n") == []
    assert decoder.foreign == "<html><body>502 Bad Gateway</body></html>"
