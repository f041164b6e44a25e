"""OpenTelemetry spans, made at the points where the loop records its session events.

One span per evaluation (`invoke_agent {prompt}`), one per provider request attempt
(`chat {model}`, retries included, each its own span), one per tool execution
(`execute_tool {tool}`); retries and fallback switches are events on the evaluation
span. Attributes follow the GenAI semantic conventions. Prompt and completion content is
recorded only when the application opts in with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

Nothing here imports OpenTelemetry until it is used: `telemetry_for` returns None (and
the loop does nothing but a context-variable set) unless the adapter was given a
`tracer_provider=` or the application has imported `opentelemetry.trace` (configuring a
global tracer provider does that).
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .errors import DeadlineExceededError, ThrottleError, WinkError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from .executor import ToolExecution
    from .messages import Message, ModelRequest, ModelResponse, ToolCall

__all__ = [
    "CAPTURE_CONTENT_VARIABLE",
    "EvaluationTrace",
    "Telemetry",
    "current_trace",
    "telemetry_for",
    "traced_evaluation",
]

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_VALUES = frozenset({"true", "1", "span_only", "span_and_event"})

# wink's provider prefix -> `gen_ai.provider.name` (the conventions' well-known values)
_PROVIDER_NAMES = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",
}

_current: contextvars.ContextVar[EvaluationTrace | None] = contextvars.ContextVar(
    "wink_evaluation_trace", default=None
)


def current_trace() -> EvaluationTrace | None:
    """The trace of the evaluation running in this context (None: nothing to record)."""
    return _current.get()


class Telemetry:
    """Where an adapter's spans go: a tracer from a `TracerProvider`."""

    __slots__ = ("tracer",)

    def __init__(self, tracer_provider: Any) -> None:
        from .. import __version__

        self.tracer: Tracer = tracer_provider.get_tracer("wink", __version__)


_global: Telemetry | None = None


def telemetry_for(configured: Telemetry | None) -> Telemetry | None:
    """The adapter's own telemetry, else the global tracer provider's once the
    application has imported OpenTelemetry, else None (no cost at all)."""
    if configured is not None:
        return configured
    if _global is not None:
        return _global
    if "opentelemetry.trace" not in sys.modules:
        return None
    return _global_telemetry()


def _global_telemetry() -> Telemetry:
    global _global
    from opentelemetry import trace

    # A proxy until the application sets a provider; it follows one set later.
    _global = Telemetry(trace.get_tracer_provider())
    return _global


def capture_content() -> bool:
    value = os.environ.get(CAPTURE_CONTENT_VARIABLE, "")
    return value.strip().lower() in _CAPTURE_VALUES


class traced_evaluation:  # a context manager used like a function
    """`with traced_evaluation(telemetry, prompt, adapter) as trace:` around one
    evaluation; `trace` is None without telemetry. Either way the context's current
    trace is this evaluation's while the block runs (a nested evaluation has its own)."""

    __slots__ = ("_adapter", "_prompt_name", "_telemetry", "_token", "_trace")

    def __init__(self, telemetry: Telemetry | None, prompt_name: str, adapter: str) -> None:
        self._telemetry = telemetry
        self._prompt_name = prompt_name
        self._adapter = adapter
        self._trace: EvaluationTrace | None = None
        self._token: contextvars.Token[EvaluationTrace | None] | None = None

    def __enter__(self) -> EvaluationTrace | None:
        if self._telemetry is not None:
            self._trace = EvaluationTrace(self._telemetry, self._prompt_name, self._adapter)
        self._token = _current.set(self._trace)
        return self._trace

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _current.reset(self._token)
        if self._trace is not None:
            self._trace.end(exc)


