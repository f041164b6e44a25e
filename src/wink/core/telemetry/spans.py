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
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from ..foundation.errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    ThrottleError,
    WinkError,
)

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from ..foundation.messages import (
        Message,
        ModelRequest,
        ModelResponse,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from ..foundation.results import ToolResult

__all__ = [
    "CAPTURE_CONTENT_VARIABLE",
    "EvaluationTrace",
    "OpenSpan",
    "Telemetry",
    "current_trace",
    "telemetry_for",
    "Served",
    "ToolOutcome",
    "traced_evaluation",
]

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_VALUES = frozenset({"true", "1", "span_only", "span_and_event"})

_current: contextvars.ContextVar[EvaluationTrace | None] = contextvars.ContextVar(
    "wink_evaluation_trace", default=None
)


def current_trace() -> EvaluationTrace | None:
    """The trace of the evaluation running in this context (None: nothing to record)."""
    return _current.get()


class Telemetry:
    """Where an adapter's spans go: a tracer from a `TracerProvider`, and what each span
    of a given adapter starts with (made once, not per span)."""

    __slots__ = ("_chats", "provider", "tracer")

    def __init__(self, tracer_provider: Any) -> None:
        self.provider = tracer_provider
        from ..foundation.version import __version__

        self.tracer: Tracer = tracer_provider.get_tracer("wink", __version__)
        self._chats: dict[str, tuple[str, dict[str, Any]]] = {}

    def chat(self, adapter: str, system: str) -> tuple[str, dict[str, Any]]:
        """The name and first attributes of `adapter`'s attempt spans."""
        known = self._chats.get(adapter)
        if known is None:
            model = _model(adapter)
            attributes = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": system,
                "gen_ai.request.model": model,
            }
            known = self._chats[adapter] = (f"chat {model}", attributes)
        return known


_global: Telemetry | None = None


def telemetry_for(configured: Telemetry | None) -> Telemetry | None:
    """The adapter's own telemetry, else the global tracer provider's once the
    application has set one, else None (no cost at all). An SDK that imports
    OpenTelemetry itself (anthropic does) configures nothing: until a provider is set,
    the global one is OpenTelemetry's proxy, whose spans would record nothing."""
    if configured is not None:
        return configured
    if "opentelemetry.trace" not in sys.modules:
        return None
    return _global_telemetry()


def _global_telemetry() -> Telemetry | None:
    global _global
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):
        return None  # nothing set yet: checked again at the next evaluation
    if _global is None or _global.provider is not provider:
        _global = Telemetry(provider)
    return _global


def capture_content() -> bool:
    value = os.environ.get(CAPTURE_CONTENT_VARIABLE, "")
    return value.strip().lower() in _CAPTURE_VALUES


class _OpenTelemetry:
    """The few OpenTelemetry names each span needs, bound once rather than imported at
    every span."""

    __slots__ = ("attach", "client", "detach", "error", "in_context", "internal")

    def __init__(self) -> None:
        from opentelemetry import context, trace

        self.attach = context.attach
        self.detach = context.detach
        self.in_context = trace.set_span_in_context
        self.client = trace.SpanKind.CLIENT
        self.internal = trace.SpanKind.INTERNAL
        self.error = trace.StatusCode.ERROR


_api: _OpenTelemetry | None = None


def _otel() -> _OpenTelemetry:
    global _api
    if _api is None:
        _api = _OpenTelemetry()
    return _api


class ToolOutcome(Protocol):
    """What a tool span records of a finished call (`wink.core.agent.executor.ToolExecution`):
    its result, the exception behind a failure, and the text the model reads."""

    @property
    def result(self) -> ToolResult[Any]: ...

    @property
    def error(self) -> BaseException | None: ...

    def to_message(self) -> ToolResultMessage: ...


class Served(Protocol):
    """What the trace reads off the loop's model client: the adapter serving the round
    (`name`, "provider:model") and its provider's `gen_ai.provider.name` (`system`)."""

    @property
    def name(self) -> str: ...

    @property
    def system(self) -> str: ...


class traced_evaluation:  # a context manager used like a function
    """`with traced_evaluation(telemetry, prompt, client) as trace:` around one
    evaluation; `trace` is None without telemetry. Either way the context's current
    trace is this evaluation's while the block runs (a nested evaluation has its own)."""

    __slots__ = ("_client", "_prompt_name", "_telemetry", "_token", "_trace")

    def __init__(self, telemetry: Telemetry | None, prompt_name: str, client: Served) -> None:
        self._telemetry = telemetry
        self._prompt_name = prompt_name
        self._client = client
        self._trace: EvaluationTrace | None = None
        self._token: contextvars.Token[EvaluationTrace | None] | None = None

    def __enter__(self) -> EvaluationTrace | None:
        if self._telemetry is not None:
            self._trace = EvaluationTrace(self._telemetry, self._prompt_name, self._client)
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


