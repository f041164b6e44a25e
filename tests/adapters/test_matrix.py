"""One conformance suite, run identically for every adapter against the emulator.

Real SDKs, real HTTP on 127.0.0.1, the real loop: what went over the wire is asserted
from the emulator's view of each request.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.helpers.adapters import KEY, MODELS, NO_RETRY, PROVIDERS, Recorder, make_adapter
from tests.helpers.prompts import Answer, make_prompt
from tests.helpers.threads import on_threads
from wink import (
    AuthenticationError,
    BadRequestError,
    Budget,
    ContextWindowExceededError,
    Deadline,
    DeadlineExceededError,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    RetryPolicy,
    Session,
    ThrottleError,
    ToolInvoked,
    create_adapter,
)
from wink.core.foundation.settings import SETTING_NAMES
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


# --- tools


def test_every_tool_failure_goes_back_in_native_form(
    provider: str, emulator: ProviderEmulator
) -> None:
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("weather", {"city": "Paris"}, id="call_ok"),
            EmulatedToolCall("weather", {"city": "Lyon"}, id="call_refused"),
            EmulatedToolCall("crash", {"city": "Paris"}, id="call_raises"),
            EmulatedToolCall("nope", {}, id="call_unknown"),
            EmulatedToolCall("weather", '{"city": ', id="call_not_json"),
            EmulatedToolCall("weather", {"town": "Paris"}, id="call_invalid"),
        ),
        Turn.text("Sunny in Paris."),
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(make_prompt(), session=session)
    assert response.text == "Sunny in Paris."
    results = recorder.seen[1].tool_results
    assert len(results) == 6
    texts = [result.text for result in results]
    assert "sunny" in texts[0]
    failures = texts[1:]
    assert "no station in Lyon" in failures[0]
    assert "RuntimeError: sensor offline" in failures[1]
    assert "Unknown tool 'nope'" in failures[2]
    assert "not valid JSON" in failures[3]
    assert "city: Field required" in failures[4]
    if provider in {"anthropic", "google", "bedrock"}:  # a native error flag exists
        assert [result.is_error for result in results] == [False] + [True] * 5
    else:  # no flag on OpenAI: the text itself says it
        assert not texts[0].startswith("Error")
        assert all(text.startswith("Error") for text in failures)
    if provider != "google":  # Gemini omits call ids on the wire
        assert [result.call_id for result in results][:1] == ["call_ok"]
    events = session[ToolInvoked]
    assert [event.result.success for event in events] == [True] + [False] * 5


@pytest.mark.parametrize(
    "arguments", [{"city": "\ud83d"}, '{"city": "\\ud83d"}', '{"city": Infinity}']
)
def test_arguments_json_cannot_carry_are_refused_and_the_run_goes_on(
    provider: str, arguments: Any, emulator: ProviderEmulator
) -> None:
    """A lone surrogate or a non-finite number: the tool does not run, the model reads
    why, and the echo of its call still encodes in the next request."""
    recorder = Recorder(
        Turn.tool_calls(EmulatedToolCall("weather", arguments, id="call_bad")),
        Turn.text("Sorry."),
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(make_prompt(), session=session)
    assert response.text == "Sorry."
    (result,) = recorder.seen[1].tool_results
    (event,) = session[ToolInvoked]
    assert not event.result.success
    assert event.result.code == "invalid_input"
    assert event.result.message in result.text


def test_failed_results_in_exact_native_shape(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(
        Recorder(
            Turn.tool_calls(EmulatedToolCall("weather", {"city": "Lyon"}, id="call_1")),
            Turn.text("ok"),
        )
    )
    make_adapter(provider, emulator).evaluate(make_prompt(), session=Session())
    body = emulator.requests[1].body
    if provider == "openai":
        assert body["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "Error: no station in Lyon",
        }
    elif provider == "openai-responses":
        item = body["input"][-1]
        assert item["type"] == "function_call_output"
        assert item["call_id"] == "call_1"
        assert item["output"] == "Error: no station in Lyon"
    elif provider == "anthropic":
        message = body["messages"][-1]
        assert message["role"] == "user"
        [block] = message["content"]
        assert block["type"] == "tool_result"
        assert block["tool_use_id"] == "call_1"
        assert block["is_error"] is True
        assert "no station in Lyon" in str(block["content"])
    elif provider == "bedrock":
        message = body["messages"][-1]
        assert message == {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call_1",
                        "content": [{"text": "no station in Lyon"}],
                        "status": "error",
                    }
                }
            ],
        }
    else:
        content = body["contents"][-1]
        assert content["role"] == "user"
        [part] = content["parts"]
        assert part["functionResponse"]["name"] == "weather"
        assert part["functionResponse"]["response"] == {"error": "no station in Lyon"}


def test_structured_output(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(Recorder(Turn.json({"city": "Paris", "degrees": 21})))
    response = make_adapter(provider, emulator).evaluate(make_prompt(Answer), session=Session())
    assert response.output == Answer("Paris", 21)


@pytest.mark.parametrize("provider", ["anthropic", "google"])  # structured output as a tool
def test_a_tool_call_beside_the_output_call_runs_and_the_output_is_the_answer(
    provider: str, emulator: ProviderEmulator
) -> None:
    recorder = Recorder(
        Turn.tool_calls(
            EmulatedToolCall("weather", {"city": "Paris"}, id="call_w"),
            EmulatedToolCall("final_result_Answer", {"city": "Paris", "degrees": 21}, id="out"),
        )
    )
    emulator.set_script(recorder)
    session = Session()
    response = make_adapter(provider, emulator).evaluate(make_prompt(Answer), session=session)
    assert response.output == Answer("Paris", 21)
    assert [event.name for event in session[ToolInvoked]] == ["weather"]
    assert len(recorder.seen) == 1


async def test_async_evaluation_and_usage(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(
        Recorder(
            Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}), input_tokens=12),
            Turn.text("done", input_tokens=20, output_tokens=7),
        )
    )
    response = await make_adapter(provider, emulator).evaluate_async(
        make_prompt(), session=Session()
    )
    assert response.text == "done"
    assert response.usage.requests == 2
    assert response.usage.input_tokens == 32
    assert response.usage.output_tokens == 12


# --- faults

# (id, fault, class, phase, throttle kind, retry_safe): the same on every wire format
FAULTS: list[tuple[str, Fault, type[PromptEvaluationError], str, str | None, bool | None]] = [
    ("rate_limit", Fault.rate_limit(retry_after=2.0), ThrottleError, "request", "rate_limit", True),
    # Anthropic's empty balance is a 400 "credit balance is too low": a quota all the same
    ("quota", Fault.quota_exhausted(), ThrottleError, "request", "quota_exhausted", False),
    ("500", Fault.server_error(500), ThrottleError, "request", "overloaded", True),
    ("502", Fault.server_error(502), ThrottleError, "request", "overloaded", True),
    ("503", Fault.server_error(503), ThrottleError, "request", "overloaded", True),
    ("overloaded", Fault.overloaded(), ThrottleError, "request", "overloaded", True),
    ("bad_request", Fault.bad_request("bad temperature"), BadRequestError, "request", None, None),
    ("unauthorized", Fault.unauthorized(), AuthenticationError, "request", None, None),
    ("forbidden", Fault.permission_denied(), PermissionDeniedError, "request", None, None),
    ("not_found", Fault.not_found(), NotFoundError, "request", None, None),
    (
        "context_window",
        Fault.context_window_exceeded(),
        ContextWindowExceededError,
        "request",
        None,
        None,
    ),
    ("hang", Fault.hang(seconds=5.0), ThrottleError, "request", "timeout", True),
    ("drop", Fault.drop_connection(), ThrottleError, "request", "connection", True),
    ("non_json", Fault.non_json(), PromptEvaluationError, "response", None, None),
    ("wrong_shape", Fault.wrong_shape(), PromptEvaluationError, "response", None, None),
]


@pytest.mark.parametrize(
    ("fault", "kind", "phase", "throttle", "retry_safe"),
    [pytest.param(*row[1:], id=row[0]) for row in FAULTS],
)
def test_every_fault_has_its_typed_outcome(
    provider: str,
    emulator: ProviderEmulator,
    fault: Fault,
    kind: type[PromptEvaluationError],
    phase: str,
    throttle: str | None,
    retry_safe: bool | None,
) -> None:
    emulator.set_script(Recorder(Turn.text("never")))
    emulator.inject(fault)
    # only a hang waits for the timeout; any other fault is answered at once, but on a
    # loaded machine that may take longer than a short timeout (then a timeout error)
    adapter = make_adapter(provider, emulator, timeout=0.25 if fault.kind == "hang" else 30.0)
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    error = info.value
    assert type(error) is kind
    assert error.phase == phase
    if isinstance(error, ThrottleError):
        assert error.details.kind == throttle
        assert error.details.retry_safe is retry_safe
        assert error.details.attempts == 1
        assert error.status_code == error.details.status_code
    elif phase == "request":  # a rejected request: its status, for every provider
        # (Bedrock refuses an unknown key with a 403 UnrecognizedClientException)
        refused_key = provider == "bedrock" and fault.kind == "unauthorized"
        assert error.status_code == (403 if refused_key else fault.status)
    else:  # an answer that came but could not be read
        assert error.status_code == 200
    if fault.kind == "rate_limit" and provider == "bedrock":  # it never says how long
        assert isinstance(error, ThrottleError)
        assert error.details.retry_after is None
    elif fault.kind == "rate_limit":
        assert isinstance(error, ThrottleError)
        assert error.details.retry_after_seconds == pytest.approx(2.0, abs=0.01)
    if isinstance(error, NotFoundError):
        assert error.model == MODELS[provider]
        assert repr(MODELS[provider]) in str(error)
    assert len(emulator.requests) == 1
    assert error.__cause__ is not None or phase == "response"


@pytest.mark.parametrize("fault", [Fault.bad_request("nope"), Fault.unauthorized()])
def test_request_errors_are_never_retried(
    provider: str, emulator: ProviderEmulator, fault: Fault
) -> None:
    emulator.set_script(Recorder(Turn.text("never")))
    emulator.inject(fault, times=3)
    adapter = make_adapter(provider, emulator, retry_policy=RetryPolicy(max_attempts=3))
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(make_prompt(), session=Session())
    assert len(emulator.requests) == 1


def test_throttles_are_retried_until_success(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(Recorder(Turn.text("made it")))
    emulator.inject(Fault.rate_limit(retry_after=0.05))
    emulator.inject(Fault.overloaded())
    policy = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.1)
    response = make_adapter(provider, emulator, retry_policy=policy).evaluate(
        make_prompt(), session=Session()
    )
    assert response.text == "made it"
    assert len(emulator.requests) == 3


def test_giving_up_counts_the_attempts(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(Recorder(Turn.text("never")))
    emulator.inject(Fault.server_error(503), times=3)
    policy = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.02)
    with pytest.raises(ThrottleError) as info:
        make_adapter(provider, emulator, retry_policy=policy).evaluate(
            make_prompt(), session=Session()
        )
    assert info.value.details.attempts == 3
    assert "after 3 attempts" in str(info.value)


# --- secrets, deadline, budget


def test_a_cut_off_answer_echoing_the_key_is_redacted_in_the_payload(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script(Recorder(Turn.text(f"your key is {KEY}", finish="length")))
    with pytest.raises(PromptEvaluationError) as info:
        make_adapter(provider, emulator).evaluate(make_prompt(), session=Session())
    assert info.value.phase == "response"
    assert info.value.provider_payload is not None
    assert KEY not in repr(info.value.provider_payload)
    assert "[redacted]" in repr(info.value.provider_payload)


def test_secrets_never_leak(
    provider: str, emulator: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    emulator.set_script(Recorder(Turn.text("never")))
    emulator.inject(Fault.unauthorized())
    adapter = make_adapter(provider, emulator)
    with caplog.at_level(logging.DEBUG), pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    error = info.value
    for text in (str(error), repr(error), repr(error.provider_payload), repr(adapter)):
        assert KEY not in text
    assert all(KEY not in record.getMessage() for record in caplog.records)
    assert emulator.requests[0].headers.get("authorization", "") in {"", "[redacted]"}


def test_deadline_stops_a_slow_provider(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(Recorder(Turn.text("too late")))
    emulator.inject(Fault.hang(seconds=3.0))
    adapter = make_adapter(provider, emulator, retry_policy=RetryPolicy(max_attempts=3))
    with pytest.raises(DeadlineExceededError):
        adapter.evaluate(make_prompt(), session=Session(), deadline=Deadline(at=0.3))


def test_a_throttle_window_longer_than_the_deadline_ends_the_wait(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script(Recorder(Turn.text("never sent")))
    emulator.inject(Fault.rate_limit(retry_after=5.0))
    adapter = make_adapter(provider, emulator)
    with pytest.raises(ThrottleError):  # opens the adapter-wide window (no retry)
        adapter.evaluate(make_prompt(), session=Session())
    with pytest.raises(DeadlineExceededError, match="throttle window outlasts the deadline"):
        adapter.evaluate(make_prompt(), session=Session(), deadline=Deadline(at=0.2))
    assert len(emulator.requests) == 1  # the second evaluation waited, then gave up unsent
    adapter.close()


def test_budget_stops_the_loop(provider: str, emulator: ProviderEmulator) -> None:
    emulator.set_script(
        Recorder(*[Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}))] * 3)
    )
    with pytest.raises(PromptEvaluationError) as info:
        make_adapter(provider, emulator).evaluate(
            make_prompt(), session=Session(), budget=Budget(max_requests=2)
        )
    assert info.value.phase == "budget"
    assert len(emulator.requests) == 2


# --- clients


def test_sync_evaluate_uses_the_async_client_of_winks_loop_and_async_the_callers(
    provider: str, emulator: ProviderEmulator
) -> None:
    import asyncio

    import anthropic
    import httpx2
    import openai

    async_type = {
        "openai": openai.AsyncOpenAI,
        "openai-responses": openai.AsyncOpenAI,
        "anthropic": anthropic.AsyncAnthropic,
        "google": httpx2.AsyncClient,  # the REST API, no SDK
        "bedrock": httpx2.AsyncClient,  # Converse over httpx2, no boto3
    }[provider]
    emulator.set_script([Turn.text("sync"), Turn.text("async"), Turn.text("nested")])
    adapter = make_adapter(provider, emulator)

    assert adapter.evaluate(make_prompt(), session=Session()).text == "sync"
    portal_client = adapter._clients.held(sync=True)
    assert type(portal_client) is async_type
    assert adapter._clients.open_clients == 1

    async def evaluate_async_then_nested_sync() -> None:
        response = await adapter.evaluate_async(make_prompt(), session=Session())
        assert response.text == "async"
        mine = adapter._clients.held(sync=False)
        assert type(mine) is async_type
        assert mine is not portal_client
        # a sync call inside a running loop blocks it, but runs on wink's loop: no deadlock
        assert adapter.evaluate(make_prompt(), session=Session()).text == "nested"
        assert adapter._clients.held(sync=True) is portal_client  # the same, reused
        await adapter.aclose()
        assert _closed(mine)

    asyncio.run(evaluate_async_then_nested_sync())
    assert adapter._clients.open_clients == 0
    assert _closed(portal_client)
    assert [request.provider for request in emulator.requests] == [provider] * 3


def _closed(client: object) -> bool:
    closed = client.is_closed  # a method on the SDKs, a property on httpx2
    return bool(closed() if callable(closed) else closed)


def test_one_adapter_serves_sync_callers_on_several_threads(
    provider: str, emulator: ProviderEmulator
) -> None:
    emulator.set_script(lambda request: Turn.text("ok"))  # every request answers
    adapter = make_adapter(provider, emulator)
    answers: list[str | None] = []

    def three_evaluations() -> None:
        for _ in range(3):
            answers.append(adapter.evaluate(make_prompt(), session=Session()).text)

    assert on_threads(three_evaluations) == []
    assert answers == ["ok"] * 12
    assert adapter._clients.open_clients == 1  # one async client, on wink's loop, for all
    adapter.close()
    assert adapter._clients.open_clients == 0


def test_a_key_from_the_environment_is_masked_like_a_given_one(
    provider: str, emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "envkey-0123456789abcdef"  # no well-known key shape: only knowing it masks it
    variable = {"openai": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY"}.get(
        provider,
        {
            "anthropic": "ANTHROPIC_API_KEY",
            "google": "GEMINI_API_KEY",
            "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
        }.get(provider),
    )
    assert variable is not None
    monkeypatch.setenv(variable, key)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    emulator.inject(Fault.http(401, {"error": {"message": f"bad key {key}", "code": 401}}))
    adapter = create_adapter(
        f"{provider}:{MODELS[provider]}",
        base_url=emulator.base_url(provider),
        retry_policy=NO_RETRY,
    )
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    import traceback

    text = "".join(traceback.format_exception(info.value)) + repr(info.value.provider_payload)
    assert key not in text


# Each setting's value in the matrix, distinct enough to be found anywhere in a body.
SETTING_VALUES: dict[str, object] = {
    "temperature": 0.25,
    "max_tokens": 64,
    "top_p": 0.5,
    "stop": ("END-OF-TURN",),
    "seed": 7123,
    "thinking": "low",
    "prompt_cache_key": "cache-key-1",
    "prompt_cache_retention": "24h",
    "tool_choice": "required",
    "parallel_tool_calls": False,
}
# A model of each provider that takes every setting its API has (a reasoning model).
SETTINGS_MODELS = {
    "openai": "o4-mini",
    "openai-responses": "o4-mini",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",  # thinks by a token budget, not an effort
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # a budget on Converse
}
WARNED = None
"""A setting the provider's API has no field for: warned about, never sent."""
# Where each setting lands in each provider's request body, and as what.
WIRE: dict[str, dict[str, tuple[tuple[str, ...], object] | None]] = {
    "openai": {
        "temperature": (("temperature",), 0.25),
        "max_tokens": (("max_completion_tokens",), 64),
        "top_p": (("top_p",), 0.5),
        "stop": (("stop",), ["END-OF-TURN"]),
        "seed": (("seed",), 7123),
        "thinking": (("reasoning_effort",), "low"),
        "prompt_cache_key": (("prompt_cache_key",), "cache-key-1"),
        "prompt_cache_retention": (("prompt_cache_retention",), "24h"),
        "tool_choice": (("tool_choice",), "required"),
        "parallel_tool_calls": (("parallel_tool_calls",), False),
    },
    "openai-responses": {
        "temperature": (("temperature",), 0.25),
        "max_tokens": (("max_output_tokens",), 64),
        "top_p": (("top_p",), 0.5),
        "stop": WARNED,
        "seed": WARNED,
        "thinking": (("reasoning", "effort"), "low"),
        "prompt_cache_key": (("prompt_cache_key",), "cache-key-1"),
        "prompt_cache_retention": (("prompt_cache_retention",), "24h"),
        "tool_choice": (("tool_choice",), "required"),
        "parallel_tool_calls": (("parallel_tool_calls",), False),
    },
    "anthropic": {
        "temperature": (("temperature",), 0.25),
        "max_tokens": (("max_tokens",), 64),
        "top_p": (("top_p",), 0.5),
        "stop": (("stop_sequences",), ["END-OF-TURN"]),
        "seed": WARNED,
        "thinking": (("output_config", "effort"), "low"),
        "prompt_cache_key": WARNED,
        "prompt_cache_retention": WARNED,
        "tool_choice": (("tool_choice", "type"), "any"),
        "parallel_tool_calls": (("tool_choice", "disable_parallel_tool_use"), True),
    },
    "google": {
        "temperature": (("generationConfig", "temperature"), 0.25),
        "max_tokens": (("generationConfig", "maxOutputTokens"), 64),
        "top_p": (("generationConfig", "topP"), 0.5),
        "stop": (("generationConfig", "stopSequences"), ["END-OF-TURN"]),
        "seed": (("generationConfig", "seed"), 7123),
        "thinking": (("generationConfig", "thinkingConfig", "thinkingBudget"), 1024),
        "prompt_cache_key": WARNED,
        "prompt_cache_retention": WARNED,
        "tool_choice": (("toolConfig", "functionCallingConfig", "mode"), "ANY"),
        "parallel_tool_calls": WARNED,
    },
    "bedrock": {
        "temperature": (("inferenceConfig", "temperature"), 0.25),
        "max_tokens": (("inferenceConfig", "maxTokens"), 64),
        "top_p": (("inferenceConfig", "topP"), 0.5),
        "stop": (("inferenceConfig", "stopSequences"), ["END-OF-TURN"]),
        "seed": WARNED,
        "thinking": (("additionalModelRequestFields", "thinking", "budget_tokens"), 1024),
        "prompt_cache_key": WARNED,
        "prompt_cache_retention": WARNED,
        "tool_choice": (("toolConfig", "toolChoice"), {"any": {}}),
        "parallel_tool_calls": WARNED,
    },
}


