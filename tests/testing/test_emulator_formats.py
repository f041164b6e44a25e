"""Wire value formats: Go and protobuf durations, RFC 3339, header seconds, ids."""

from __future__ import annotations

import re

import pytest

from wink.testing.formats import (
    IdSource,
    ceil_ms,
    go_duration,
    proto_duration,
    rfc3339,
    seconds_text,
)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "0s"),
        (0.002, "2ms"),
        (0.12, "120ms"),
        (0.0001, "1ms"),  # rounded up: never tell a client to come back early
        (1.235, "1.235s"),
        (8.64, "8.64s"),
        (1, "1s"),
        (360, "6m0s"),
        (90.5, "1m30.5s"),
        (3600, "1h0m0s"),
    ],
)
def test_go_duration(seconds: float, expected: str) -> None:
    assert go_duration(seconds) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (42, "42s"),
        (1.5, "1.500s"),
        (0.099, "0.099s"),
        (3.598366221, "3.598366221s"),
        (0.0000015, "0.000001500s"),
    ],
)
def test_proto_duration(seconds: float, expected: str) -> None:
    assert proto_duration(seconds) == expected


def test_seconds_and_ms() -> None:
    assert [seconds_text(s) for s in (1, 1.5, 0.0991, 0)] == ["1", "1.5", "0.099", "0"]
    assert [ceil_ms(s) for s in (0.1, 0.0991, 0.3, 0)] == [100, 100, 300, 0]


def test_rfc3339() -> None:
    assert rfc3339(1762296655) == "2025-11-04T22:50:55Z"
    assert rfc3339(1762296655.25) == "2025-11-04T22:50:55.250Z"


def test_ids_look_like_the_providers_and_are_seedable() -> None:
    ids = IdSource(seed=7)
    assert re.fullmatch(r"chatcmpl-[A-Za-z0-9]{29}", ids.openai_completion())
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", ids.openai_call())
    assert re.fullmatch(r"resp_[0-9a-f]{48}", ids.response())
    assert re.fullmatch(r"fc_[0-9a-f]{48}", ids.response_item("fc"))
    assert re.fullmatch(r"msg_01[A-Za-z0-9]{22}", ids.anthropic_message())
    assert re.fullmatch(r"toolu_01[A-Za-z0-9]{22}", ids.anthropic_tool_use())
    assert re.fullmatch(r"req_[0-9a-f]{32}", ids.openai_request())
    assert IdSource(seed=7).openai_completion() == IdSource(seed=7).openai_completion()
