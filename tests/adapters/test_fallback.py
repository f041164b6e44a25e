"""FallbackAdapter: a run moves to the next provider mid-run, transcript and all.

The wire tests run every ordered pair of the four wire formats on the emulator (real
SDKs, real HTTP): the first provider serves two tool rounds (a successful and a failed
result, and a repeated call), then is overloaded; the second must receive the whole
transcript in its own wire format. The chain's rules (what falls over, the circuit
breaker, the final error) are tested with scripted adapters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import permutations
from typing import Any

import pytest

from tests.helpers.adapters import MODELS, NO_RETRY, PROVIDERS
from wink import (
    AdapterSwitched,
    AllAdaptersFailedError,
    AllAdaptersThrottledError,
    AuthenticationError,
    BadRequestError,
    Budget,
    ConfigurationError,
    ContentFilteredError,
    ContextWindowExceededError,
    Deadline,
    DeadlineExceededError,
    FallbackAdapter,
    MarkdownSection,
    NotFoundError,
    PermissionDeniedError,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptFailed,
    RequestRetried,
    RetryPolicy,
    Session,
    ThrottleDetails,
    ThrottleError,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    WinkError,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.adapters.fallback import another_adapter_may_help, throttled
from wink.core.foundation.messages import (
    ModelResponse,
)
from wink.testing import EmulatedRequest, EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn

PORTABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
SKIP_SIGNATURE = "skip_thought_signature_validator"


@dataclass(frozen=True)
class CityParams:
    city: str


class Weather:
    """A tool that counts its runs: no tool may run twice across a switch."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def __call__(self, params: CityParams, *, context: ToolContext) -> ToolResult[dict[str, str]]:
        self.runs.append(params.city)
        if params.city != "Paris":
            return ToolResult.error(f"no station in {params.city}")
        return ToolResult.ok({"summary": "sunny"}, message="report")


def make_prompt(handler: Weather) -> Prompt:
    tool = Tool(name="weather", description="Weather by city", handler=handler)
    section = MarkdownSection(key="task", title="Task", template="Weather?", tools=[tool])
    return Prompt(name="trip", sections=[section])


def make_adapter(provider: str, emu: ProviderEmulator, **options: Any) -> ProviderAdapter:
    options.setdefault("retry_policy", NO_RETRY)
    return create_adapter(
        f"{provider}:{MODELS[provider]}",
        base_url=emu.base_url(provider),
        api_key=f"key-{provider}",
        **options,
    )


class TwoProviders:
    """First provider: two tool rounds, then overloaded; second: the final answer."""

    def __init__(self, first: str) -> None:
        self.first = first
        self.seen: list[EmulatedRequest] = []
        self.first_turns: list[Turn | Fault] = [
            Turn.tool_calls(
                EmulatedToolCall("weather", {"city": "Paris"}),
                EmulatedToolCall("weather", {"city": "Lyon"}),
            ),
            Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"})),
            Fault.overloaded(),
        ]

    def __call__(self, request: EmulatedRequest) -> Turn | Fault:
        self.seen.append(request)
        if request.provider == self.first:
            return self.first_turns.pop(0)
        return Turn.text("Sunny in Paris.")


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator() as emu:
        yield emu


