"""OpenTelemetry spans: one per evaluation, per request attempt and per tool, checked with
the SDK's in-memory exporter against real adapters on the emulator."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import MODELS, PROVIDERS, make_adapter
from wink import (
    ConfigurationError,
    FallbackAdapter,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    RetryPolicy,
    Session,
    Tool,
    ToolContext,
    ToolResult,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True)
class CityParams:
    city: str


APP_TRACERS: list[Any] = []  # the application's tracer, used inside the tool


def weather(params: CityParams, *, context: ToolContext) -> ToolResult[dict[str, str]]:
    if APP_TRACERS:
        with APP_TRACERS[-1].start_as_current_span("station lookup"):  # the tool's own span
            return _weather(params)
    return _weather(params)


def _weather(params: CityParams) -> ToolResult[dict[str, str]]:
    if params.city != "Paris":
        return ToolResult.error(f"no station in {params.city}")
    return ToolResult.ok({"summary": "sunny"}, message="report")


PROMPT = Prompt(
    name="trip",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Weather?",
            tools=[Tool(name="weather", description="Weather by city", handler=weather)],
        )
    ],
)
TOOL_ROUND = Turn.tool_calls(
    EmulatedToolCall("weather", {"city": "Paris"}, id="toolu_ok"),
    EmulatedToolCall("weather", {"city": "Lyon"}, id="toolu_fails"),
)


class Traced:
    """A tracer provider with an in-memory exporter; `spans` by name."""

    def __init__(self) -> None:
        sdk = pytest.importorskip("opentelemetry.sdk.trace")
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        self.exporter = InMemorySpanExporter()
        self.provider = sdk.TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self, prefix: str = "") -> list[Any]:
        return [s for s in self.exporter.get_finished_spans() if s.name.startswith(prefix)]

    def root(self) -> Any:
        (span,) = self.spans("invoke_agent")
        return span


@pytest.fixture
def traced() -> Iterator[Traced]:
    setup = Traced()
    APP_TRACERS.append(setup.provider.get_tracer("app"))
    yield setup
    APP_TRACERS.clear()


@pytest.fixture
def emulator() -> Iterator[ProviderEmulator]:
    with ProviderEmulator() as emu:
        yield emu


def anthropic(emu: ProviderEmulator, traced: Traced | None, **options: Any) -> ProviderAdapter:
    if traced is not None:
        options["tracer_provider"] = traced.provider
    return create_adapter(
        "anthropic:claude-sonnet-4-6",
        base_url=emu.base_url("anthropic"),
        api_key="sk-ant-test-0123456789",
        **options,
    )


def test_a_tool_loop_is_one_evaluation_span_with_requests_and_tools_inside(
    traced: Traced, emulator: ProviderEmulator
) -> None:
    emulator.set_script([TOOL_ROUND, Turn.text("Sunny in Paris.", input_tokens=30)])
    anthropic(emulator, traced).evaluate(PROMPT, session=Session())

    root = traced.root()
    assert root.name == "invoke_agent trip"
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "trip"
    assert root.attributes["gen_ai.provider.name"] == "anthropic"
    assert root.attributes["gen_ai.usage.input_tokens"] == 40
    assert root.attributes["wink.rounds"] == 2
    chats = traced.spans("chat ")
    assert [span.name for span in chats] == ["chat claude-sonnet-4-6"] * 2
    for span in chats:
        assert span.parent.span_id == root.context.span_id
        assert span.kind.name == "CLIENT"
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.provider.name"] == "anthropic"
        assert span.attributes["gen_ai.request.model"] == "claude-sonnet-4-6"
        assert span.attributes["gen_ai.response.model"] == "claude-sonnet-4-6"
        assert span.attributes["gen_ai.usage.output_tokens"] == 5
    assert [span.attributes["gen_ai.response.finish_reasons"] for span in chats] == [
        ("tool_calls",),
        ("stop",),
    ]
    assert [span.attributes["gen_ai.usage.input_tokens"] for span in chats] == [10, 30]
    tools = sorted(traced.spans("execute_tool"), key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert [span.attributes["gen_ai.tool.call.id"] for span in tools] == [
        "toolu_fails",
        "toolu_ok",
    ]
    failed, ok = tools
    assert all(span.parent.span_id == root.context.span_id for span in tools)
    assert ok.attributes["gen_ai.tool.name"] == "weather"
    assert ok.status.status_code.name == "UNSET"
    assert failed.status.status_code.name == "ERROR"
    assert failed.status.description == "no station in Lyon"
    assert failed.attributes["error.type"] == "tool_error"
    # the tool's own span (in a worker thread) nests under its execute_tool span
    lookups = traced.spans("station lookup")
    assert {span.parent.span_id for span in lookups} == {span.context.span_id for span in tools}


# The shape of each provider's response ids, as the emulator makes them.
RESPONSE_IDS = {
    "openai": r"chatcmpl-\w+",
    "openai-responses": r"resp_\w+",
    "anthropic": r"msg_01\w+",
    "google": r"\w{23}",
}


@pytest.mark.parametrize("streamed", [False, True], ids=["evaluated", "streamed"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_chat_span_names_the_response_and_its_model(
    traced: Traced, emulator: ProviderEmulator, provider: str, streamed: bool
) -> None:
    emulator.set_script([TOOL_ROUND, Turn.text("Sunny in Paris.")])
    adapter = make_adapter(provider, emulator, tracer_provider=traced.provider)
    if streamed:
        with adapter.stream(PROMPT, session=Session()) as stream:
            for _ in stream:
                pass
    else:
        adapter.evaluate(PROMPT, session=Session())

    chats = traced.spans("chat ")
    assert len(chats) == 2
    ids = [span.attributes.get("gen_ai.response.id") for span in chats]
    assert all(re.fullmatch(RESPONSE_IDS[provider], str(id_)) for id_ in ids), ids
    assert ids[0] != ids[1]  # each request's own response
    assert [span.attributes.get("gen_ai.response.model") for span in chats] == [
        MODELS[provider]
    ] * 2


def test_each_retry_is_its_own_attempt_span_with_the_wait_asked(
    traced: Traced, emulator: ProviderEmulator
) -> None:
    emulator.set_script([Fault.rate_limit(retry_after=0.01), Turn.text("Fine.")])
    policy = RetryPolicy(max_attempts=2, initial_delay=0.0, jitter=0.0)
    anthropic(emulator, traced, retry_policy=policy).evaluate(PROMPT, session=Session())

    throttled, answered = traced.spans("chat ")
    assert throttled.status.status_code.name == "ERROR"
    assert throttled.attributes["error.type"] == "rate_limit"
    assert throttled.attributes["wink.retry_after"] == 0.01
    assert throttled.attributes["http.response.status_code"] == 429
    assert answered.status.status_code.name == "UNSET"
    (event,) = traced.root().events
    assert event.name == "wink.request.retried"
    assert event.attributes["error.type"] == "rate_limit"
    assert event.attributes["wink.attempt"] == 1
    assert event.attributes["wink.retry.wait"] >= 0.01


def test_a_fallback_switch_is_an_event_and_each_provider_has_its_spans(
    traced: Traced, emulator: ProviderEmulator
) -> None:
    def script(request: Any) -> Turn | Fault:
        return Fault.overloaded() if request.provider == "anthropic" else Turn.text("Served.")

    emulator.set_script(script)
    first = anthropic(emulator, None, retry_policy=RetryPolicy(max_attempts=1))
    second = create_adapter(
        "google:gemini-2.5-flash", base_url=emulator.base_url("google"), api_key="g-key"
    )
    FallbackAdapter([first, second], tracer_provider=traced.provider).evaluate(
        PROMPT, session=Session()
    )

    failed, served = traced.spans("chat ")
    assert failed.attributes["gen_ai.provider.name"] == "anthropic"
    assert failed.attributes["error.type"] == "overloaded"
    assert served.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert served.name == "chat gemini-2.5-flash"
    root = traced.root()
    (switch,) = root.events
    assert switch.name == "wink.fallback.switched"
    assert switch.attributes["wink.fallback.from"] == "anthropic:claude-sonnet-4-6"
    assert switch.attributes["wink.fallback.to"] == "google:gemini-2.5-flash"
    assert switch.attributes["error.type"] == "overloaded"
    assert root.attributes["wink.adapter"] == "google:gemini-2.5-flash"


@dataclass(frozen=True)
class Forecast:
    city: str
    degrees: int


def test_a_rejected_structured_answer_is_an_event(
    traced: Traced, emulator: ProviderEmulator
) -> None:
    emulator.set_script(
        [Turn.text('{"city": "Paris"}'), Turn.json({"city": "Paris", "degrees": 21})]
    )
    prompt = Prompt(name="forecast", sections=PROMPT.sections, output_type=Forecast)
    anthropic(emulator, traced).evaluate(prompt, session=Session())
    (event,) = traced.root().events
    assert event.name == "wink.output.rejected"
    assert dict(event.attributes) == {
        "wink.adapter": "anthropic:claude-sonnet-4-6",
        "wink.output.via": "text",
        "wink.attempt": 1,
        "wink.output.problems": "degrees: Field required",
    }


def test_a_failed_evaluation_is_an_error_span(traced: Traced, emulator: ProviderEmulator) -> None:
    emulator.set_script([Fault.bad_request("messages: Field required")])
    with pytest.raises(PromptEvaluationError):
        anthropic(emulator, traced).evaluate(PROMPT, session=Session())
    root = traced.root()
    assert root.status.status_code.name == "ERROR"
    assert root.attributes["error.type"] == "BadRequestError"
    assert root.attributes["wink.phase"] == "request"
    (chat,) = traced.spans("chat ")
    assert "Field required" in chat.status.description
    assert chat.attributes["error.type"] == "BadRequestError"
    assert chat.attributes["http.response.status_code"] == 400  # not only a throttle's
    assert "sk-ant-test" not in json.dumps([dict(s.attributes) for s in traced.spans()])


def test_content_is_recorded_only_when_the_application_opts_in(
    traced: Traced, emulator: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.set_script([TOOL_ROUND, Turn.text("Sunny in Paris.")] * 2)
    adapter = anthropic(emulator, traced)
    adapter.evaluate(PROMPT, session=Session())
    content_keys = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.result"}
    assert not any(content_keys & set(span.attributes) for span in traced.spans())

    traced.exporter.clear()
    monkeypatch.setenv(CAPTURE, "true")
    adapter.evaluate(PROMPT, session=Session())
    second_chat = traced.spans("chat ")[1]
    sent = json.loads(second_chat.attributes["gen_ai.input.messages"])
    assert [message["role"] for message in sent] == ["user", "assistant", "tool", "tool"]
    assert sent[1]["parts"][1] == {
        "type": "tool_call",
        "id": "toolu_fails",
        "name": "weather",
        "arguments": {"city": "Lyon"},
    }
    assert sent[3]["parts"][0]["error"] is True
    (answer,) = json.loads(second_chat.attributes["gen_ai.output.messages"])
    assert answer["parts"] == [{"type": "text", "content": "Sunny in Paris."}]
    assert answer["finish_reason"] == "stop"
    results = {s.attributes["gen_ai.tool.call.result"] for s in traced.spans("execute_tool")}
    assert results == {'report\n{"summary": "sunny"}', "no station in Lyon"}
    arguments = [
        json.loads(s.attributes["gen_ai.tool.call.arguments"]) for s in traced.spans("execute_tool")
    ]
    assert sorted(a["city"] for a in arguments) == ["Lyon", "Paris"]


def test_the_evaluation_span_is_a_child_of_the_applications_span(
    traced: Traced, emulator: ProviderEmulator
) -> None:
    emulator.set_script([Turn.text("Hi.")])
    adapter = anthropic(emulator, traced)
    with traced.provider.get_tracer("app").start_as_current_span("request handler") as outer:
        adapter.evaluate(PROMPT, session=Session())
    assert traced.root().parent.span_id == outer.get_span_context().span_id


def test_tracer_provider_must_be_a_tracer_provider() -> None:
    with pytest.raises(ConfigurationError, match="TracerProvider") as caught:
        create_adapter("anthropic:claude-sonnet-4-6", api_key="k", tracer_provider="otel")
    assert caught.value.option == "tracer_provider"


def _run_python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_without_opentelemetry_configured_wink_never_imports_it() -> None:
    code = """
        import sys
        import wink
        from wink.testing.scripted import ScriptedAdapter, final
        prompt = wink.Prompt(name="p", sections=[
            wink.MarkdownSection(key="k", title="T", template="Hi")])
        ScriptedAdapter([final("ok")]).evaluate(prompt, session=wink.Session())
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
    """
    assert _run_python(code) == "[]"


def test_the_global_tracer_provider_is_used_once_the_application_sets_one() -> None:
    pytest.importorskip("opentelemetry.sdk")
    code = """
        import wink
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        from wink.testing.scripted import ScriptedAdapter, final
        prompt = wink.Prompt(name="p", sections=[
            wink.MarkdownSection(key="k", title="T", template="Hi")])
        adapter = ScriptedAdapter([final("before"), final("after")])
        adapter.evaluate(prompt, session=wink.Session())  # no provider set yet: no spans
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        adapter.evaluate(prompt, session=wink.Session())
        print(sorted(span.name for span in exporter.get_finished_spans()))
    """
    assert _run_python(code) == "['chat test', 'invoke_agent p']"


def test_an_sdk_importing_opentelemetry_turns_no_tracing_on() -> None:
    """The anthropic SDK imports OpenTelemetry itself; with no provider set, wink makes no
    spans (they would record nothing, at a cost on every evaluation)."""
    code = """
        import opentelemetry.trace
        from wink.core.telemetry.spans import telemetry_for
        print(telemetry_for(None))
    """
    assert _run_python(code) == "None"
