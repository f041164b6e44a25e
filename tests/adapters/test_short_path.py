"""The five-line path on every provider: a string prompt, a plain-function tool, per-call
settings, tool choice. Real SDKs against the emulator; the wire is asserted from the
emulator's record of each request body."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import KEY, PROVIDERS, Recorder, make_adapter
from wink import (
    BatchItem,
    ConfigurationError,
    FallbackAdapter,
    InvalidArgumentError,
    ModelSettings,
    Prompt,
    UnsupportedSettingWarning,
)
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn


def get_weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city's name, in English.
    """
    return f"sunny in {city}"


async def explode(n: int) -> int:
    """Explodes on purpose."""
    raise RuntimeError(f"boom {n}")


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


def _user_text(provider: str, body: dict[str, Any]) -> Any:
    if provider == "openai":
        return body["messages"][-1]["content"]
    if provider == "openai-responses":
        return body["input"][-1]["content"]
    if provider in ("anthropic", "bedrock"):
        return body["messages"][-1]["content"]
    return body["contents"][-1]["parts"]


def _tool_specs(provider: str, body: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (description, parameters schema), read from each wire's own tool shape."""
    if provider == "openai":
        found = [t["function"] for t in body["tools"]]
        return {t["name"]: (t["description"], t["parameters"]) for t in found}
    if provider == "openai-responses":
        return {t["name"]: (t["description"], t["parameters"]) for t in body["tools"]}
    if provider == "anthropic":
        return {t["name"]: (t["description"], t["input_schema"]) for t in body["tools"]}
    if provider == "bedrock":
        found = [t["toolSpec"] for t in body["toolConfig"]["tools"]]
        return {t["name"]: (t["description"], t["inputSchema"]["json"]) for t in found}
    declared = body["tools"][0]["functionDeclarations"]
    return {t["name"]: (t["description"], t["parametersJsonSchema"]) for t in declared}


# the forced choice as each provider's docs spell it: "required", and one tool's name
REQUIRED = {
    "openai": ("tool_choice", "required"),
    "openai-responses": ("tool_choice", "required"),
    "anthropic": ("tool_choice", {"type": "any", "disable_parallel_tool_use": True}),
    "google": ("toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
    "bedrock": ("toolChoice", {"any": {}}),  # inside toolConfig
}
NAMED = {
    "openai": {"type": "function", "function": {"name": "get_weather"}},
    "openai-responses": {"type": "function", "name": "get_weather"},
    "anthropic": {"type": "tool", "name": "get_weather"},
    "google": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
    "bedrock": {"tool": {"name": "get_weather"}},
}


def _choice_of(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """Where the wire carries its tool choice (Converse: inside `toolConfig`)."""
    return body.get("toolConfig", {}) if provider == "bedrock" else body


def test_a_string_is_one_user_turn_exactly_as_written(provider: str, ok_emulator: Any) -> None:
    text = "What is 2 + 2? Costs $5, ${HOME} and {braces}.\n"
    with make_adapter(provider, ok_emulator) as adapter:
        response = adapter.evaluate(text, instructions="Answer in $ only.")
        again = adapter.evaluate("And 3 + 3?", history=response.transcript)
    first, second = (request.body for request in ok_emulator.requests)
    expected = {
        "openai": text,
        "openai-responses": text,
        "anthropic": [{"type": "text", "text": text}],
        "google": [{"text": text}],
        "bedrock": [{"text": text}],
    }[provider]
    assert _user_text(provider, first) == expected
    assert ok_emulator.requests[0].instructions == "Answer in $ only."
    assert again.text == "ok"
    assert len(again.transcript) == len(response.transcript) + 2  # the question, the answer
    assert "And 3 + 3?" in str(_user_text(provider, second))
    assert "tools" not in first


def test_a_function_tool_runs_and_its_failure_goes_back_natively(
    provider: str, provider_emulator_factory: Any
) -> None:
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("get_weather", {"city": "Paris"}),
            EmulatedToolCall("explode", {"n": 2}),
        ),
        Turn.text("Sunny."),
    )
    emulator = provider_emulator_factory(script=recorder)
    with make_adapter(provider, emulator, temperature=0.5, max_tokens=300) as adapter:
        response = adapter.evaluate(
            "Weather in Paris?",
            tools=[get_weather, explode],
            settings=ModelSettings(temperature=0),
            tool_choice="required",
            parallel_tool_calls=False if provider not in ("google", "bedrock") else None,
        )
    assert response.text == "Sunny."
    ok, failed = response.tool_invocations
    assert (ok.result.success, ok.result.value) == (True, "sunny in Paris")
    assert (failed.result.success, failed.result.message) == (False, "RuntimeError: boom 2")
    first, second = (request.body for request in emulator.requests)
    specs = _tool_specs(provider, first)
    description, schema = specs["get_weather"]
    assert description == "Today's weather in a city."
    assert schema["properties"]["city"]["description"] == "The city's name, in English."
    assert schema["properties"]["city"]["type"] == "string"
    assert schema["required"] == ["city"]
    assert specs["explode"][1]["properties"]["n"]["type"] == "integer"
    # per-call temperature over the adapter's, the adapter's max_tokens kept
    if provider == "google":
        assert first["generationConfig"]["temperature"] == 0
        assert first["generationConfig"]["maxOutputTokens"] == 300
    elif provider == "bedrock":
        assert first["inferenceConfig"] == {"temperature": 0, "maxTokens": 300}
    else:
        assert first["temperature"] == 0
        tokens = {"openai": "max_completion_tokens", "openai-responses": "max_output_tokens"}
        assert first[tokens.get(provider, "max_tokens")] == 300
    field, value = REQUIRED[provider]
    assert _choice_of(provider, first)[field] == value
    # after the first round the model chooses: the loop ends
    if provider == "anthropic":
        assert second["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    else:
        assert field not in _choice_of(provider, second)
    if provider in ("openai", "openai-responses"):
        assert first["parallel_tool_calls"] is False
        assert second["parallel_tool_calls"] is False
    failures = recorder.seen[1].tool_results
    assert [view.is_error for view in failures] == {
        "openai": [None, None],
        "openai-responses": [None, None],
        "anthropic": [False, True],
        "google": [False, True],
        "bedrock": [False, True],
    }[provider]


def test_a_tool_name_as_the_choice(provider: str, ok_emulator: Any) -> None:
    with make_adapter(provider, ok_emulator, tool_choice="get_weather") as adapter:
        adapter.evaluate("Weather?", tools=[get_weather, explode])
        adapter.evaluate("Weather?", tools=[get_weather], tool_choice="none")
        adapter.evaluate("Weather?", tools=[get_weather], tool_choice="auto")
    named, none, auto = (request.body for request in ok_emulator.requests)
    if (
        provider == "bedrock"
    ):  # Converse has no "none" (the tools are left out), auto is its default
        assert named["toolConfig"]["toolChoice"] == NAMED[provider]
        assert "toolConfig" not in none
        assert "toolChoice" not in auto["toolConfig"]
        return
    field = "toolConfig" if provider == "google" else "tool_choice"
    assert named[field] == NAMED[provider]
    assert (
        none[field]
        == {
            "openai": "none",
            "openai-responses": "none",
            "anthropic": {"type": "none"},
            "google": {"functionCallingConfig": {"mode": "NONE"}},
        }[provider]
    )
    assert (
        auto[field]
        == {
            "openai": "auto",
            "openai-responses": "auto",
            "anthropic": {"type": "auto"},
            "google": {"functionCallingConfig": {"mode": "AUTO"}},
        }[provider]
    )


def test_what_no_request_can_carry_is_refused_before_sending(
    provider: str, emulator: ProviderEmulator
) -> None:
    with make_adapter(provider, emulator) as adapter:
        with pytest.raises(InvalidArgumentError, match="names no tool") as unknown:
            adapter.evaluate("Weather?", tools=[get_weather], tool_choice="get_wether")
        assert unknown.value.argument == "tool_choice"
        with pytest.raises(InvalidArgumentError, match="offers no tools"):
            adapter.evaluate("Weather?", tool_choice="required")
        with pytest.raises(ConfigurationError, match="tool_choice must be"):
            adapter.evaluate("Weather?", tool_choice="any tool")
        with pytest.raises(ConfigurationError, match="parallel_tool_calls must be"):
            adapter.evaluate("Weather?", parallel_tool_calls="no")  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError, match="go with a string prompt"):
            adapter.evaluate(Prompt(name="p", sections=[]), tools=[get_weather])  # type: ignore[call-overload]
        with pytest.raises(InvalidArgumentError, match="unknown option"):
            adapter.evaluate("Weather?", temprature=0)  # type: ignore[call-overload]
    assert emulator.requests == []


def test_anthropic_refuses_a_forced_choice_with_thinking(emulator: ProviderEmulator) -> None:
    words = "Thinking may not be enabled when tool_choice forces tool use."
    with pytest.raises(ConfigurationError, match=words):
        make_adapter("anthropic", emulator, thinking=2048, tool_choice="required")
    with make_adapter("anthropic", emulator, thinking=2048) as adapter:
        with pytest.raises(ConfigurationError, match=words) as refused:
            adapter.evaluate("Weather?", tools=[get_weather], tool_choice="get_weather")
        assert refused.value.option == "tool_choice"
    assert emulator.requests == []


def test_gemini_warns_it_cannot_take_parallel_tool_calls(ok_emulator: Any) -> None:
    with pytest.warns(UnsupportedSettingWarning, match="parallel_tool_calls"):
        make_adapter("google", ok_emulator, parallel_tool_calls=False)
    with (
        make_adapter("google", ok_emulator) as adapter,
        pytest.warns(UnsupportedSettingWarning, match="parallel_tool_calls") as caught,
    ):
        adapter.evaluate("Weather?", tools=[get_weather], parallel_tool_calls=False)
    assert caught[0].filename == __file__  # at the caller's line
    assert "parallelToolCalls" not in str(ok_emulator.requests[0].body)


def test_every_entry_point_takes_a_string(provider: str, ok_emulator: Any) -> None:
    async def asynchronously() -> list[str | None]:
        async with make_adapter(provider, ok_emulator) as adapter:
            answered = await adapter.evaluate_async("One?", settings=ModelSettings(temperature=0.1))
            async with adapter.stream_async("Two?", tools=[get_weather]) as stream:
                async for _ in stream:
                    pass
            return [answered.text, stream.response.text]

    texts = asyncio.run(asynchronously())
    with make_adapter(provider, ok_emulator) as adapter, adapter.stream("Three?") as stream:
        for _ in stream:
            pass
    assert [*texts, stream.response.text] == ["ok", "ok", "ok"]
    asked = [str(_user_text(provider, request.body)) for request in ok_emulator.requests]
    assert ["One?" in asked[0], "Two?" in asked[1], "Three?" in asked[2]] == [True] * 3


def test_the_fallback_adapter_takes_the_short_form(ok_emulator: Any) -> None:
    chain = FallbackAdapter(
        [make_adapter("openai", ok_emulator), make_adapter("anthropic", ok_emulator)]
    )
    with chain:
        response = chain.evaluate(
            "Hi?", tools=[get_weather], settings=ModelSettings(temperature=0.2)
        )
    assert response.text == "ok"
    body = ok_emulator.requests[0].body
    assert (body["messages"][-1]["content"], body["temperature"]) == ("Hi?", 0.2)


def test_batch_items_take_strings_and_merge_their_settings(
    provider: str, provider_emulator_factory: Any
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    if provider == "bedrock":  # Bedrock's batches read from S3: refused before sending
        with make_adapter(provider, emulator) as adapter, pytest.raises(ConfigurationError):
            adapter.submit_batch(["First?"])
        assert emulator.requests == []
        return
    with make_adapter(provider, emulator, temperature=0.7) as adapter:
        items = [
            "First?",
            BatchItem(Prompt.from_text("Second?"), settings=ModelSettings(max_tokens=50)),
        ]
        job = adapter.submit_batch(items)
        for _ in range(20):
            if job.finished:
                break
            job = adapter.advance_batch(job)
        results = adapter.batch_results(job)
    assert [result.text for result in results] == ["ok", "ok"]  # type: ignore[union-attr]
    lines = [str(request.body) for request in emulator.requests]
    assert any("First?" in line for line in lines)
    assert any("Second?" in line for line in lines)


def test_the_wire_log_shows_requests_and_answers_redacted(
    ok_emulator: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.DEBUG, logger="wink.wire"),
        make_adapter("openai", ok_emulator) as adapter,
    ):
        adapter.evaluate("x" * 5000 + KEY)
    request, response = (record.getMessage() for record in caplog.records)
    assert request.startswith(
        f"openai request: POST {ok_emulator.base_url('openai')}/chat/completions"
    )
    assert KEY not in request
    assert "more characters)" in request  # a long body is cut
    assert response.startswith("openai response: 200 {'content-type': 'application/json'")
    assert '"content":"ok"' in response


def test_the_wire_log_is_off_by_default(ok_emulator: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO), make_adapter("anthropic", ok_emulator) as adapter:
        adapter.evaluate("Hi?")
    assert not [record for record in caplog.records if record.name == "wink.wire"]


# "none" with a structured output: the prompt's tools are off, the answer is not. Where the
# output is a tool (Anthropic, Gemini beside functions) the output tool alone is allowed.
NONE_WITH_OUTPUT = {
    "openai": ("tool_choice", "none"),
    "openai-responses": ("tool_choice", "none"),
    "anthropic": ("tool_choice", {"type": "tool", "name": "final_result_Forecast"}),
    "google": (
        "toolConfig",
        {
            "functionCallingConfig": {
                "mode": "ANY",
                "allowedFunctionNames": ["final_result_Forecast"],
            }
        },
    ),
    # Converse has no "none": the prompt's tools are left out, the output tool forced.
    "bedrock": ("toolConfig", None),
}


@dataclass(frozen=True)
class Forecast:
    summary: str


def test_none_with_a_structured_output_leaves_the_answer_possible(
    provider: str, emulator: ProviderEmulator
) -> None:
    answer = {"summary": "sunny"}
    if provider in ("anthropic", "google"):
        emulator.enqueue(Turn.tool_calls(EmulatedToolCall("final_result_Forecast", answer)))
    else:
        emulator.enqueue(Turn.text(json.dumps(answer)))
    with make_adapter(provider, emulator) as adapter:
        response = adapter.evaluate(
            "Weather?", tools=[get_weather], output_type=Forecast, tool_choice="none"
        )
    assert response.output == Forecast("sunny")
    field, sent = NONE_WITH_OUTPUT[provider]
    if provider == "bedrock":
        config = emulator.requests[0].body[field]
        assert [tool["toolSpec"]["name"] for tool in config["tools"]] == ["final_result_Forecast"]
        assert config["toolChoice"] == {"any": {}}
    else:
        assert emulator.requests[0].body[field] == sent


def test_anthropic_refuses_none_with_a_structured_output_and_thinking(
    emulator: ProviderEmulator,
) -> None:
    with (
        make_adapter("anthropic", emulator, thinking=2048) as adapter,
        pytest.raises(ConfigurationError, match="forces the output tool") as refused,
    ):
        adapter.evaluate("Weather?", tools=[get_weather], output_type=Forecast, tool_choice="none")
    assert refused.value.option == "tool_choice"
    assert emulator.requests == []
