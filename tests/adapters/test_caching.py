"""Prompt caching under the caller's control, on the emulator: `cache=True` on a section,
what each provider is sent for it, and the usage that shows the cache written on the first
call and read on the second, streamed or not."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import pytest

from tests.helpers.adapters import PROVIDERS, make_adapter
from wink import (
    ConfigurationError,
    MarkdownSection,
    ModelSettings,
    OpenAISettings,
    Prompt,
    UnsupportedSettingWarning,
    Usage,
    UsageReported,
)
from wink.testing import ProviderEmulator, Turn

LONG = "Reference catalogue entry. " * 400  # ~2700 tokens, over every provider's minimum


def cached_prompt(*cached: bool) -> Prompt[None]:
    sections = [
        MarkdownSection(key=f"part-{index}", title=f"Part {index}", template=LONG, cache=flag)
        for index, flag in enumerate(cached)
    ]
    sections.append(MarkdownSection(key="ask", title="Ask", template="Answer: OK."))
    return Prompt(name="cached", sections=sections)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_first_call_writes_the_cache_and_the_second_reads_it(provider: str) -> None:
    prompt = cached_prompt(True)
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter(provider, emulator)
        first = adapter.evaluate(prompt).usage
        second = adapter.evaluate(prompt).usage
    assert first.cached_tokens == 0
    if provider == "google":  # implicit caching: Gemini reports reads only
        assert first.cache_write_tokens == 0
    else:
        assert first.cache_write_tokens > 1024
    assert second.cached_tokens > 1024
    assert second.cache_write_tokens == 0
    for usage in (first, second):  # one rule: the prompt counts its cached and written tokens
        assert usage.input_tokens >= usage.cached_tokens + usage.cache_write_tokens + 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_streamed_usage_carries_the_same_cache_fields(provider: str) -> None:
    prompt = cached_prompt(True)
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter(provider, emulator)
        usages: list[Usage] = []
        for _ in range(2):
            with adapter.stream(prompt) as stream:
                reported = [e.usage for e in stream if isinstance(e, UsageReported)]
            assert reported == [replace(stream.response.usage, requests=0)]
            usages.append(stream.response.usage)
        emulator.reset()
        unstreamed = [adapter.evaluate(prompt).usage for _ in range(2)]
    assert usages == unstreamed


def test_anthropic_marks_the_cached_section_and_the_tools_come_before_it() -> None:
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        make_adapter("anthropic", emulator).evaluate(cached_prompt(False, True))
    [turn] = emulator.requests[0].body["messages"]
    marked = [block for block in turn["content"] if "cache_control" in block]
    assert [block["cache_control"] for block in marked] == [{"type": "ephemeral"}]
    first, _second = turn["content"]  # the text up to the cached section, then the rest
    assert first is marked[0]
    assert first["text"].endswith(LONG.strip())
    assert "# Part 1" in first["text"]
    assert "# Ask" not in first["text"]


def test_anthropic_keeps_the_last_four_of_more_cache_points() -> None:
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        make_adapter("anthropic", emulator).evaluate(cached_prompt(*[True] * 6))
    [turn] = emulator.requests[0].body["messages"]
    flags = ["cache_control" in block for block in turn["content"]]
    assert flags == [False, False, True, True, True, True, False]


def test_a_prompt_under_the_minimum_is_not_cached() -> None:
    short = Prompt(
        name="short", sections=[MarkdownSection(key="s", title="S", template="Hi.", cache=True)]
    )
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter("anthropic", emulator)
        usages = [adapter.evaluate(short).usage for _ in range(2)]
    assert [(u.cached_tokens, u.cache_write_tokens) for u in usages] == [(0, 0), (0, 0)]


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_openai_takes_the_prompt_cache_key_and_retention(provider: str) -> None:
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter(
            provider, emulator, prompt_cache_key="catalogue-v1", prompt_cache_retention="24h"
        )
        adapter.evaluate(cached_prompt(True))
    body = emulator.requests[0].body
    assert (body["prompt_cache_key"], body["prompt_cache_retention"]) == ("catalogue-v1", "24h")


@pytest.mark.parametrize("provider", ["anthropic", "google"])
def test_the_openai_cache_options_are_warned_about_elsewhere(provider: str) -> None:
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        with pytest.warns(UnsupportedSettingWarning, match="prompt_cache_key"):
            adapter = make_adapter(provider, emulator, prompt_cache_key="catalogue-v1")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            adapter.evaluate(cached_prompt(True))
    assert "prompt_cache_key" not in str(emulator.requests[0].body)


@pytest.mark.parametrize(
    ("provider", "sent"), [("openai", True), ("openai-responses", True), ("anthropic", False)]
)
def test_openai_settings_per_call_are_sent_by_openai_and_warned_about_elsewhere(
    provider: str, sent: bool
) -> None:
    settings = OpenAISettings(prompt_cache_key="catalogue-v1", temperature=0.5)
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter(provider, emulator, max_tokens=64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            adapter.evaluate(cached_prompt(True), settings=settings)
        body = emulator.requests[0].body
    warned = [w for w in caught if issubclass(w.category, UnsupportedSettingWarning)]
    assert ("prompt_cache_key" in body) is sent
    assert [str(w.message).count("prompt_cache_key") for w in warned] == ([] if sent else [1])
    assert body["temperature"] == 0.5  # the shared settings go as ever, the adapter's too
    assert 64 in (
        body.get("max_tokens"),
        body.get("max_completion_tokens"),
        body.get("max_output_tokens"),
    )


def test_openai_settings_merge_over_the_adapters() -> None:
    adapter_settings = ModelSettings(temperature=0.2, seed=3)
    merged = adapter_settings.merged(OpenAISettings(prompt_cache_key="k", seed=4))
    assert isinstance(merged, OpenAISettings)
    assert (merged.temperature, merged.seed, merged.prompt_cache_key) == (0.2, 4, "k")
    back = OpenAISettings(prompt_cache_retention="24h").merged(ModelSettings(top_p=0.5))
    assert (type(back), back.prompt_cache_retention, back.top_p) == (OpenAISettings, "24h", 0.5)


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"prompt_cache_key": " "}, "must not be empty"),
        ({"prompt_cache_key": 3}, "must be a string"),
        ({"prompt_cache_retention": "1h"}, "in_memory, 24h"),
        ({"temperature": "hot"}, "must be a number"),  # the shared checks run too
    ],
)
def test_openai_settings_are_checked(given: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        OpenAISettings(**given)


def test_scripted_cache_counts_are_reported_as_given() -> None:
    turn = Turn.text("OK.", input_tokens=3000, cached_tokens=2000, cache_write_tokens=500)
    with ProviderEmulator([turn]) as emulator:
        usage = make_adapter("anthropic", emulator).evaluate(cached_prompt(True)).usage
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (3000, 2000, 500)
    assert emulator.requests[0].body["messages"]  # a real request, answered as scripted


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "google"])
def test_a_cached_text_prompt_stays_one_text_where_nothing_marks_the_cache(provider: str) -> None:
    """Where `cache=True` sends nothing, the prompt goes as it did without it: one string
    (which every OpenAI-compatible server reads), one Gemini text part."""
    with ProviderEmulator(default_turn=Turn.text("OK.")) as emulator:
        adapter = make_adapter(provider, emulator)
        adapter.evaluate(cached_prompt(True, False))
        adapter.evaluate(cached_prompt(False, False))
    cached, plain = (request.body for request in emulator.requests)
    assert cached == plain
    if provider == "google":
        assert [list(part) for part in cached["contents"][0]["parts"]] == [["text"]]
    else:
        key = "input" if provider == "openai-responses" else "messages"
        assert isinstance(cached[key][0]["content"], str)