class OpenSpan:
    """A span started by `EvaluationTrace` and made the context's current span; its
    owner ends it with `EvaluationTrace.answered`/`tool_finished`/`failed`."""

    __slots__ = ("recording", "span", "token")

    def __init__(self, span: Span, token: Token[Context]) -> None:
        self.span = span
        self.token = token
        self.recording = span.is_recording()


class EvaluationTrace:
    """The spans of one evaluation; the loop, runner and executor report to it.

    Attempts and tools are opened and closed by their callers (`start_attempt` /
    `answered`, `start_tool` / `tool_finished`, `failed` for either) rather than wrapped
    around a callable: the span is the same, without a coroutine and a closure per span."""

    __slots__ = (
        "_adapter",
        "_api",
        "_client",
        "_span",
        "_telemetry",
        "_token",
        "_tracer",
        "content",
    )

    def __init__(self, telemetry: Telemetry, prompt_name: str, client: Served) -> None:
        api = self._api = _otel()
        self._telemetry = telemetry
        self._tracer = telemetry.tracer
        self._client = client
        self._adapter = adapter = client.name
        self.content = capture_content()
        provider, model = client.system, _model(adapter)
        self._span: Span = self._tracer.start_span(
            f"invoke_agent {prompt_name}",
            kind=api.internal,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": prompt_name,
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
            },
        )
        self._token = api.attach(api.in_context(self._span))

    # ---- the loop's events

    def record(self, event: object) -> None:
        """A session event of this evaluation: the same facts, on the evaluation span."""
        span = self._span
        if not span.is_recording():
            return
        from ..foundation.events import (
            AdapterSwitched,
            OutputRejected,
            PromptExecuted,
            PromptFailed,
            RequestRetried,
        )

        if isinstance(event, PromptExecuted):
            attributes: dict[str, Any] = {
                "gen_ai.usage.input_tokens": event.usage.input_tokens,
                "gen_ai.usage.output_tokens": event.usage.output_tokens,
                "wink.rounds": event.rounds,
            }
            if event.adapter != self._adapter:  # a fallback adapter answered
                provider, model = self._client.system, _model(event.adapter)
                attributes["wink.adapter"] = event.adapter
                attributes["gen_ai.provider.name"] = provider
                attributes["gen_ai.request.model"] = model
            span.set_attributes(attributes)
        elif isinstance(event, RequestRetried):
            attributes = {
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
        elif isinstance(event, OutputRejected):
            span.add_event(
                "wink.output.rejected",
                {
                    "wink.adapter": event.adapter,
                    "wink.output.via": event.via,
                    "wink.attempt": event.attempt,
                    "wink.output.problems": event.problems[:1000],
                },
            )
        elif isinstance(event, PromptFailed):
            _failed(span, event.error)
            attributes = {"wink.adapter": event.adapter, "wink.rounds": event.rounds}
            if event.phase is not None:
                attributes["wink.phase"] = event.phase
            span.set_attributes(attributes)

    def end(self, error: BaseException | None) -> None:
        if error is not None and not isinstance(error, WinkError):  # cancelled, interrupted
            _failed(self._span, error)
        self._api.detach(self._token)
        self._span.end()

    # ---- spans inside the evaluation

    def start_attempt(self, adapter: str, system: str, request: ModelRequest) -> OpenSpan:
        """A provider request attempt begins: a current `chat {model}` client span."""
        api = self._api
        name, attributes = self._telemetry.chat(adapter, system)
        span = self._tracer.start_span(name, kind=api.client, attributes=attributes)
        if self.content:
            _with_content(span, "gen_ai.input.messages", lambda: _messages_json(request.messages))
        return OpenSpan(span, api.attach(api.in_context(span)))

    def answered(self, opened: OpenSpan, response: ModelResponse) -> None:
        self._api.detach(opened.token)
        try:
            if opened.recording:
                _answered(opened.span, response, self.content)
        finally:
            opened.span.end()

    def start_tool(self, call: ToolCall, *, source: str | None = None) -> OpenSpan:
        """A tool execution begins: a current `execute_tool {name}` span; `source` names
        the MCP server of a tool that lives in one (`wink.tool.source`)."""
        api = self._api
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
        }
        if source is not None:
            attributes["wink.tool.source"] = source
        span = self._tracer.start_span(
            f"execute_tool {call.name}", kind=api.internal, attributes=attributes
        )
        if self.content:
            _with_content(span, "gen_ai.tool.call.arguments", call.arguments_json)
        return OpenSpan(span, api.attach(api.in_context(span)))

    def tool_finished(self, opened: OpenSpan, execution: ToolOutcome) -> None:
        """A failed result (the model reads it, nothing was raised) sets the error
        status too."""
        self._api.detach(opened.token)
        try:
            if opened.recording:
                _tool_outcome(opened.span, execution, self.content)
        finally:
            opened.span.end()

    def failed(self, opened: OpenSpan, error: BaseException) -> None:
        """The attempt or tool raised `error` (it goes on propagating)."""
        self._api.detach(opened.token)
        try:
            if opened.recording:
                _failed(opened.span, error)
        finally:
            opened.span.end()