class EvaluationTrace:
    """The spans of one evaluation; the loop, runner and executor report to it."""

    __slots__ = ("_adapter", "_detach", "_span", "_tracer", "content")

    def __init__(self, telemetry: Telemetry, prompt_name: str, adapter: str) -> None:
        from opentelemetry import context, trace

        self._tracer = telemetry.tracer
        self._adapter = adapter
        self.content = capture_content()
        provider, model = _split(adapter)
        self._span: Span = self._tracer.start_span(
            f"invoke_agent {prompt_name}",
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": prompt_name,
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
            },
        )
        token = context.attach(trace.set_span_in_context(self._span))
        self._detach: Callable[[], None] = lambda: context.detach(token)

    # ---- the loop's events

    def record(self, event: object) -> None:
        """A session event of this evaluation: the same facts, on the evaluation span."""
        span = self._span
        if not span.is_recording():
            return
        from .session import (
            AdapterSwitched,
            PromptExecuted,
            PromptFailed,
            RequestRetried,
        )

        if isinstance(event, RequestRetried):
            attributes: dict[str, Any] = {
                "wink.adapter": event.adapter,
                "error.type": event.kind,
                "wink.attempt": event.attempt,
                "wink.retry.wait": event.wait.total_seconds(),
            }
            if event.status_code is not None:
                attributes["http.response.status_code"] = event.status_code
            span.add_event("wink.request.retried", attributes)
        elif isinstance(event, AdapterSwitched):
            span.add_event(
                "wink.fallback.switched",
                {
                    "wink.fallback.from": event.from_adapter,
                    "wink.fallback.to": event.to_adapter,
                    "error.type": _error_type(event.error),
                    "wink.fallback.error": str(event.error)[:1000],
                },
            )
        elif isinstance(event, PromptExecuted):
            attributes = {
                "gen_ai.usage.input_tokens": event.usage.input_tokens,
                "gen_ai.usage.output_tokens": event.usage.output_tokens,
                "wink.rounds": event.rounds,
            }
            if event.adapter != self._adapter:  # a fallback adapter answered
                provider, model = _split(event.adapter)
                attributes["wink.adapter"] = event.adapter
                attributes["gen_ai.provider.name"] = provider
                attributes["gen_ai.request.model"] = model
            span.set_attributes(attributes)
        elif isinstance(event, PromptFailed):
            _failed(span, event.error)
            attributes = {"wink.adapter": event.adapter, "wink.rounds": event.rounds}
            if event.phase is not None:
                attributes["wink.phase"] = event.phase
            span.set_attributes(attributes)

    def end(self, error: BaseException | None) -> None:
        if error is not None and not isinstance(error, WinkError):  # cancelled, interrupted
            _failed(self._span, error)
        self._detach()
        self._span.end()

    # ---- spans inside the evaluation

    async def attempt(
        self,
        adapter: str,
        request: ModelRequest,
        send: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """One provider request attempt (`send`) inside a `chat {model}` client span."""
        from opentelemetry import context, trace

        provider, model = _split(adapter)
        span = self._tracer.start_span(
            f"chat {model}",
            kind=trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
            },
            record_exception=False,
            set_status_on_exception=False,
        )
        token = context.attach(trace.set_span_in_context(span))
        try:
            if self.content and span.is_recording():
                span.set_attribute("gen_ai.input.messages", _messages_json(request.messages))
            response = await send(request)
        except BaseException as error:
            _failed(span, error)
            raise
        else:
            if span.is_recording():
                _answered(span, response, self.content)
            return response
        finally:
            context.detach(token)
            span.end()

    async def tool(
        self, call: ToolCall, run: Callable[[ToolCall], Awaitable[ToolExecution]]
    ) -> ToolExecution:
        """One tool execution (`run`) inside an `execute_tool {name}` span; a failed
        result (the model reads it, nothing was raised) sets the error status too."""
        from opentelemetry import context, trace

        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
            },
            record_exception=False,
            set_status_on_exception=False,
        )
        token = context.attach(trace.set_span_in_context(span))
        try:
            if self.content and span.is_recording():
                span.set_attribute("gen_ai.tool.call.arguments", call.arguments_json())
            execution = await run(call)
        except BaseException as error:
            _failed(span, error)
            raise
        else:
            if span.is_recording():
                _tool_outcome(span, execution, self.content)
            return execution
        finally:
            context.detach(token)
            span.end()


