"""`except WinkError` catches everything: the public API driven with bad inputs of every
kind raises a typed `WinkError` (also a TypeError / ValueError where that is the usual
way), at the call, before anything is sent.

Each module's own checks are tested in its file (tests/adapters/test_registry.py,
test_options.py, test_base.py; tests/core/foundation/test_limits.py, ...); this file holds the one
promise they add up to."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

import wink
from tests.helpers.adapters import KEY
from wink import (
    Prompt,
    Session,
    WinkError,
    create_adapter,
)


def _calls() -> list[tuple[str, Callable[[], object]]]:
    adapter = create_adapter("openai:gpt-4.1", api_key=KEY)
    return [
        ("create_adapter(None)", lambda: create_adapter(None)),  # type: ignore[arg-type]
        ("evaluate('x')", lambda: adapter.evaluate("x", session=Session())),  # type: ignore[arg-type]
        ("Prompt(name='')", lambda: Prompt(name="", sections=[])),
        ("RetryPolicy(max_attempts=0)", lambda: wink.RetryPolicy(max_attempts=0)),
        ("Deadline('10')", lambda: wink.Deadline("10")),  # type: ignore[arg-type]
        ("Deadline(nan)", lambda: wink.Deadline(float("nan"))),
        ("Budget(max_requests=-1)", lambda: wink.Budget(max_requests=-1)),
        ("Deadline(time.time() + 1)", lambda: wink.Deadline(time.time() + 1)),
        ("Deadline(-1)", lambda: wink.Deadline(-1)),
        (
            "base_url='localhost:8080'",
            lambda: create_adapter("openai:gpt-4.1", api_key=KEY, base_url="localhost:8080"),
        ),
        ("RedisLimiter('http://x')", lambda: wink.RedisLimiter("http://x", namespace="a")),
        ("RedisLimiter(namespace='')", lambda: wink.RedisLimiter("redis://x", namespace="")),
        (
            "RedisLimiter(timeout=-1)",
            lambda: wink.RedisLimiter("redis://x", namespace="a", timeout=-1),
        ),
        ("InProcessLimiter().pacer('')", lambda: wink.InProcessLimiter().pacer("")),
        ("Prompt(sections='Hello')", lambda: Prompt(name="p", sections="Hello")),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(("label", "call"), _calls(), ids=[label for label, _ in _calls()])
def test_one_except_catches_every_bad_input(label: str, call: Callable[[], object]) -> None:
    with pytest.raises(WinkError):
        call()