# ---- attribute helpers


def _with_content(span: Span, key: str, content: Callable[[], str]) -> None:
    """Record opted-in content on a span not yet current; a failure ends it first."""
    if not span.is_recording():
        return
    try:
        span.set_attribute(key, content())
    except BaseException:
        span.end()
        raise


def _model(adapter: str) -> str:
    """`"provider:model"` -> the model."""
    _, _, model = adapter.partition(":")
    return model or adapter


def _error_type(error: BaseException) -> str:
    if isinstance(error, ThrottleError):
        return error.details.kind
    if isinstance(error, DeadlineExceededError):
        return "deadline_exceeded"
    return type(error).__qualname__


def _failed(span: Span, error: BaseException) -> None:
    if not span.is_recording():
        return
    span.set_attribute("error.type", _error_type(error))
    if isinstance(error, ThrottleError):
        seconds = error.details.retry_after_seconds
        if seconds is not None:
            span.set_attribute("wink.retry_after", seconds)
    if isinstance(error, PromptEvaluationError) and error.status_code is not None:
        span.set_attribute("http.response.status_code", error.status_code)
    span.set_status(_otel().error, str(error)[:1000])


def _tool_outcome(span: Span, execution: ToolOutcome, content: bool) -> None:
    result = execution.result
    if not result.success:
        error = execution.error
        kind = result.code or (type(error).__name__ if error is not None else "tool_error")
        span.set_attribute("error.type", kind)
        span.set_status(_otel().error, result.message[:1000])
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
    if usage.cache_write_tokens:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    raw: Mapping[str, Any] = response.raw or {}
    model = raw.get("model", raw.get("modelVersion"))  # Gemini says modelVersion
    if isinstance(model, str):
        attributes["gen_ai.response.model"] = model
    identifier = raw.get("id", raw.get("responseId"))
    if isinstance(identifier, str):
        attributes["gen_ai.response.id"] = identifier
    cost = response.cost  # no semantic convention yet: wink's own name (docs/cost.md)
    if cost is not None and cost.currency == "USD":
        attributes["wink.cost.usd"] = float(cost.total)
    if content:
        attributes["gen_ai.output.messages"] = json.dumps(
            [_message_json(response.to_message(), response.finish_reason)], ensure_ascii=False
        )
    span.set_attributes(attributes)


def _messages_json(messages: tuple[Message, ...]) -> str:
    return json.dumps([_message_json(message) for message in messages], ensure_ascii=False)


def _user_parts_json(message: UserMessage) -> list[dict[str, Any]]:
    """Text parts with their text; an attachment by its kind and media type (and URL),
    never its bytes, which would swell the span."""
    from ..foundation.content import CachePoint, TextPart

    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "content": part.text})
        elif not isinstance(part, CachePoint):
            shown: dict[str, Any] = {"modality": part.kind, "mime_type": part.media_type}
            if part.url is not None:
                parts.append({"type": "uri", **shown, "uri": part.url})
            else:
                parts.append({"type": "blob", **shown})
    return parts


def _message_json(message: Message, finish_reason: str | None = None) -> dict[str, Any]:
    """A neutral message in the conventions' `gen_ai.*.messages` shape (role + parts)."""
    from ..foundation.messages import (
        AssistantMessage,
        SystemMessage,
        ToolResultMessage,
        UserMessage,
    )

    if isinstance(message, UserMessage):
        return {"role": "user", "parts": _user_parts_json(message)}
    if isinstance(message, SystemMessage):
        return {"role": "system", "parts": [{"type": "text", "content": message.content}]}
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