# The shared settings, and OpenAI's own (`OpenAISettings`), which every adapter takes
# loose: passed to another wire they are warned about like any setting it lacks.
MATRIX_SETTINGS = (*SETTING_NAMES, "prompt_cache_key", "prompt_cache_retention")


def test_the_matrix_covers_every_setting() -> None:
    from dataclasses import fields

    from wink import OpenAISettings

    names = {field.name for field in fields(OpenAISettings)} - {"extra"}
    assert names == set(MATRIX_SETTINGS) == set(SETTING_VALUES)


@pytest.mark.parametrize("setting", MATRIX_SETTINGS)
def test_every_setting_reaches_the_wire_or_is_warned_about(
    provider: str, setting: str, emulator: ProviderEmulator
) -> None:
    """`SETTING_NAMES` (and OpenAI's own) x providers: the setting is in the request the
    emulator received, where the provider's API reads it, or it was warned about
    (`UnsupportedSettingWarning`) and is nowhere in the request; never silently lost."""
    import json
    import warnings

    from wink import Thinking, UnsupportedSettingWarning

    value = SETTING_VALUES[setting]
    if setting == "thinking" and provider in {"google", "bedrock"}:
        value = Thinking(budget_tokens=1024)
    recorder = Recorder(Turn.text("ok"))
    emulator.set_script(recorder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapter = create_adapter(
            f"{provider}:{SETTINGS_MODELS[provider]}",
            base_url=emulator.base_url(provider),
            api_key=KEY,
            retry_policy=NO_RETRY,
            **{setting: value},  # type: ignore[arg-type]
        )
        adapter.evaluate(make_prompt(), session=Session())
    adapter.close()
    body = recorder.seen[0].body
    warned = [w for w in caught if issubclass(w.category, UnsupportedSettingWarning)]
    expected = WIRE[provider][setting]
    if expected is WARNED:
        assert len(warned) == 1
        assert setting in str(warned[0].message)
        assert json.dumps(SETTING_VALUES[setting]).strip("[]") not in json.dumps(body)
        return
    assert warned == []
    path, sent = expected
    found: Any = body
    for key in path:
        found = found[key]
    assert found == sent
