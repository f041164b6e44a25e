"""The evaluation loop, driven by the scripted in-process adapter (no wire, no SDK)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers.adapters import FAST_RETRY, KEY
from tests.helpers.prompts import WEATHER_TOOL, Answer, make_prompt
from wink import (
    Budget,
    ContentFilteredError,
    Deadline,
    DeadlineExceededError,
    MarkdownSection,
    OutputTruncatedError,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptRendered,
    RefusalError,
    RetryPolicy,
    Session,
    ThrottleDetails,
    ThrottleError,
    ToolInvoked,
    Usage,
    WinkError,
)
from wink.core.foundation.messages import ModelRequest, ModelResponse, ToolResultMessage
from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn


def tool_messages(request: ModelRequest) -> list[ToolResultMessage]:
    return [m for m in request.messages if isinstance(m, ToolResultMessage)]


def test_tool_failures_go_back_and_the_model_recovers() -> None:
    adapter = ScriptedAdapter(
        [
            tool_turn(
                call("weather", '{"city": "Lyon"}', id="a"),
                call("crash", {"city": "Paris"}, id="b"),
                call("nope", {}, id="c"),
                call("weather", "{broken", id="d"),
                call("weather", {"town": "Paris"}, id="e"),
            ),
            tool_turn(call("weather", {"city": "Paris"}, id="f")),
            final("It is sunny in Paris."),
        ],
        retry_policy=FAST_RETRY,
    )
    session = Session()
    response = adapter.evaluate(make_prompt(), session=session)
    assert response.text == "It is sunny in Paris."
    assert response.rounds == 3
    assert response.usage == Usage(input_tokens=30, output_tokens=15, requests=3)
    failures = tool_messages(adapter.requests[1])
    assert [m.success for m in failures] == [False] * 5
    assert failures[0].content == "no station in Lyon"
    assert failures[1].content == "RuntimeError: sensor offline"
    assert failures[2].content.startswith("Unknown tool 'nope'")
    assert "not valid JSON" in failures[3].content
    assert "city: Field required" in failures[4].content
    events = session[ToolInvoked]
    assert [e.call_id for e in events] == ["a", "b", "c", "d", "e", "f"]
    assert [e.result.success for e in events] == [False] * 5 + [True]
    assert isinstance(events[1].error, RuntimeError)
    assert len(session[PromptRendered]) == 1
    assert session[PromptExecuted][0].text == response.text
    assert response.tool_invocations == events


def test_structured_output_is_parsed() -> None:
    adapter = ScriptedAdapter([final({"city": "Paris", "degrees": 21})])
    response = adapter.evaluate(make_prompt(Answer), session=Session())
    assert response.output == Answer("Paris", 21)
    assert adapter.requests[0].output is not None
    assert adapter.requests[0].output.name == "Answer"


def test_structured_output_that_does_not_parse_is_a_response_error_without_retries() -> None:
    adapter = ScriptedAdapter([final({"city": "Paris"})], max_output_retries=0)
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(Answer), session=Session())
    assert info.value.phase == "response"
    assert "Answer" in str(info.value)
    assert len(adapter.requests) == 1


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("length", OutputTruncatedError),
        ("content_filter", ContentFilteredError),
        ("refusal", RefusalError),
        ("error", PromptEvaluationError),
    ],
)
def test_unfinished_answers_raise_the_class_of_their_finish_reason(
    reason: str, kind: type[PromptEvaluationError]
) -> None:
    response = ModelResponse(text="partial", finish_reason=reason, raw={"id": "x"})  # type: ignore[arg-type]
    adapter = ScriptedAdapter([response])
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    error = info.value
    assert type(error) is kind
    assert (error.phase, error.status_code, error.finish_reason) == ("response", 200, reason)
    assert (error.partial_text, error.refusal) == ("partial", None)
    assert error.provider_payload == {"id": "x"}


def test_a_refusal_carries_its_words_cleaned_of_secrets() -> None:
    words = f"I won't repeat {KEY}. " + "No. " * 200
    refusal = ModelResponse(text=None, finish_reason="refusal", refusal=words)
    adapter = ScriptedAdapter([refusal], api_key=KEY)
    with pytest.raises(RefusalError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    error = info.value
    assert error.refusal is not None
    assert error.refusal.startswith("I won't repeat [redacted].")
    assert KEY not in str(error) + repr(error.refusal)
    assert str(error).endswith("...")  # a long refusal is quoted, not pasted whole
    assert error.partial_text is None


def test_empty_answer_is_a_response_error() -> None:
    with pytest.raises(PromptEvaluationError, match="neither text nor tool calls"):
        ScriptedAdapter([final("")]).evaluate(make_prompt(), session=Session())


def test_throttle_is_retried_then_succeeds() -> None:
    throttle = ThrottleError(
        "HTTP 429", prompt_name="weather", details=ThrottleDetails("rate_limit", retry_after=0.001)
    )
    adapter = ScriptedAdapter([throttle, final("ok")], retry_policy=FAST_RETRY)
    assert adapter.evaluate(make_prompt(), session=Session()).text == "ok"


def test_throttle_gives_up_with_attempts_counted() -> None:
    def throttled() -> ThrottleError:
        return ThrottleError(
            "HTTP 503", prompt_name="weather", details=ThrottleDetails("overloaded")
        )

    adapter = ScriptedAdapter([throttled(), throttled(), throttled()], retry_policy=FAST_RETRY)
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.details.attempts == 3
    assert len(adapter.requests) == 3


def test_quota_exhausted_is_not_retried() -> None:
    quota = ThrottleError(
        "HTTP 429",
        prompt_name="weather",
        details=ThrottleDetails("quota_exhausted", retry_safe=False),
    )
    adapter = ScriptedAdapter([quota, final("never")], retry_policy=FAST_RETRY)
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.details.kind == "quota_exhausted"
    assert len(adapter.requests) == 1


def test_request_errors_are_not_retried() -> None:
    bad = PromptEvaluationError("HTTP 400", prompt_name="weather", phase="request")
    adapter = ScriptedAdapter([bad, final("never")], retry_policy=FAST_RETRY)
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(make_prompt(), session=Session())
    assert len(adapter.requests) == 1


def test_budget_on_requests_and_tokens() -> None:
    loop = [tool_turn(call("weather", {"city": "Paris"})) for _ in range(5)]
    with pytest.raises(PromptEvaluationError) as info:
        ScriptedAdapter(loop).evaluate(
            make_prompt(), session=Session(), budget=Budget(max_requests=2)
        )
    assert info.value.phase == "budget"
    big = final("ok", usage=Usage(input_tokens=500, output_tokens=1))
    with pytest.raises(PromptEvaluationError, match="input tokens"):
        ScriptedAdapter([big]).evaluate(
            make_prompt(), session=Session(), budget=Budget(max_input_tokens=100)
        )


def test_deadline_stops_before_the_request() -> None:
    with pytest.raises(DeadlineExceededError):
        ScriptedAdapter([final("x")]).evaluate(
            make_prompt(), session=Session(), deadline=Deadline(0)
        )


def test_consecutive_failed_rounds_end_the_run() -> None:
    loop = [tool_turn(call("crash", {"city": "x"})) for _ in range(10)]
    adapter = ScriptedAdapter(loop, max_failed_tool_rounds=3)
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.phase == "tool"
    assert "3 consecutive tool rounds failed" in str(info.value)
    assert "sensor offline" in str(info.value)


def test_graceful_false_per_call_aborts() -> None:
    adapter = ScriptedAdapter([tool_turn(call("crash", {"city": "x"})), final("no")])
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session(), graceful_tool_errors=False)
    assert info.value.phase == "tool"
    assert isinstance(info.value.__cause__, RuntimeError)


async def test_evaluate_async() -> None:
    adapter = ScriptedAdapter([tool_turn(call("weather", {"city": "Paris"})), final("done")])
    response = await adapter.evaluate_async(make_prompt(), session=Session())
    assert response.text == "done"


steps = st.lists(
    st.one_of(
        st.builds(
            lambda name, args: tool_turn(call(name, args)),
            st.sampled_from(["weather", "crash", "nope"]),
            st.one_of(st.text(max_size=10), st.fixed_dictionaries({"city": st.text(max_size=5)})),
        ),
        st.just(final("done")),
        st.just(final("")),
        st.sampled_from(
            [
                ThrottleError(
                    "t",
                    prompt_name="weather",
                    details=ThrottleDetails("rate_limit", retry_after=0.0),
                ),
                PromptEvaluationError("bad", prompt_name="weather", phase="request"),
                ValueError("translator bug"),
                ModelResponse(text=None, finish_reason="length"),
            ]
        ),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(script=steps)
def test_every_exception_escaping_the_loop_is_a_wink_error(script: list[Any]) -> None:
    adapter = ScriptedAdapter(script, retry_policy=FAST_RETRY, max_failed_tool_rounds=3)
    with contextlib.suppress(WinkError):
        adapter.evaluate(make_prompt(), session=Session(), budget=Budget(max_requests=8))


def test_a_timeout_past_the_deadline_is_a_deadline_error() -> None:
    import time

    def slow(request: ModelRequest) -> ThrottleError:
        time.sleep(0.06)
        return ThrottleError("timed out", prompt_name="weather", details=ThrottleDetails("timeout"))

    adapter = ScriptedAdapter([slow, final("late")], retry_policy=FAST_RETRY)
    with pytest.raises(DeadlineExceededError) as info:
        adapter.evaluate(make_prompt(), session=Session(), deadline=Deadline(at=0.05))
    assert isinstance(info.value.__cause__, ThrottleError)


def test_visibility_expansion_through_the_loop() -> None:
    from wink import VisibilityExpansionRequired, apply_visibility

    prompt = Prompt(
        name="guide",
        sections=[
            MarkdownSection(key="task", title="Task", template="Answer."),
            MarkdownSection(
                key="manual",
                title="Manual",
                template="The secret is 42.",
                summary="A manual.",
                tools=[WEATHER_TOOL],
            ),
        ],
    )
    session = Session()
    adapter = ScriptedAdapter([tool_turn(call("open_sections", {"section_keys": ["manual"]}))])
    with pytest.raises(VisibilityExpansionRequired) as info:
        adapter.evaluate(prompt, session=session)
    assert [spec.name for spec in adapter.requests[0].tools] == ["open_sections"]
    apply_visibility(session, info.value.requested_overrides)
    adapter.add(final("It is 42."))
    assert adapter.evaluate(prompt, session=session).text == "It is 42."
    second = adapter.requests[1]
    assert [spec.name for spec in second.tools] == ["weather"]
    assert "The secret is 42." in str(second.messages[0])


# --- structured output, decided once in the loop


def output_call(city: str = "Paris", degrees: Any = 21) -> Any:
    return call("final_result_Answer", {"city": city, "degrees": degrees}, id="out")


def test_a_turn_with_a_tool_call_and_the_output_call_runs_the_tool_and_answers() -> None:
    session = Session()
    adapter = ScriptedAdapter([tool_turn(call("weather", {"city": "Paris"}), output_call())])
    response = adapter.evaluate(make_prompt(Answer), session=session)
    assert response.output == Answer("Paris", 21)
    assert response.finish_reason == "stop"
    assert [event.name for event in session[ToolInvoked]] == ["weather"]  # nothing dropped
    assert len(adapter.requests) == 1


def test_an_output_call_that_does_not_validate_goes_back_to_the_model() -> None:
    adapter = ScriptedAdapter(
        [tool_turn(output_call(degrees="warm")), tool_turn(output_call(degrees=22))]
    )
    response = adapter.evaluate(make_prompt(Answer), session=Session())
    assert response.output == Answer("Paris", 22)
    (failure,) = tool_messages(adapter.requests[1])
    assert not failure.success
    assert "does not match Answer" in failure.content


# --- the round limit


def test_a_model_that_never_stops_calling_tools_is_stopped_by_the_default_limit() -> None:
    turns = [tool_turn(call("weather", {"city": "Paris"}, id=f"c{n}")) for n in range(60)]
    adapter = ScriptedAdapter(turns)
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.phase == "budget"
    assert len(adapter.requests) == 50


def test_the_round_limit_is_set_per_adapter_and_per_call() -> None:
    def looping() -> list[ModelResponse]:
        return [tool_turn(call("weather", {"city": "Paris"}, id=f"c{n}")) for n in range(9)]

    adapter = ScriptedAdapter(looping(), max_rounds=3)
    with pytest.raises(PromptEvaluationError, match="after 3 rounds"):
        adapter.evaluate(make_prompt(), session=Session())
    adapter = ScriptedAdapter([*looping()[:4], final("done")], max_rounds=3)
    assert adapter.evaluate(make_prompt(), session=Session(), max_rounds=5).text == "done"


# --- the session tells the whole story


def test_retries_and_the_failure_are_events_in_the_session() -> None:
    from datetime import timedelta

    from wink import PromptFailed, RequestRetried

    throttle = ThrottleError(
        "slow down",
        prompt_name="weather",
        details=ThrottleDetails(kind="rate_limit", retry_after=0.001, status_code=429),
    )
    policy = RetryPolicy(max_attempts=2, initial_delay=0.001, max_delay=0.002)
    session = Session()
    adapter = ScriptedAdapter([throttle, throttle], retry_policy=policy)
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(make_prompt(), session=session)
    (retried,) = session[RequestRetried]
    assert (retried.kind, retried.attempt, retried.status_code) == ("rate_limit", 1, 429)
    assert isinstance(retried.wait, timedelta)
    assert retried.wait.total_seconds() > 0
    (failed,) = session[PromptFailed]
    assert failed.error is info.value
    assert failed.phase == "request"
    assert failed.adapter == adapter.name


def test_a_failing_subscriber_is_logged_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = Session()
    seen: list[str] = []

    def broken(event: object) -> None:
        raise RuntimeError("observer bug")

    session.subscribe(broken)
    session.subscribe(lambda event: seen.append(type(event).__name__))
    adapter = ScriptedAdapter([final("fine")])
    with caplog.at_level("ERROR", logger="wink.session"):
        assert adapter.evaluate(make_prompt(), session=session).text == "fine"
    assert "PromptExecuted" in seen  # the other subscriber saw everything
    assert "observer bug" in caplog.text


def test_a_failing_reducer_before_the_request_is_not_labelled_the_providers_answer() -> None:
    session = Session()

    def bad_reducer(current: object, event: PromptRendered) -> object:
        raise KeyError("bug in my reducer")

    session.register_reducer(PromptRendered, bad_reducer, slice_type=str)
    adapter = ScriptedAdapter([final("unused")])
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=session)
    assert info.value.phase == "request"
    assert isinstance(info.value.__cause__, KeyError)
    assert adapter.requests == []
