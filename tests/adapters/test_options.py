"""What a caller configures an adapter with (`wink.adapters.options`): `ModelSettings`,
the adapter options, and the argument checks of `evaluate()`; every bad value is a typed
`WinkError` at the call that passed it, before anything is sent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import wink
from tests.helpers.adapters import KEY, MODELS, PROVIDERS, make_adapter
from tests.helpers.prompts import HELLO, CityParams
from wink import (
    ConfigurationError,
    InvalidArgumentError,
    MarkdownSection,
    ModelSettings,
    OpenAISettings,
    Session,
    create_adapter,
)
from wink.adapters.options import settings_from
from wink.testing import ProviderEmulator
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn

ADAPTER_CLASSES = (
    wink.OpenAIAdapter,
    wink.OpenAIResponsesAdapter,
    wink.AnthropicAdapter,
    wink.GoogleAdapter,
)

# --- ModelSettings


def test_stop_is_kept_as_a_tuple_whatever_sequence_it_came_in() -> None:
    assert ModelSettings(stop="END").stop == ("END",)
    assert ModelSettings(stop=["a", "b"]).stop == ("a", "b")  # type: ignore[arg-type]
    assert ModelSettings().stop is None


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ({"temperature": True}, "temperature must be a number"),
        ({"top_p": "0.9"}, "top_p must be a number"),
        ({"max_tokens": 2.0}, "max_tokens must be an int"),
        ({"seed": False}, "seed must be an int"),
        ({"max_tokens": 0}, "max_tokens must be >= 1"),
        ({"stop": ["ok", 3]}, "stop must be a list of strings"),
        ({"stop": {"END"}}, "stop must be a list of strings"),
        ({"extra": ["not", "a", "mapping"]}, "extra_body must be a mapping"),
    ],
)
def test_a_bad_setting_is_a_configuration_error(fields: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ConfigurationError, match=complaint):
        ModelSettings(**fields)


def test_only_the_settings_that_are_set_go_out_under_the_providers_names() -> None:
    settings = ModelSettings(temperature=0.0, stop=("END",), extra={"topK": 3})
    assert settings.set_fields() == {"temperature", "stop"}  # `extra` aside
    names = {"temperature": "temperature", "max_tokens": "maxOutputTokens", "stop": "stopSequences"}
    assert settings.to_fields(names) == {"temperature": 0.0, "stopSequences": ["END"]}


def test_loose_settings_and_extra_body_make_one_model_settings() -> None:
    settings = settings_from({"temperature": 0.5, "seed": 7, "extra_body": {"user": "u1"}})
    assert settings == (ModelSettings(temperature=0.5, seed=7, extra={"user": "u1"}), frozenset())
    given = ModelSettings(max_tokens=100)
    assert settings_from({"settings": given})[0] is given
    assert settings_from({}) == (ModelSettings(), frozenset())


def test_a_wires_own_loose_settings_make_its_class_or_are_left_out() -> None:
    """OpenAI's prompt-cache options make an `OpenAISettings` for its wires; a wire whose
    settings class lacks them leaves them out and says which (the adapter warns)."""
    loose = {"temperature": 0.5, "prompt_cache_key": "k1"}
    assert settings_from(loose, OpenAISettings) == (
        OpenAISettings(temperature=0.5, prompt_cache_key="k1"),
        frozenset(),
    )
    assert settings_from(loose) == (ModelSettings(temperature=0.5), {"prompt_cache_key"})


# --- adapter options


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


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("base_url", "hint"),
    [
        ("localhost:8080", "did you mean 'http://localhost:8080'?"),
        ("127.0.0.1:8080/v1", "did you mean 'http://127.0.0.1:8080/v1'?"),
        ("ftp://example.com", "for example 'http://localhost:8080'"),
        ("http://", "for example 'http://localhost:8080'"),
        ("http://localhost:port", "for example 'http://localhost:8080'"),
        ("", "for example 'http://localhost:8080'"),
    ],
)
def test_a_base_url_that_is_not_an_http_url_is_refused_when_the_adapter_is_built(
    provider: str, base_url: str, hint: str
) -> None:
    # before, "localhost:8080" was retried as a timeout (openai, anthropic) or failed
    # at the first request (google)
    with pytest.raises(ConfigurationError) as info:
        create_adapter(f"{provider}:{MODELS[provider]}", api_key=KEY, base_url=base_url)  # type: ignore[arg-type]
    error = info.value
    assert error.option == "base_url"
    assert str(error) == (
        f"base_url must be an http:// or https:// URL with a host, got {base_url!r}: {hint}"
    )


@pytest.mark.parametrize("adapter_class", ADAPTER_CLASSES, ids=lambda c: c.__name__)
def test_each_adapter_class_checks_base_url_the_same_way(adapter_class: type[Any]) -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'http://localhost:8080'"):
        adapter_class("some-model", api_key=KEY, base_url="localhost:8080")


@pytest.mark.parametrize(
    "base_url", ["http://localhost:8080", "https://proxy.example.com/v1/", "http://[::1]:9/x"]
)
def test_an_http_base_url_is_kept_as_given(base_url: str) -> None:
    assert create_adapter("openai:gpt-4.1", api_key=KEY, base_url=base_url).base_url == base_url


def test_both_settings_and_loose_settings_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        create_adapter(
            "openai:gpt-4.1", api_key=KEY, settings=wink.ModelSettings(), temperature=0.5
        )


# --- evaluate() arguments


@pytest.mark.parametrize(
    "prompt",
    [
        b"Say hi",
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


# --- evaluate() without a session


def _run_every_entry_point(adapter: Any, prompt: Any) -> list[wink.PromptResponse[Any]]:
    """`prompt` through evaluate, evaluate_async, stream and stream_async, no session=."""

    def streamed() -> wink.PromptResponse[Any]:
        with adapter.stream(prompt) as stream:
            for _ in stream:
                pass
        return stream.response

    async def streamed_async() -> wink.PromptResponse[Any]:
        async with adapter.stream_async(prompt) as stream:
            async for _ in stream:
                pass
        return stream.response

    return [
        adapter.evaluate(prompt),
        asyncio.run(adapter.evaluate_async(prompt)),
        streamed(),
        asyncio.run(streamed_async()),
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_entry_point_runs_without_a_session(
    provider: str, ok_emulator: ProviderEmulator
) -> None:
    adapter = make_adapter(provider, ok_emulator)
    responses = _run_every_entry_point(adapter, HELLO)
    assert [response.text for response in responses] == ["ok"] * 4


def test_a_fallback_adapter_runs_without_a_session(ok_emulator: ProviderEmulator) -> None:
    fallback = wink.FallbackAdapter(
        [make_adapter("openai", ok_emulator), make_adapter("google", ok_emulator)]
    )
    assert [r.text for r in _run_every_entry_point(fallback, HELLO)] == ["ok"] * 4


def test_each_run_without_a_session_gets_a_fresh_one() -> None:
    seen: list[Session] = []

    def remember(params: CityParams, *, context: wink.ToolContext) -> wink.ToolResult[None]:
        seen.append(context.session)
        return wink.ToolResult.ok(None)

    tool = wink.Tool(name="remember", description="Remembers the session", handler=remember)
    prompt = wink.Prompt(
        name="p", sections=[MarkdownSection(key="t", title="T", template="Go.", tools=[tool])]
    )
    steps = [tool_turn(call("remember", {"city": "Paris"})), final("done")] * 4
    responses = _run_every_entry_point(ScriptedAdapter(steps), prompt)
    assert [response.text for response in responses] == ["done"] * 4
    assert len({id(session) for session in seen}) == 4  # one session per run, none shared
    for session in seen:  # each recorded its own run, and only it
        assert [type(e).__name__ for e in session[wink.PromptExecuted]] == ["PromptExecuted"]


def test_a_session_given_is_the_one_used(ok_emulator: ProviderEmulator) -> None:
    session = Session()
    make_adapter("openai", ok_emulator).evaluate(HELLO, session=session)
    assert len(session[wink.PromptExecuted]) == 1
