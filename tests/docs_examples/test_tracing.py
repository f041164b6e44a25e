"""wink's spans checked in a test with the OpenTelemetry SDK (shown in docs/observability.md).

Needs `pip install 'wink[otel]' opentelemetry-sdk`; skipped where the SDK is missing.
"""

import pytest

from wink import MarkdownSection, Prompt, Session, create_adapter
from wink.testing import ProviderEmulator, Turn

trace_sdk = pytest.importorskip("opentelemetry.sdk.trace")
export = pytest.importorskip("opentelemetry.sdk.trace.export")
in_memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")

PROMPT = Prompt(
    name="greet", sections=[MarkdownSection(key="task", title="Task", template="Say hi.")]
)


def test_an_evaluation_is_a_span_with_one_span_per_request() -> None:
    exporter = in_memory.InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    # An application calls opentelemetry.trace.set_tracer_provider(provider) once, and every
    # adapter uses it; a test gives it to the adapter, so tests share no global.
    with ProviderEmulator([Turn.text("Hi!", input_tokens=12, output_tokens=3)]) as emu:
        adapter = create_adapter(
            "openai:gpt-4.1",
            base_url=emu.base_url("openai"),
            api_key="test",
            tracer_provider=provider,
        )
        adapter.evaluate(PROMPT, session=Session())

    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_agent greet", "chat gpt-4.1"}
    evaluation, chat = spans["invoke_agent greet"], spans["chat gpt-4.1"]
    assert chat.parent.span_id == evaluation.context.span_id
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert evaluation.attributes["gen_ai.usage.output_tokens"] == 3
