"""Script files: the JSON format scripts what the Python constructors script, and every
mistake in one is a `ScriptFileError` naming the file and the entry at fault."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.helpers.adapters import KEY
from wink import ConfigurationError, InvalidArgumentError
from wink.testing import (
    EmulatedThinking,
    EmulatedToolCall,
    EmulatorScript,
    Fault,
    RateLimit,
    ScriptFileError,
    Turn,
    load_script,
    parse_script,
)

EVERYTHING: dict[str, Any] = {
    "script": [
        {
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}],
            "text": "Checking.",
            "thinking": "I need the weather.",
            "input_tokens": 20,
        },
        {"tool_calls": [{"name": "broken", "arguments": '{"city": "Par'}]},
        {"fault": "rate_limit", "retry_after": 0.5, "header_style": "both"},
        {"fault": "latency", "seconds": 0.25},
        {"fault": "http", "status": 502, "body": "bad gateway", "headers": {"X-Edge": "1"}},
        {"fault": "stream_error", "after": 2, "kind": "quota_exhausted"},
        {
            "text": "Sunny.",
            "thinking": [{"text": "secret", "redacted": True}, "Shown."],
            "finish": "length",
            "output_tokens": 7,
            "cached_tokens": 3,
            "reasoning_tokens": 2,
        },
        {"json": {"city": "Paris", "degrees": 21}},
        {"refusal": "I can't help with that."},
        {"paused": None, "thinking": "Searching."},
        {"fault": "overloaded"},
    ],
    "default_turn": {"text": "Nothing more."},
    "rate_limit": {"requests_per_second": 5, "burst": 2, "headers": False},
}


def test_every_entry_is_the_python_it_stands_for() -> None:
    script = parse_script(EVERYTHING)
    assert script == EmulatorScript(
        items=(
            Turn.tool_calls(
                EmulatedToolCall("get_weather", {"city": "Paris"}, id="c1"),
                text="Checking.",
                thinking="I need the weather.",
                input_tokens=20,
            ),
            Turn.tool_calls(EmulatedToolCall("broken", '{"city": "Par')),
            Fault.rate_limit(retry_after=0.5, header_style="both"),
            Fault.latency(0.25),
            Fault.http(502, "bad gateway", {"X-Edge": "1"}),
            Fault.stream_error(after=2, kind="quota_exhausted"),
            Turn.text(
                "Sunny.",
                thinking=[EmulatedThinking("secret", redacted=True), "Shown."],
                finish="length",
                output_tokens=7,
                cached_tokens=3,
                reasoning_tokens=2,
            ),
            Turn.json({"city": "Paris", "degrees": 21}),
            Turn.refusal("I can't help with that."),
            Turn.paused(thinking="Searching."),
            Fault.overloaded(),
        ),
        default_turn=Turn.text("Nothing more."),
        rate_limit=RateLimit(requests_per_second=5, burst=2, headers=False),
    )


def test_a_file_scripts_an_emulator_the_sdk_talks_to(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "script": [{"fault": "unauthorized"}, {"text": "Hello."}],
                "default_turn": {"text": "Again."},
            }
        )
    )
    with load_script(path).emulator() as emu:
        client = openai.OpenAI(api_key=KEY, base_url=emu.base_url("openai"), max_retries=0)
        ask: dict[str, Any] = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}]}
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(**ask)
        answers = [client.chat.completions.create(**ask) for _ in range(2)]
        client.close()
    assert [answer.choices[0].message.content for answer in answers] == ["Hello.", "Again."]


BAD: list[tuple[Any, str | None, str]] = [
    ([], None, "a script file holds one JSON object, not []"),
    ({"turns": []}, None, "unknown key 'turns' (this entry takes: script, default_turn"),
    ({"script": {"text": "a"}}, None, "`script` must be a list of turns and faults"),
    ({"script": ["Hello"]}, "script[0]", 'a turn or fault is a JSON object, not "Hello"'),
    ({"script": [{"txt": "a"}]}, "script[0]", "an entry needs one of `tool_calls`, `json`"),
    ({"script": [{"json": 1, "refusal": "x"}]}, "script[0]", "cannot be both 'json' and"),
    ({"script": [{"json": 1, "thinking": "x"}]}, "script[0]", "unknown key 'thinking'"),
    ({"script": [{"text": 3}]}, "script[0].text", "must be a string, not 3"),
    ({"script": [{"text": "a", "finish": "end"}]}, "script[0].finish", "must be one of stop,"),
    ({"script": [{"text": "a", "input_tokens": -1}]}, "script[0].input_tokens", "not -1"),
    ({"script": [{"text": "a", "thinking": 3}]}, "script[0].thinking", "thinking is a text"),
    (
        {"script": [{"text": "a", "thinking": ["x", {"text": "y", "redacted": 1}]}]},
        "script[0].thinking[1].redacted",
        "must be true or false",
    ),
    ({"script": [{"tool_calls": []}]}, "script[0].tool_calls", "a non-empty list of calls"),
    (
        {"script": [{"text": "a"}, {"tool_calls": [{"name": "f", "args": {}}]}]},
        "script[1].tool_calls[0]",
        "unknown key 'args' (this entry takes: name, arguments, id)",
    ),
    (
        {"script": [{"tool_calls": [{"name": "f", "arguments": [1]}]}]},
        "script[0].tool_calls[0].arguments",
        "must be an object, or a string sent raw",
    ),
    ({"script": [{"fault": "ratelimit"}]}, "script[0].fault", "unknown fault kind 'ratelimit'"),
    (
        {"script": [{"fault": "rate_limit", "retry_after": "2s"}]},
        "script[0].retry_after",
        'must be a number or null, not "2s"',
    ),
    (
        {"script": [{"fault": "rate_limit", "header_style": "minutes"}]},
        "script[0].header_style",
        'must be one of "seconds", "ms", "both" or null',
    ),
    (
        {"script": [{"fault": "hang", "seconds": -1}]},
        "script[0]",
        "Fault.hang(seconds=...) takes a number >= 0, got -1",
    ),
    (
        {"script": [{"fault": "overloaded", "status": 503}]},
        "script[0]",
        "Fault.overloaded() takes no arguments; not 'status'",
    ),
    (
        {"script": [{"fault": "http", "status": 200, "chunks": [0]}]},
        "script[0]",
        "Fault.http(chunks=...) takes an int >= 1, got 0",
    ),
    ({"default_turn": {"fault": "overloaded"}}, "default_turn", "must be a turn, not a fault"),
    (
        {"rate_limit": {"requests_per_second": 0}},
        "rate_limit",
        "RateLimit(requests_per_second=...) takes a number above 0, got 0",
    ),
    (
        {"script": [{"text": "Hi", "expect_history": "user: Hi"}]},
        "script[0].expect_history",
        "must be a list of history lines",
    ),
    (
        {"script": [{"text": "Hi", "expect_history": ["user: Hi", 3]}]},
        "script[0].expect_history[1]",
        "must be a string, not 3",
    ),
    (
        {"rate_limit": {"rps": 2}},
        "rate_limit",
        "RateLimit() takes requests_per_second, burst, headers; not 'rps'",
    ),
]


@pytest.mark.parametrize(("data", "entry", "problem"), BAD)
def test_a_mistake_names_its_entry(data: Any, entry: str | None, problem: str) -> None:
    with pytest.raises(ScriptFileError) as raised:
        parse_script(data, path="turns.json")
    error = raised.value
    assert isinstance(error, ConfigurationError)
    assert (error.path, error.entry, error.option) == ("turns.json", entry, "script")
    prefix = f"turns.json: {entry}: " if entry else "turns.json: "
    assert str(error).startswith(prefix)
    assert problem in str(error)


def test_a_turn_entry_may_expect_the_history_its_request_carries() -> None:
    data = {"script": [{"text": "You are Ada.", "expect_history": ["user: I am Ada."]}]}
    (turn,) = parse_script(data).items
    assert turn == Turn.text("You are Ada.").expecting_history("user: I am Ada.")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"script": [}', "not valid JSON: Expecting value: line 1 column 13"),
        ('{"script": [], "script": []}', "the key 'script' appears twice in one object"),
        (b"\xff\xfe", "cannot read the script file"),
    ],
)
def test_a_file_that_is_not_a_script(tmp_path: Path, text: str | bytes, problem: str) -> None:
    path = tmp_path / "turns.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ScriptFileError, match="^" + str(path).replace(".", r"\.")) as raised:
        load_script(path)
    assert problem in str(raised.value)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match="cannot read the script file: No such file"):
        load_script(tmp_path / "nowhere.json")


def test_the_documented_example_is_a_script() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
    blocks = re.findall(r"```json\n(.*?)```", docs.read_text(), re.DOTALL)
    assert blocks
    for block in blocks:
        script = parse_script(json.loads(block))
        assert script.items
        assert script.default_turn is not None


def test_a_script_built_in_python_is_checked_too() -> None:
    with pytest.raises(InvalidArgumentError, match="a script holds Turn and Fault values"):
        EmulatorScript(items=(Turn.text("a"), "b"))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="a Turn or None"):
        EmulatorScript(default_turn=Fault.overloaded())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="takes a file path, got an int"):
        load_script(3)  # type: ignore[arg-type]
    with pytest.raises(ScriptFileError, match="a script file holds one JSON object, not an obj"):
        parse_script(object())