def wire_calls(provider: str, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(id, name, arguments as an object) of every earlier call, as the wire carries them."""
    found: list[tuple[str, str, Any]] = []
    if provider == "openai":
        for message in body["messages"]:
            for item in message.get("tool_calls") or []:
                function = item["function"]
                found.append((item["id"], function["name"], json.loads(function["arguments"])))
    elif provider == "openai-responses":
        for item in body["input"]:
            if item.get("type") == "function_call":
                found.append((item["call_id"], item["name"], json.loads(item["arguments"])))
    elif provider == "anthropic":
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "tool_use":
                    found.append((block["id"], block["name"], block["input"]))
    elif provider == "bedrock":
        for message in body["messages"]:
            for block in message["content"]:
                if "toolUse" in block:
                    used = block["toolUse"]
                    found.append((used["toolUseId"], used["name"], used["input"]))
    else:
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionCall" in part:
                    function = part["functionCall"]
                    found.append((function.get("id"), function["name"], function.get("args")))
    return found


@pytest.mark.parametrize(("first", "second"), list(permutations(PROVIDERS, 2)))
def test_a_switch_after_tool_rounds_sends_the_whole_transcript_in_the_next_wire(
    first: str, second: str, emulator: ProviderEmulator
) -> None:
    script = TwoProviders(first)
    emulator.set_script(script)
    handler = Weather()
    session = Session()
    adapters = [make_adapter(first, emulator), make_adapter(second, emulator)]
    response = FallbackAdapter(adapters).evaluate(make_prompt(handler), session=session)

    assert response.text == "Sunny in Paris."
    assert [request.provider for request in script.seen] == [first] * 3 + [second]
    # no tool ran twice (a round's calls run concurrently: their order is the threads')
    assert sorted(handler.runs) == ["Lyon", "Paris", "Paris"]
    received = script.seen[-1]
    calls = wire_calls(second, received.body)
    assert [(name, arguments) for _, name, arguments in calls] == [
        ("weather", {"city": "Paris"}),
        ("weather", {"city": "Lyon"}),
        ("weather", {"city": "Paris"}),
    ]
    ids = [call_id for call_id, _, _ in calls]
    assert len(set(ids)) == 3  # unique across rounds (Anthropic refuses repeats)
    assert all(PORTABLE_ID.fullmatch(call_id) for call_id in ids)
    results = received.tool_results
    assert [result.call_id for result in results] == ids
    assert "sunny" in results[0].text
    assert "no station in Lyon" in results[1].text
    if second in {"anthropic", "google", "bedrock"}:  # the native failure flag
        assert [result.is_error for result in results] == [False, True, False]
    else:  # OpenAI has none: the text says it
        assert [result.text.startswith("Error: ") for result in results] == [False, True, False]
    if second == "google":  # calls Gemini did not make carry its documented signature
        model_turns = [c for c in received.body["contents"] if c["role"] == "model"]
        signatures = [[part.get("thoughtSignature") for part in c["parts"]] for c in model_turns]
        assert signatures == [[SKIP_SIGNATURE, None], [SKIP_SIGNATURE]]

    first_name, second_name = adapters[0].name, adapters[1].name
    assert [event.adapter for event in session[ToolInvoked]] == [first_name] * 3
    (switch,) = session[AdapterSwitched]
    assert (switch.from_adapter, switch.to_adapter) == (first_name, second_name)
    assert isinstance(switch.error, ThrottleError)
    assert switch.error.details.kind == "overloaded"
    (executed,) = session[PromptExecuted]
    assert executed.adapter == second_name
    assert response.usage.requests == 3  # the loop's rounds: a fallback is the same round


def test_gemini_signatures_do_not_travel_to_another_gemini_model(
    emulator: ProviderEmulator,
) -> None:
    signed = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                            "thoughtSignature": "c2lnbmVkLWJ5LWZsYXNo",
                        }
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3},
    }
    seen: list[EmulatedRequest] = []

    def script(request: EmulatedRequest) -> Turn | Fault:
        seen.append(request)
        if request.model == "gemini-2.5-flash":
            return Fault.http(200, signed) if len(seen) == 1 else Fault.rate_limit(2.0)
        return Turn.text("Sunny.")

    emulator.set_script(script)
    flash = make_adapter("google", emulator)
    pro = create_adapter(
        "google:gemini-2.5-pro", base_url=emulator.base_url("google"), api_key="key-2"
    )
    FallbackAdapter([flash, pro]).evaluate(make_prompt(Weather()), session=Session())
    assert seen[1].body["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnbmVkLWJ5LWZsYXNo"
    (part,) = seen[2].body["contents"][1]["parts"]  # the other model: its own, not flash's
    assert part["thoughtSignature"] == SKIP_SIGNATURE


def test_responses_reasoning_items_stay_with_their_adapter(emulator: ProviderEmulator) -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    answer = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "o4-mini",
        "output": [
            reasoning,
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "weather",
                "arguments": '{"city": "Paris"}',
                "status": "completed",
            },
        ],
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
    }
    seen: list[EmulatedRequest] = []

    def script(request: EmulatedRequest) -> Turn | Fault:
        seen.append(request)
        if request.model == "o4-mini":
            return Fault.http(200, answer) if len(seen) == 1 else Fault.overloaded()
        return Turn.text("Sunny.")

    emulator.set_script(script)
    base_url = emulator.base_url("openai-responses")
    small = create_adapter("openai-responses:o4-mini", base_url=base_url, retry_policy=NO_RETRY)
    other = create_adapter("openai-responses:gpt-4.1", base_url=base_url)
    FallbackAdapter([small, other]).evaluate(make_prompt(Weather()), session=Session())
    assert reasoning in seen[1].body["input"]  # its own adapter gets it back
    assert [item.get("type") for item in seen[2].body["input"]] == [
        None,  # the user message
        "function_call",
        "function_call_output",
    ]


# --- the chain's rules, with scripted adapters


def busy(retry_after: float | None = None, kind: str = "overloaded") -> ThrottleError:
    return ThrottleError(
        "busy",
        prompt_name="trip",
        details=ThrottleDetails(kind, retry_after=retry_after),  # type: ignore[arg-type]
    )


def scripted(*steps: Any, model: str = "test", **options: Any) -> ScriptedAdapter:
    options.setdefault("retry_policy", NO_RETRY)
    return ScriptedAdapter(steps, model=model, **options)


def run(adapter: FallbackAdapter, session: Session | None = None, **kwargs: Any) -> Any:
    session = Session() if session is None else session  # an empty Session is falsy
    return adapter.evaluate(make_prompt(Weather()), session=session, **kwargs)


def test_a_rejected_request_does_not_fall_over_by_default() -> None:
    rejected = PromptEvaluationError("HTTP 400 bad schema", prompt_name="trip", phase="request")
    second = scripted(final("never"))
    fallback = FallbackAdapter([scripted(rejected), second])
    with pytest.raises(PromptEvaluationError, match="bad schema") as caught:
        run(fallback)
    assert not isinstance(caught.value, AllAdaptersFailedError)
    assert second.requests == []
    assert fallback.cooling_down() == {}


def _rejected(kind: type[PromptEvaluationError], status: int) -> PromptEvaluationError:
    return kind(f"HTTP {status}", prompt_name="trip", phase="request", status_code=status)


# The default's table (docs/fallback.md): (failure, falls over?)
DEFAULT_FALLS_OVER: list[tuple[str, WinkError, bool]] = [
    (
        "rate-limit",
        ThrottleError("x", prompt_name="trip", details=ThrottleDetails("rate_limit")),
        True,
    ),
    (
        "connection",
        ThrottleError("x", prompt_name="trip", details=ThrottleDetails("connection")),
        True,
    ),
    (
        "quota",
        ThrottleError(
            "x", prompt_name="trip", details=ThrottleDetails("quota_exhausted", retry_safe=False)
        ),
        True,
    ),
    ("throttle-window", DeadlineExceededError("window outlasts the deadline"), True),
    ("context-window", _rejected(ContextWindowExceededError, 400), True),
    ("bad-key", _rejected(AuthenticationError, 401), True),
    ("forbidden", _rejected(PermissionDeniedError, 403), True),
    ("unknown-model", _rejected(NotFoundError, 404), True),
    ("bad-request", _rejected(BadRequestError, 400), False),
    ("content-filter", _rejected(ContentFilteredError, 400), False),
    ("unreadable-answer", PromptEvaluationError("?", prompt_name="trip", phase="response"), False),
]


@pytest.mark.parametrize(
    ("failure", "falls_over"), [pytest.param(*row[1:], id=row[0]) for row in DEFAULT_FALLS_OVER]
)
def test_the_default_falls_over_when_another_adapter_may_help(
    failure: WinkError, falls_over: bool
) -> None:
    assert another_adapter_may_help(failure) is falls_over
    second = scripted(final("served by b"), model="b")
    fallback = FallbackAdapter([scripted(failure, model="a"), second])
    assert fallback.fallback_on is another_adapter_may_help
    if falls_over:
        assert run(fallback).text == "served by b"
    else:
        with pytest.raises(type(failure)):
            run(fallback)
        assert second.requests == []


def test_throttled_stays_the_narrower_predicate_it_was() -> None:
    assert throttled(ThrottleError("x", prompt_name="p", details=ThrottleDetails("connection")))
    assert not throttled(_rejected(NotFoundError, 404))
    assert not throttled(_rejected(ContextWindowExceededError, 400))


def test_a_request_too_long_here_benches_no_adapter_but_a_refused_key_does() -> None:
    """A context window says something of one request, a refused key of the adapter."""
    long_input = scripted(_rejected(ContextWindowExceededError, 400), final("a again"), model="a")
    fallback = FallbackAdapter([long_input, scripted(final("b"), model="b")])
    assert run(fallback).text == "b"
    assert fallback.cooling_down() == {}
    assert run(fallback).text == "a again"  # the next request is a's to serve
    bad_key = scripted(_rejected(AuthenticationError, 401), model="a")
    keyed = FallbackAdapter([bad_key, scripted(final("b"), final("b"), model="b")])
    assert run(keyed).text == "b"
    assert list(keyed.cooling_down()) == ["scripted:a"]
    assert run(keyed).text == "b"
    assert len(bad_key.requests) == 1


def test_fallback_on_widens_and_narrows_what_falls_over() -> None:
    rejected = PromptEvaluationError("HTTP 400", prompt_name="trip", phase="request")
    wide = FallbackAdapter(
        [scripted(rejected), scripted(final("served"))], fallback_on=lambda error: True
    )
    assert run(wide).text == "served"
    narrow = FallbackAdapter(
        [scripted(busy()), scripted(final("never"))], fallback_on=lambda error: False
    )
    with pytest.raises(ThrottleError) as caught:
        run(narrow)
    assert not isinstance(caught.value, AllAdaptersFailedError)


def test_each_adapter_retries_under_its_own_policy_before_falling_over() -> None:
    patient = scripted(busy(0.0), busy(0.0), model="a", retry_policy=RetryPolicy(max_attempts=2))
    session = Session()
    response = run(FallbackAdapter([patient, scripted(final("done"), model="b")]), session)
    assert response.text == "done"
    assert len(patient.requests) == 2
    (retry,) = session[RequestRetried]
    assert retry.adapter == "scripted:a"


def test_the_evaluation_stays_on_the_adapter_it_switched_to() -> None:
    first = scripted(tool_turn(call("weather", {"city": "Paris"}, id="c1")), busy(), model="a")
    second = scripted(
        tool_turn(call("weather", {"city": "Nice"}, id="c2")), final("done"), model="b"
    )
    session = Session()
    response = run(FallbackAdapter([first, second], cooldown=0), session)
    assert response.text == "done"
    assert (len(first.requests), len(second.requests)) == (2, 2)
    assert [event.adapter for event in session[ToolInvoked]] == ["scripted:a", "scripted:b"]
    assert session[PromptExecuted][0].adapter == "scripted:b"


def test_when_every_adapter_is_throttled_the_error_is_a_throttle_error() -> None:
    fallback = FallbackAdapter(
        [
            scripted(busy(30.0, "rate_limit"), model="a"),
            scripted(busy(None), model="b"),
            scripted(busy(5.0, "quota_exhausted"), model="c"),
        ]
    )
    session = Session()
    with pytest.raises(ThrottleError) as caught:
        run(fallback, session)
    error = caught.value
    assert isinstance(error, AllAdaptersThrottledError)
    assert isinstance(error, AllAdaptersFailedError)
    assert [name for name, _ in error.failures] == ["scripted:a", "scripted:b", "scripted:c"]
    assert error.details.retry_after == timedelta(seconds=5)  # the shortest asked
    assert error.details.kind == "quota_exhausted"  # the kind of that one
    assert "every adapter failed" in str(error)
    assert [(e.from_adapter, e.to_adapter) for e in session[AdapterSwitched]] == [
        ("scripted:a", "scripted:b"),
        ("scripted:b", "scripted:c"),
    ]
    assert session[PromptFailed][0].error is error


def test_a_mix_of_failures_is_not_a_throttle_error() -> None:
    fallback = FallbackAdapter(
        [scripted(busy(), model="a"), scripted(DeadlineExceededError("window"), model="b")]
    )
    with pytest.raises(AllAdaptersFailedError) as caught:
        run(fallback, deadline=Deadline(60))
    assert not isinstance(caught.value, ThrottleError)
    assert [type(error) for _, error in caught.value.failures] == [
        ThrottleError,
        DeadlineExceededError,
    ]


def test_the_circuit_skips_an_adapter_for_the_wait_its_provider_asked() -> None:
    first = scripted(busy(120.0), model="a")
    second = scripted(final("one"), final("two"), model="b")
    fallback = FallbackAdapter([first, second])
    assert run(fallback).text == "one"
    waits = fallback.cooling_down()
    assert list(waits) == ["scripted:a"]
    assert timedelta(seconds=100) < waits["scripted:a"] <= timedelta(seconds=120)
    session = Session()
    assert run(fallback, session).text == "two"  # straight to b: a is not asked
    assert len(first.requests) == 1
    assert session[AdapterSwitched] == ()


def test_after_the_cooldown_the_adapter_is_tried_again() -> None:
    first = scripted(busy(0.0), final("back"), model="a")
    fallback = FallbackAdapter([first, scripted(final("b"), model="b")])
    assert run(fallback).text == "b"
    assert run(fallback).text == "back"
    assert fallback.cooling_down() == {}


def test_max_cooldown_caps_what_a_provider_asks() -> None:
    fallback = FallbackAdapter(
        [scripted(busy(86400.0), model="a"), scripted(final("b"), model="b")],
        max_cooldown=timedelta(seconds=10),
    )
    run(fallback)
    assert fallback.cooling_down()["scripted:a"] <= timedelta(seconds=10)


def test_with_every_circuit_open_it_fails_at_once_with_the_time_left() -> None:
    first, second = scripted(busy(50.0), model="a"), scripted(busy(80.0), model="b")
    fallback = FallbackAdapter([first, second])
    with pytest.raises(AllAdaptersThrottledError):
        run(fallback)
    with pytest.raises(AllAdaptersThrottledError) as caught:
        run(fallback)
    assert (len(first.requests), len(second.requests)) == (1, 1)  # nothing sent again
    retry_after = caught.value.details.retry_after
    assert retry_after is not None
    assert timedelta(seconds=40) < retry_after <= timedelta(seconds=50)


def test_a_passed_deadline_is_not_a_reason_to_fall_over() -> None:
    second = scripted(final("never"), model="b")
    fallback = FallbackAdapter([scripted(busy(), model="a"), second])
    with pytest.raises(DeadlineExceededError):
        run(fallback, deadline=Deadline(0))
    assert second.requests == []


def test_the_budget_spans_every_adapter() -> None:
    first = scripted(tool_turn(call("weather", {"city": "Paris"})), busy(), model="a")
    second = scripted(tool_turn(call("weather", {"city": "Nice"}, id="c2")), model="b")
    with pytest.raises(PromptEvaluationError) as caught:
        run(FallbackAdapter([first, second]), budget=Budget(max_requests=2))
    assert caught.value.phase == "budget"  # round 3: two rounds spent, one on each adapter
    assert (len(first.requests), len(second.requests)) == (2, 1)


def test_errors_carry_no_secret_of_any_adapter() -> None:
    first_key, second_key = "sk-first-secret-0123456789", "sk-second-secret-0123456789"
    cut = ModelResponse(
        text="cut", finish_reason="length", raw={"echo": f"{first_key} {second_key}"}
    )
    chain = FallbackAdapter(
        [scripted(busy(), api_key=first_key), scripted(cut, api_key=second_key)]
    )
    with pytest.raises(PromptEvaluationError, match="cut off") as caught:
        run(chain)
    payload = json.dumps(caught.value.provider_payload)
    assert "echo" in payload
    assert first_key not in payload
    assert second_key not in payload


@pytest.mark.parametrize(
    ("adapters", "options", "message"),
    [
        ([], {}, "at least one"),
        ("openai:gpt-4.1", {}, "list of adapters"),
        (["openai:gpt-4.1"], {}, "provider adapter"),
        ([ScriptedAdapter()], {"fallback_on": "throttled"}, "callable"),
        ([ScriptedAdapter()], {"cooldown": -1}, "cooldown"),
        ([ScriptedAdapter()], {"max_cooldown": "1h"}, "max_cooldown"),
        ([ScriptedAdapter()], {"tracer_provider": object()}, "TracerProvider"),
    ],
)
def test_bad_configuration_is_a_configuration_error(
    adapters: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        FallbackAdapter(adapters, **options)


async def test_evaluate_async_and_closing() -> None:
    first, second = scripted(busy(), model="a"), scripted(final("async"), model="b")
    async with FallbackAdapter([first, second]) as fallback:
        response = await fallback.evaluate_async(make_prompt(Weather()), session=Session())
    assert response.text == "async"
    assert fallback.name == "fallback(scripted:a, scripted:b)"


# --- the transcript each adapter receives


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_falls_over_mid_run_like_evaluate(mode: str, emulator: ProviderEmulator) -> None:
    import asyncio

    from wink import AdapterSwitched, RoundFinished, TextDelta, ToolInvoked

    script = TwoProviders("openai")
    emulator.set_script(script)
    weather = Weather()
    adapter = FallbackAdapter(
        [make_adapter("openai", emulator), make_adapter("anthropic", emulator)]
    )
    session = Session()
    if mode == "sync":
        with adapter.stream(make_prompt(weather), session=session) as stream:
            events = list(stream)
        response = stream.response
    else:

        async def run() -> tuple[list[Any], Any]:
            async with adapter.stream_async(make_prompt(weather), session=session) as stream:
                seen = [event async for event in stream]
            return seen, stream.response

        events, response = asyncio.run(run())
    assert response.text == "Sunny in Paris."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sunny in Paris."
    assert weather.runs == ["Paris", "Lyon", "Paris"]  # no tool ran twice
    assert [e.name for e in events if isinstance(e, ToolInvoked)] == ["weather"] * 3
    assert len([e for e in events if isinstance(e, RoundFinished)]) == response.rounds
    (switch,) = session[AdapterSwitched]
    assert (switch.from_adapter, switch.to_adapter) == (
        "openai:gpt-4.1",
        "anthropic:claude-sonnet-4-6",
    )
    adapter.close()
