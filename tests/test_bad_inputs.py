"""`except WinkError` catches everything: the public API driven with bad inputs of every
kind raises a typed `WinkError` (also a TypeError / ValueError where that is the usual
way), at the call, before anything is sent."""

from __future__ import annotations

import asyncio
import builtins
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

import wink
from tests.helpers.adapters import KEY
from tests.helpers.prompts import HELLO
from wink import (
    ConfigurationError,
    InvalidArgumentError,
    MarkdownSection,
    Prompt,
    Session,
    WinkError,
    create_adapter,
)
from wink.testing import ProviderEmulator

# --- create_adapter


@pytest.mark.parametrize(
    "spec",
    [None, 42, "", "openai", "openai:", ":gpt-4.1", "nope:model", "  :  ", b"openai:gpt"],
)
def test_a_bad_spec_is_a_configuration_error(spec: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        create_adapter(spec)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("spec", "provider", "model"),
    [
        ("openai: gpt-4o", "openai", "gpt-4o"),
        ("OpenAI:gpt-4o", "openai", "gpt-4o"),
        (" Anthropic : claude-sonnet-4-6 ", "anthropic", "claude-sonnet-4-6"),
        ("GEMINI:gemini-2.5-flash", "google", "gemini-2.5-flash"),
    ],
)
def test_a_spec_is_read_the_way_a_person_writes_it(spec: str, provider: str, model: str) -> None:
    adapter = create_adapter(spec, api_key=KEY)
    assert (adapter.provider, adapter.model) == (provider, model)


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": "60"},
        {"temperature": "hot"},
        {"max_tokens": 0},
        {"max_tokens": 1.5},
        {"stop": [1, 2]},
        {"retry_policy": 3},
        {"max_rounds": 0},
        {"max_rounds": True},
        {"graceful_tool_errors": "yes"},
        {"api_key": 123},
        {"base_url": 8080},
        {"extra_body": ["not", "a", "mapping"]},
        {"settings": {"temperature": 0}},
        {"no_such_option": 1},
    ],
)
def test_a_bad_option_is_a_configuration_error(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        create_adapter("openai:gpt-4.1", **{"api_key": KEY, **options})


def test_both_settings_and_loose_settings_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        create_adapter(
            "openai:gpt-4.1", api_key=KEY, settings=wink.ModelSettings(), temperature=0.5
        )


def test_a_missing_extra_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_httpx2(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "httpx2" or name.startswith("httpx2."):
            raise ModuleNotFoundError("No module named 'httpx2'", name="httpx2")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m.startswith("wink.adapters.openai")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_httpx2)
    with pytest.raises(ConfigurationError, match=r"wink\[openai\]"):
        create_adapter("openai-responses:gpt-4.1", api_key=KEY)


def test_help_lists_the_providers_their_keys_and_the_options() -> None:
    text = create_adapter.__doc__ or ""
    for word in ("openai-responses", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "max_rounds"):
        assert word in text
    annotations = create_adapter.__annotations__
    assert "options" in annotations
    assert "AdapterOptions" in str(annotations["options"])


# --- evaluate


@pytest.mark.parametrize(
    "prompt",
    [
        "Say hi",
        {"name": "hi"},
        None,
        MarkdownSection(key="t", title="T", template="Hi."),
    ],
)
def test_evaluate_refuses_what_is_not_a_prompt(prompt: Any, emulator: ProviderEmulator) -> None:
    adapter = create_adapter("openai:gpt-4.1", base_url=emulator.base_url("openai"), api_key=KEY)
    with pytest.raises(InvalidArgumentError) as info:
        adapter.evaluate(prompt, session=Session())
    assert isinstance(info.value, TypeError)
    assert info.value.argument == "prompt"
    with pytest.raises(InvalidArgumentError):
        asyncio.run(adapter.evaluate_async(prompt, session=Session()))
    assert emulator.requests == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("session", None),
        ("session", {}),
        ("deadline", 10),
        ("budget", {"max_requests": 1}),
        ("graceful_tool_errors", "no"),
        ("max_rounds", 0),
    ],
)
def test_evaluate_refuses_arguments_of_the_wrong_type(
    name: str, value: Any, emulator: ProviderEmulator
) -> None:
    adapter = create_adapter("openai:gpt-4.1", base_url=emulator.base_url("openai"), api_key=KEY)
    arguments: dict[str, Any] = {"session": Session(), name: value}
    with pytest.raises(InvalidArgumentError) as info:
        adapter.evaluate(HELLO, **arguments)
    assert info.value.argument == name
    assert emulator.requests == []


# --- configuration that only shows when a request is made


# --- everything is a WinkError


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
    ]


@pytest.mark.parametrize(("label", "call"), _calls(), ids=[label for label, _ in _calls()])
def test_one_except_catches_every_bad_input(label: str, call: Callable[[], object]) -> None:
    with pytest.raises(WinkError):
        call()


def test_importing_the_registry_loads_no_sdk() -> None:
    code = (
        "import sys, wink; wink.create_adapter; "
        "assert not {'openai', 'anthropic', 'google.genai'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})
