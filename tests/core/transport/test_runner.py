"""The runner (`wink.core.transport.runner`): one provider request under the adapter's pacing and
the deadline, a translator's stray exception turned into the contract, and what the
answer says about the provider's limits fed back to the pacer.

First the runner alone, around a stand-in exchange; then through real adapters.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from tests.helpers.adapters import KEY, make_adapter
from tests.helpers.prompts import HELLO, make_prompt
from tests.helpers.throttling import fake_pacer, throttle, throttled
from wink import (
    Deadline,
    DeadlineExceededError,
    PromptEvaluationError,
    RetryPolicy,
    Session,
    ThrottleError,
    create_adapter,
)
from wink.core.foundation.messages import ModelRequest, ModelResponse, RateLimitInfo, UserMessage
from wink.core.throttling.pacing import Permit, RequestPacer
from wink.core.transport.runner import OnOpen, Runner
from wink.testing import Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter

Exchange = Callable[[ModelRequest], Awaitable[ModelResponse]]


def request(deadline: Deadline | None = None) -> ModelRequest:
    return ModelRequest("greet", (UserMessage("hi"),), deadline=deadline)


def answering(outcome: ModelResponse | BaseException, calls: list[ModelRequest]) -> Exchange:
    """An exchange that records each request and returns or raises `outcome`."""

    async def exchange(sent: ModelRequest) -> ModelResponse:
        calls.append(sent)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return exchange


Streamed = Callable[[ModelRequest, OnOpen], Awaitable[ModelResponse]]


class StandIn:
    """An exchange that answers through `exchange`, or streams through `streamed`."""

    def __init__(self, exchange: Exchange, streamed: Streamed | None = None) -> None:
        self.exchange = exchange
        self.streamed = streamed

    async def request(self, request: ModelRequest, transport: object) -> ModelResponse:
        return await self.exchange(request)

    async def stream(
        self, request: ModelRequest, transport: object, sink: object, opened: OnOpen
    ) -> ModelResponse:
        assert self.streamed is not None, "this test does not stream"
        return await self.streamed(request, opened)


def runner(
    exchange: Exchange,
    pacer: RequestPacer | None = None,
    policy: RetryPolicy | None = None,
    streamed: Streamed | None = None,
) -> Runner:
    return Runner(
        "test:model",
        StandIn(exchange, streamed),
        lambda sent: NO_TRANSPORT,
        system="test",
        pacer=pacer or RequestPacer(),
        retry_policy=policy or RetryPolicy(),
        secrets=(KEY,),
    )


class NoTransport:
    """The stand-in exchanges send nothing: a transport they never use."""

    async def post(self, wire: object, time_limit: float) -> object:
        raise AssertionError("unused")

    async def open_stream(self, wire: object, time_limit: float) -> object:
        raise AssertionError("unused")


NO_TRANSPORT: Any = NoTransport()


# --- the runner alone


async def test_an_answer_is_returned_and_its_rate_limit_paces_what_follows() -> None:
    pacer, _ = fake_pacer()
    empty = RateLimitInfo(limit_requests=1, remaining_requests=0, reset_requests=0.5)
    answer = ModelResponse(text="ok", rate_limit=empty)
    calls: list[ModelRequest] = []
    assert await runner(answering(answer, calls), pacer).request(request()) == replace(
        answer, origin="test:model"
    )
    assert len(calls) == 1
    assert not pacer.idle
    assert pacer.interval == pytest.approx(0.5)


async def test_a_rate_limit_opens_the_window_no_longer_than_the_policy_waits() -> None:
    pacer, clock = fake_pacer()
    asked_a_day = throttled(retry_after=86400.0, limit_reached=True)
    calls: list[ModelRequest] = []
    policy = RetryPolicy(max_retry_after=2.0)
    with pytest.raises(ThrottleError) as info:
        await runner(answering(asked_a_day, calls), pacer, policy).request(request())
    assert info.value is asked_a_day  # raised as it came: the loop decides on retries
    await pacer.acquire()
    assert clock.now == pytest.approx(100.0 + 2.0)


async def test_a_rate_limit_no_answer_confirms_holds_only_its_own_request() -> None:
    pacer, clock = fake_pacer()
    stray = throttled(retry_after=5.0)  # neither a header at 0 nor a body naming a limit
    with pytest.raises(ThrottleError):
        await runner(answering(stray, []), pacer).request(request())
    assert pacer.idle
    await pacer.acquire()
    assert clock.slept == []  # the next request goes at once


@pytest.mark.parametrize("kind", ["overloaded", "timeout", "quota_exhausted"])
async def test_other_throttles_leave_the_window_shut(kind: str) -> None:
    pacer, _ = fake_pacer()
    error = throttled(kind, retry_after=5.0)  # type: ignore[arg-type]
    with pytest.raises(ThrottleError):
        await runner(answering(error, []), pacer).request(request())
    assert pacer.idle


async def test_a_translator_bug_is_a_response_error_with_its_cause() -> None:
    bug = KeyError("choices")
    with pytest.raises(PromptEvaluationError) as info:
        await runner(answering(bug, [])).request(request())
    assert type(info.value) is PromptEvaluationError
    assert info.value.phase == "response"
    assert info.value.prompt_name == "greet"
    assert "KeyError" in str(info.value)
    assert info.value.__cause__ is bug


async def test_a_wink_error_passes_through_untouched() -> None:
    refused = PromptEvaluationError("HTTP 400", prompt_name="greet", phase="request")
    with pytest.raises(PromptEvaluationError) as info:
        await runner(answering(refused, [])).request(request())
    assert info.value is refused


async def test_a_window_that_outlasts_the_deadline_is_refused_unsent() -> None:
    pacer, clock = fake_pacer()
    await throttle(pacer, clock, 10.0)
    calls: list[ModelRequest] = []
    with pytest.raises(DeadlineExceededError, match="outlasts the deadline"):
        await runner(answering(ModelResponse(text="ok"), calls), pacer).request(
            request(Deadline(1.0))
        )
    assert calls == []
    assert clock.slept == []


async def test_the_deadline_bounds_the_whole_exchange() -> None:
    async def slow(sent: ModelRequest) -> ModelResponse:
        await asyncio.sleep(30)
        return ModelResponse(text="late")  # pragma: no cover - cut first

    with pytest.raises(DeadlineExceededError, match="waiting for the provider's answer"):
        await runner(slow).request(request(Deadline(0.05)))


async def test_a_timeout_of_the_exchange_itself_is_not_the_deadline() -> None:
    """A `TimeoutError` the exchange raises is its own bug, not the deadline passing."""
    with pytest.raises(PromptEvaluationError) as info:
        await runner(answering(TimeoutError("socket"), [])).request(request(Deadline(30.0)))
    assert not isinstance(info.value, DeadlineExceededError)
    assert info.value.phase == "response"


class CountingPacer(RequestPacer):
    """A pacer that counts the answers it is told of."""

    answers = 0

    async def on_response(self, permit: Permit, info: RateLimitInfo | None) -> None:
        self.answers += 1
        await super().on_response(permit, info)


async def test_a_stream_is_reported_to_the_pacer_at_its_head_and_only_then() -> None:
    # a cold pacer lets one request out; the second goes as soon as the first stream's
    # head is in, not when its body ends
    pacer = CountingPacer(initial_window=1)
    body_may_end = asyncio.Event()
    opened_streams = 0

    async def streamed(sent: ModelRequest, opened: OnOpen) -> ModelResponse:
        nonlocal opened_streams
        await opened(None)  # the response head
        opened_streams += 1
        await body_may_end.wait()  # the body
        return ModelResponse(text="ok")

    streaming = runner(answering(ModelResponse(text="ok"), []), pacer, None, streamed)
    sink: Any = None  # the stand-in exchange sends no events
    tasks = [asyncio.create_task(streaming.stream(request(), sink)) for _ in range(2)]
    await settle()
    assert opened_streams == 2  # both open while the first body is still streaming
    assert pacer.answers == 2
    body_may_end.set()
    assert [(await task).text for task in tasks] == ["ok", "ok"]
    assert pacer.answers == 2  # told once each, at the head: not again at the end


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_the_runner_is_named_and_redacts_its_adapters_secrets() -> None:
    calls: list[ModelRequest] = []
    plain = runner(answering(ModelResponse(text="ok"), calls))
    assert plain.name == "test:model"
    cleaned = plain.redact({"error": {"message": f"bad key {KEY}"}, "status": 401})
    assert cleaned == {"error": {"message": "bad key [redacted]"}, "status": 401}


# --- through adapters


def test_unexpected_exceptions_become_wink_errors() -> None:
    adapter = ScriptedAdapter([ZeroDivisionError("bug in a translator")])
    with pytest.raises(PromptEvaluationError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def _trickling_server(body: bytes, started: threading.Event, sent_all: threading.Event) -> int:
    """A server that sends a valid answer one byte every 20 ms."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            )
            connection.sendall(head.encode())
            started.set()
            try:
                for index in range(len(body)):
                    connection.sendall(body[index : index + 1])
                    threading.Event().wait(0.02)
            except OSError:  # the client hung up: what the deadline should cause
                return
            sent_all.set()
        listener.close()

    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()[1]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_body_trickling_past_the_deadline_is_cut_at_the_deadline(mode: str) -> None:
    body = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4.1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "x" * 200},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()  # ~350 bytes: ~7 s at 20 ms a byte
    started, sent_all = threading.Event(), threading.Event()
    port = _trickling_server(body, started, sent_all)
    adapter = create_adapter(
        "openai:gpt-4.1", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=30
    )
    deadline = Deadline(0.5)

    def evaluate() -> object:
        if mode == "sync":
            return adapter.evaluate(HELLO, session=Session(), deadline=deadline)
        return asyncio.run(adapter.evaluate_async(HELLO, session=Session(), deadline=deadline))

    with pytest.raises(DeadlineExceededError):
        evaluate()
    assert started.is_set()
    assert not sent_all.is_set()  # it returned while the body was still arriving
    adapter.close()


