"""The runner: one provider request under the adapter's pacing and the deadline.

The loop (`loop.py`) retries through `RetryPolicy` and calls `Runner.request` for each
attempt; the runner waits for the pacer, bounds the attempt by the deadline (the whole
exchange, not each socket read), turns a translator's stray exception into the contract,
and feeds what the answer said about the provider's limits back to the pacer, with the
permit the pacer gave the request. Written once; an adapter gives it its translated round
trip (`exchange`, and `stream_exchange` into an `EventSink`) and the transport each
attempt goes through. A streamed exchange calls `opened` once the response head is in: a
provider that answered 200 has said "go" then, so the pacer hears of it then, not at the
end of the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..foundation.errors import (
    ConfigurationError,
    DeadlineExceededError,
    PromptEvaluationError,
    ThrottleError,
    WinkError,
)
from ..foundation.messages import ModelRequest, ModelResponse, RateLimitInfo
from ..foundation.portable import CallIdRules, distinct_call_ids, portable_messages
from ..telemetry.spans import current_trace
from ..throttling.limiter import Pacer
from ..throttling.pacing import Permit
from ..throttling.retry import RetryPolicy
from .errors import redact_secrets
from .http import Transport

if TYPE_CHECKING:  # adapters import the runner: keep that import light
    from ..foundation.events import EventSink

__all__ = ["Exchanging", "OnOpen", "Runner"]

OnOpen = Callable[[RateLimitInfo | None], Awaitable[None]]
"""Called by a streamed exchange once the response head is in, with its rate headers."""
Attempt = Callable[[ModelRequest, OnOpen], Awaitable[ModelResponse]]


class Exchanging(Protocol):
    """The translated round trip over a transport (`wink.core.transport.exchange.Exchange`):
    the whole answer, or streamed into a sink."""

    async def request(self, request: ModelRequest, transport: Transport) -> ModelResponse: ...

    async def stream(
        self, request: ModelRequest, transport: Transport, sink: EventSink, opened: OnOpen
    ) -> ModelResponse: ...


class Runner:
    """What the loop talks to (`wink.core.agent.loop.ModelClient`) for one adapter, in one
    evaluation: `transport(request)` gives the transport each attempt goes through (the
    entry point chose its kind, see `wink.core.transport.http`); `system` is the
    provider's `gen_ai.provider.name`.

    Each request goes out as this adapter can take it: model turns another adapter made
    travel by the provider's `call_ids` rules (`wink.core.foundation.portable`); each
    answer's repeated call ids are made distinct (`distinct_call_ids`) and the answer is
    tagged with `origin` (the adapter's name unless told otherwise: a fallback chain with
    two adapters of one name tells them apart).
    """

    __slots__ = (
        "_call_ids",
        "_exchange",
        "_name",
        "_pacer",
        "_policy",
        "_secrets",
        "_transport",
        "origin",
        "system",
    )

    def __init__(
        self,
        name: str,
        exchange: Exchanging,
        transport: Callable[[ModelRequest], Transport],
        *,
        system: str,
        pacer: Pacer,
        retry_policy: RetryPolicy,
        secrets: tuple[str, ...],
        call_ids: CallIdRules | None = None,
    ) -> None:
        self._name = name
        self.origin = name
        self._call_ids = call_ids if call_ids is not None else CallIdRules()
        self._exchange = exchange
        self._transport = transport
        self.system = system
        self._pacer = pacer
        self._policy = retry_policy
        self._secrets = secrets

    @property
    def name(self) -> str:
        return self._name

    def redact(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], redact_secrets(payload, self._secrets))

    async def request(self, request: ModelRequest) -> ModelResponse:
        exchange = self._exchange
        return await self._traced(
            lambda item, _opened: exchange.request(item, self._transport_for(item)), request
        )

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse:
        """`request`, streamed: the exchange feeds `sink` as the answer arrives and
        returns the same `ModelResponse` at the end. Pacing, the deadline (over the whole
        stream) and the contract are the same."""
        exchange = self._exchange
        return await self._traced(
            lambda item, opened: exchange.stream(item, self._transport_for(item), sink, opened),
            request,
        )

    def _transport_for(self, request: ModelRequest) -> Transport:
        """The transport for this attempt. Failing here, nothing was sent:
        `phase="request"`, but for a missing key (a `ConfigurationError` naming its
        variables), raised as itself: the adapter is set up wrong, not the request."""
        try:
            return self._transport(request)
        except ConfigurationError as error:
            if error.option == "api_key":
                raise
            raise PromptEvaluationError(
                str(error), prompt_name=request.prompt_name, phase="request"
            ) from error
        except WinkError as error:
            raise PromptEvaluationError(
                str(error), prompt_name=request.prompt_name, phase="request"
            ) from error
        except Exception as error:  # the SDK refused to build a client
            raise PromptEvaluationError(
                f"cannot create the {self._name.partition(':')[0]} client: {type(error).__name__}: "
                f"{redact_secrets(str(error), self._secrets)}",
                prompt_name=request.prompt_name,
                phase="request",
            ) from error

    async def _traced(self, exchange: Attempt, request: ModelRequest) -> ModelResponse:
        messages = portable_messages(request.messages, self.origin, self._call_ids)
        if messages is not request.messages:
            request = replace(request, messages=messages)
        trace = current_trace()
        if trace is None:
            response = await self._run(exchange, request)
        else:
            attempt = trace.start_attempt(self._name, self.system, request)  # a span each
            try:
                response = await self._run(exchange, request)
            except BaseException as error:
                trace.failed(attempt, error)
                raise
            trace.answered(attempt, response)
        response = distinct_call_ids(response, request.messages)
        return replace(response, origin=self.origin)

    async def _run(self, exchange: Attempt, request: ModelRequest) -> ModelResponse:
        pacer = self._pacer
        deadline = request.deadline
        permit = await pacer.acquire(deadline)
        if permit is None:
            raise DeadlineExceededError(
                "the provider's throttle window outlasts the deadline; request not sent",
                prompt_name=request.prompt_name,
            )
        answered = _Answered(pacer, permit)
        try:
            if deadline is None:
                response = await exchange(request, answered)
            else:
                response = await self._bounded(exchange, request, answered, deadline.remaining())
        except ThrottleError as error:
            if error.details.kind == "rate_limit":
                # One bad `retry-after: 86400` must not stall every request of the adapter
                # longer than the policy itself would ever wait.
                retry_after = self._policy.cap_wait(error.details.retry_after_seconds)
                limit_reached = error.details.limit_reached
                await pacer.on_throttle(permit, retry_after, limit_reached=limit_reached)
            raise
        except WinkError:
            raise
        except Exception as error:  # a translator bug must still honour the contract
            raise PromptEvaluationError(
                f"could not process the provider's answer: {type(error).__name__}: {error}",
                prompt_name=request.prompt_name,
                phase="response",
            ) from error
        await answered(response.rate_limit)  # headerless answers teach pacing too
        return response

    async def _bounded(
        self, exchange: Attempt, request: ModelRequest, opened: OnOpen, remaining: float
    ) -> ModelResponse:
        scope = asyncio.timeout(max(remaining, 0.0))
        try:
            async with scope:
                return await exchange(request, opened)
        except TimeoutError:
            if not scope.expired():
                raise
        raise DeadlineExceededError(
            "deadline passed while waiting for the provider's answer",
            prompt_name=request.prompt_name,
        )


class _Answered:
    """Tells the pacer once that the request of `permit` was answered: at the response
    head of a stream (`opened`), else when the whole answer is in."""

    __slots__ = ("_pacer", "_permit", "_told")

    def __init__(self, pacer: Pacer, permit: Permit) -> None:
        self._pacer, self._permit, self._told = pacer, permit, False

    async def __call__(self, info: RateLimitInfo | None) -> None:
        if not self._told:
            self._told = True
            await self._pacer.on_response(self._permit, info)