# ---- attribute helpers


def _split(adapter: str) -> tuple[str, str]:
    """`"provider:model"` -> (`gen_ai.provider.name`, model)."""
    provider, _, model = adapter.partition(":")
    return _PROVIDER_NAMES.get(provider, provider), model or adapter


def _error_type(error: BaseException) -> str:
    if isinstance(error, ThrottleError):
        return error.details.kind
    if isinstance(error, DeadlineExceededError):
        return "deadline_exceeded"
    return type(error).__qualname__


def _failed(span: Span, error: BaseException) -> None:
    from opentelemetry.trace import StatusCode

    if not span.is_recording():
        return
    span.set_attribute("error.type", _error_type(error))
    if isinstance(error, ThrottleError):
        details = error.details
        if details.retry_after_seconds is not None:
            span.set_attribute("wink.retry_after", details.retry_after_seconds)
        if details.status_code is not None:
            span.set_attribute("http.response.status_code", details.status_code)
    span.set_status(StatusCode.ERROR, str(error)[:1000])


def _tool_outcome(span: Span, execution: ToolExecution, content: bool) -> None:
    from opentelemetry.trace import StatusCode

    result = execution.result
    if not result.success:
        error = execution.error
        kind = result.code or (type(error).__name__ if error is not None else "tool_error")
        span.set_attribute("error.type", kind)
        span.set_status(StatusCode.ERROR, result.message[:1000])
    if content:
        span.set_attribute("gen_ai.tool.call.result", execution.to_message().content)


def _answered(span: Span, response: ModelResponse, content: bool) -> None:
    usage = response.usage
    attributes: dict[str, Any] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.response.finish_reasons": (response.finish_reason,),
    }
    if usage.cached_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cached_tokens
    if usage.reasoning_tokens:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    raw: Mapping[str, Any] = response.raw or {}
    model = raw.get("model", raw.get("modelVersion"))  # Gemini says modelVersion
    if isinstance(model, str):
        attributes["gen_ai.response.model"] = model
    identifier = raw.get("id", raw.get("responseId"))
    if isinstance(identifier, str):
        attributes["gen_ai.response.id"] = identifier
    if content:
        attributes["gen_ai.output.messages"] = json.dumps(
            [_message_json(response.to_message(), response.finish_reason)], ensure_ascii=False
        )
    span.set_attributes(attributes)


def _messages_json(messages: tuple[Message, ...]) -> str:
    return json.dumps([_message_json(message) for message in messages], ensure_ascii=False)


def _message_json(message: Message, finish_reason: str | None = None) -> dict[str, Any]:
    """A neutral message in the conventions' `gen_ai.*.messages` shape (role + parts)."""
    from .messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage

    if isinstance(message, UserMessage | SystemMessage):
        role = "user" if isinstance(message, UserMessage) else "system"
        return {"role": role, "parts": [{"type": "text", "content": message.content}]}
    if isinstance(message, ToolResultMessage):
        part: dict[str, Any] = {
            "type": "tool_call_response",
            "id": message.call_id,
            "response": message.content,
        }
        if not message.success:
            part["error"] = True
        return {"role": "tool", "parts": [part]}
    assert isinstance(message, AssistantMessage)
    parts: list[dict[str, Any]] = []
    if message.text:
        parts.append({"type": "text", "content": message.text})
    parts.extend(
        {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
        for call in message.tool_calls
    )
    mapped: dict[str, Any] = {"role": "assistant", "parts": parts}
    if finish_reason is not None:
        mapped["finish_reason"] = finish_reason
    return mapped