def test_a_huge_retry_after_holds_the_adapter_no_longer_than_the_policy_cap(
    ok_emulator: ProviderEmulator,
) -> None:
    policy = RetryPolicy(max_attempts=1, max_retry_after=0.2)
    adapter = make_adapter("openai", ok_emulator, retry_policy=policy)
    ok_emulator.inject(Fault.rate_limit(retry_after=86400))
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(HELLO, session=Session())
    assert info.value.details.retry_after_seconds == 86400  # what the provider asked
    # The next evaluation waits out the capped window, not a day; with a deadline of 5 s
    # it is not refused at once as "outlasts the deadline".
    response = adapter.evaluate(HELLO, session=Session(), deadline=Deadline(5))
    assert response.text == "ok"
    adapter.close()


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
async def test_a_burst_of_streams_all_opens_before_the_first_one_ends(
    provider: str, provider_emulator_factory: Callable[..., ProviderEmulator]
) -> None:
    # 12 streams at once on a cold adapter (4 out, one more per success): each head
    # counts as a success, so all 12 are sent within a few round trips, while each body
    # takes half a second
    emu = provider_emulator_factory(
        default_turn=Turn.text("x" * 40), stream_chunk_size=4, stream_chunk_delay=0.05
    )
    adapter = make_adapter(provider, emu)
    ended: list[float] = []

    async def one() -> None:
        async with adapter.stream_async(HELLO, session=Session()) as stream:
            async for _ in stream:
                pass
        ended.append(time.time())

    await asyncio.gather(*(one() for _ in range(12)))
    await adapter.aclose()
    arrivals = [recorded.received_at for recorded in emu.requests]
    assert len(arrivals) == 12
    assert max(arrivals) < min(ended)
