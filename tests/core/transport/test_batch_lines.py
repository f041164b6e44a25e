"""Reading a batch's results file (`wink.core.transport.batches.keyed_lines`), the part the
OpenAI and Anthropic batch wires share: a line without its item's key, or that is not a
JSON object, is a malformed answer naming the file."""

from __future__ import annotations

import pytest

from wink.core.transport.batches import keyed_lines
from wink.core.transport.errors import MalformedResponse


def test_lines_come_back_with_their_keys_in_order() -> None:
    content = b'{"custom_id": "b", "n": 1}\n\n{"custom_id": "a", "n": 2}\n'
    assert keyed_lines(content, "the results") == [
        ("b", {"custom_id": "b", "n": 1}),
        ("a", {"custom_id": "a", "n": 2}),
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"custom_id": "a"}\n{"n": 2}\n', "a line of the results has no custom_id"),
        (b'{"custom_id": 7}\n', "a line of the results has no custom_id"),
        (b'{"custom_id": "a"}\nnot json\n', "the results, line 2: not JSON"),
        (b"[1, 2]\n", "the results, line 1: not a JSON object"),
    ],
)
def test_a_malformed_line_names_the_file(content: bytes, problem: str) -> None:
    with pytest.raises(MalformedResponse, match=problem.replace("(", r"\(")):
        keyed_lines(content, "the results")
