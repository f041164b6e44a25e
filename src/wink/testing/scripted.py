"""A scripted in-process adapter: drive the real loop with no wire and no SDK."""

from __future__ import annotations

import contextlib
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, cast

from ..adapters.base import ProviderAdapter
from ..core.foundation.checks import kind_of
from ..core.foundation.errors import (
    InvalidArgumentError,
    PromptEvaluationError,
    UnsupportedFeatureError,
)
from ..core.foundation.events import EventSink
from ..core.foundation.messages import ModelRequest, ModelResponse, ToolCall, Usage
from ..core.foundation.pricing import Pricer
from ..core.transport.decoding import events_of
from ..core.transport.http import EncodedRequest, HttpCalls, Transport, WireRequest
from ..core.transport.runner import Exchanging, OnOpen
from ..providers.base import Provider
from ..providers.host import Host

__all__ = ["Scripted", "ScriptedAdapter", "ScriptedHost", "call", "final", "tool_turn"]

Step = ModelResponse | BaseException | Callable[[ModelRequest], "ModelResponse | BaseException"]


def call(name: str, arguments: str | Mapping[str, Any] | None = None, *, id: str = "") -> ToolCall:
    """A tool call as a model would send it (`arguments` may be a raw, even broken, string)."""
    return ToolCall(id=id or f"call_{name}", name=name, arguments=arguments or {})


def tool_turn(*calls: ToolCall, usage: Usage | None = None) -> ModelResponse:
    """A model turn that asks for `calls` (ids made unique by position when repeated)."""
    seen: dict[str, int] = {}
    unique: list[ToolCall] = []
    for item in calls:
        count = seen.get(item.id, 0)
        seen[item.id] = count + 1
        unique.append(
            item if count == 0 else ToolCall(f"{item.id}_{count}", item.name, item.arguments)
        )
    return ModelResponse(
        text=None,
        tool_calls=tuple(unique),
        usage=usage or Usage(input_tokens=10, output_tokens=5),
        finish_reason="tool_calls",
    )


def final(text: str | object, *, usage: Usage | None = None) -> ModelResponse:
    """A final answer; a non-string is sent as JSON (structured output)."""
    body = text if isinstance(text, str) else json.dumps(text)
    return ModelResponse(
        text=body, usage=usage or Usage(input_tokens=10, output_tokens=5), finish_reason="stop"
    )


def _checked(steps: Iterable[object]) -> list[Step]:
    """Each step is a response, an exception to raise, or a callable of the request."""
    checked: list[Step] = []
    for step in steps:
        if not isinstance(step, ModelResponse | BaseException) and not callable(step):
            raise InvalidArgumentError(
                "a scripted step is a ModelResponse (final(...), tool_turn(...)), an exception "
                f"to raise or a function of the request, got {kind_of(step)}",
                argument="steps",
            )
        checked.append(cast(Step, step))
    return checked


@dataclass
class _Script:
    steps: deque[Step] = field(default_factory=deque[Step])
    requests: list[ModelRequest] = field(default_factory=list[ModelRequest])


class _NoCalls:
    """A scripted adapter sends nothing: its exchange answers from the script."""

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("a scripted adapter has no wire")  # pragma: no cover

    async def post_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("a scripted adapter has no wire")  # pragma: no cover

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("a scripted adapter has no wire")  # pragma: no cover

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("a scripted adapter has no wire")  # pragma: no cover


_NO_CALLS = _NoCalls()


class Scripted(Provider):
    """The scripted model's provider: no wire, no key; its client is a placeholder, so the
    adapter's client lifecycle is the real one."""

    name = "scripted"

    def make_client(self) -> Any:
        return object()

    def is_async_client(self, client: Any) -> bool:
        return False

    @property
    def http_calls(self) -> HttpCalls:
        return _NO_CALLS

    def translate(self, request: ModelRequest) -> WireRequest:  # pragma: no cover
        raise NotImplementedError("a scripted adapter has no wire")

    def parse_response(self, data: Any) -> ModelResponse:  # pragma: no cover
        raise NotImplementedError("a scripted adapter has no wire")

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


class ScriptedHost(Host):
    """Where the scripted model is served: in process, no key."""

    name = "scripted"
    wire = Scripted
    system = "scripted"
    telemetry_name = "scripted"
    key_required = False


class _ScriptExchange:
    """The round trip of a scripted model: the next step of the script, priced by the
    adapter's `pricer` as a real answer is (`model=` and `prices=` set its price)."""

    def __init__(self, script: _Script, pricer: Pricer) -> None:
        self.script = script
        self.pricer = pricer

    async def request(self, request: ModelRequest, transport: Transport) -> ModelResponse:
        script = self.script
        script.requests.append(request)
        if not script.steps:
            raise PromptEvaluationError(
                "the scripted model has no response left",
                prompt_name=request.prompt_name,
                phase="response",
            )
        step = script.steps.popleft()
        if callable(step) and not isinstance(step, ModelResponse | BaseException):
            step = step(request)
        if isinstance(step, BaseException):
            raise step
        return self.pricer.tag(step)

    async def stream(
        self,
        request: ModelRequest,
        transport: Transport,
        sink: EventSink,
        opened: OnOpen | None = None,
    ) -> ModelResponse:
        response = await self.request(request, transport)
        await sink.send(events_of(response))
        return response

    async def count_tokens(self, request: ModelRequest, transport: Transport) -> int:
        raise UnsupportedFeatureError(
            "a scripted model has no token-count endpoint", feature="count_tokens"
        )


class ScriptedAdapter(ProviderAdapter):
    """An adapter whose model is a list of scripted responses, exceptions or callables."""

    provider = "scripted"

    def __init__(self, steps: Iterable[Step] = (), *, model: str = "test", **options: Any) -> None:
        if isinstance(steps, str | bytes) or not isinstance(cast(object, steps), Iterable):
            raise InvalidArgumentError(
                f"ScriptedAdapter(steps=...) takes a list of steps, got {kind_of(steps)}",
                argument="steps",
            )
        self._script = _Script(deque(_checked(steps)))
        super().__init__(model, **options)

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request the loop sent, in order."""
        return self._script.requests

    def add(self, *steps: Step) -> None:
        self._script.steps.extend(_checked(steps))

    @classmethod
    def _host_type(cls, name: str) -> type[Host]:
        return ScriptedHost

    def _make_exchange(self) -> Exchanging:
        return _ScriptExchange(self._script, self.pricer)
