"""The recorded real traffic in tests/conformance: unchanged, and every whole-response
recording replayed by its adapter's tests (tests/providers/<name>/test_openai.py,
test_openai_responses.py, test_anthropic.py, test_google.py) through `tests.helpers.wire.replay`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers.wire import CONFORMANCE


def test_every_recording_is_covered() -> None:
    """Whole-response recordings; reasoning/ and streams/ have test files of their own."""
    names = {
        str(p.relative_to(CONFORMANCE))
        for folder in ("anthropic", "google", "openai")
        for p in (CONFORMANCE / folder).rglob("*.json")
    }
    sources = "".join(
        path.read_text(encoding="utf-8") for path in Path(__file__).parents[1].rglob("test_*.py")
    )
    assert {name for name in names if name not in sources} == set()


def test_the_recordings_are_unchanged_since_they_were_copied() -> None:
    """The recordings are evidence of what the real APIs sent: never edited by hand."""
    listed = {}
    for line in (CONFORMANCE / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    present = {
        str(path.relative_to(CONFORMANCE)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in CONFORMANCE.rglob("*")
        if path.is_file() and path.name != "SHA256SUMS"
    }
    assert present == listed
