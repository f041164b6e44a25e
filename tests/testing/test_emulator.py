"""ProviderEmulator itself: lifecycle, routing, recording, scripts, fault plans."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from wink import InvalidArgumentError
from wink.testing import (
    EmulatedRequest,
    EmulatedToolCall,
    EmulatorInternalError,
    Fault,
    ProviderEmulator,
    RecordedRequest,
    Turn,
)

CHAT = "/v1/chat/completions"
CHAT_BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def post(emu: ProviderEmulator, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
    return httpx.post(emu.url + path, json=CHAT_BODY if body is None else body, **kwargs)


def text_of(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


# --- lifecycle


def test_base_urls_and_fixed_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with ProviderEmulator(port=port) as emu:
        assert emu.port == port
        assert emu.url == f"http://127.0.0.1:{port}"
        assert emu.base_url("openai") == f"http://127.0.0.1:{port}/v1"
        assert emu.base_url("openai-responses") == f"http://127.0.0.1:{port}/v1"
        assert emu.base_url("anthropic") == emu.url
        assert emu.base_url("google") == emu.url
        with pytest.raises(ValueError, match="unknown provider"):
            emu.base_url("mistral")  # type: ignore[arg-type]
    emu.close()  # idempotent
    with pytest.raises(RuntimeError, match="not running"):
        _ = emu.port


async def test_async_with_and_keep_alive() -> None:
    emulator = ProviderEmulator(default_turn=Turn.text("hi"))
    async with emulator as emu, httpx.AsyncClient(base_url=emu.url) as client:
        replies = await asyncio.gather(*(client.post(CHAT, json=CHAT_BODY) for _ in range(20)))
    assert {reply.status_code for reply in replies} == {200}
    assert emu.stats.requests == 20


def test_concurrent_requests_take_each_turn_exactly_once() -> None:
    turns = [Turn.text(f"turn {index}") for index in range(60)]

    async def burst(url: str) -> list[str]:
        async with httpx.AsyncClient(base_url=url) as client:
            replies = await asyncio.gather(*(client.post(CHAT, json=CHAT_BODY) for _ in turns))
        return [text_of(reply) for reply in replies]

    with ProviderEmulator(turns) as emu:
        texts = asyncio.run(burst(emu.url))
        assert emu.pending == 0
    assert sorted(texts) == sorted(turn.content or "" for turn in turns)


def test_connection_close_is_honoured(emu: ProviderEmulator) -> None:
    emu.enqueue(Turn.text("bye"))
    response = post(emu, CHAT, headers={"connection": "close"})
    assert response.headers["connection"] == "close"
    assert text_of(response) == "bye"


# --- routing and request validation


@pytest.mark.parametrize(
    ("method", "path", "headers", "expected"),
    [
        (
            "POST",
            "/v1/embeddings",
            {},
            {
                "error": {
                    "message": "Invalid URL (POST /v1/embeddings)",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        ),
        (
            "GET",
            CHAT,
            {},
            {
                "error": {
                    "message": f"Invalid URL (GET {CHAT})",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        ),
        (
            "POST",
            "/v1/complete",
            {"anthropic-version": "2023-06-01"},
            {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}},
        ),
    ],
)
def test_unknown_routes_are_404_in_a_plausible_shape(
    emu: ProviderEmulator, method: str, path: str, headers: dict[str, str], expected: Any
) -> None:
    response = httpx.request(method, emu.url + path, headers=headers, json={})
    assert response.status_code == 404
    body = response.json()
    body.pop("request_id", None)
    assert body == expected
    assert emu.requests[-1].provider in (None, "openai")


def test_unknown_google_method_is_not_found(emu: ProviderEmulator) -> None:
    response = post(emu, "/v1beta/models/gemini-2.5-flash:embedContent", {"contents": []})
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (CHAT, {"model": "m"}, "Missing required parameter: 'messages'."),
        ("/v1/messages", {"model": "m", "messages": []}, "max_tokens: Field required"),
        ("/v1beta/models/g:streamGenerateContent", {"contents": []}, "only the SSE form"),
        ("/v1/models/g:generateContent", {}, "contents is not specified"),
    ],
)
def test_invalid_requests_are_400_and_keep_the_turn(
    emu: ProviderEmulator, path: str, body: Any, message: str
) -> None:
    emu.enqueue(Turn.text("kept"))
    response = post(emu, path, body)
    assert response.status_code == 400
    assert message in response.text
    assert emu.pending == 1


def test_non_json_request_body(emu: ProviderEmulator) -> None:
    response = httpx.post(emu.url + CHAT, content=b"{not json", headers={"x-api-key": "s"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "We could not parse the JSON body of your request."
    )
    assert emu.requests[-1].body == "{not json"


# --- recording


def test_requests_are_recorded_with_secrets_redacted(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.text("a"), Turn.text("b"))
    openai_client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )
    post(emu, CHAT, headers={"X-Api-Key": "s1", "Cookie": "c=1", "api-key": "s2", "X-Trace": "t"})
    first, second = emu.requests
    assert isinstance(first, RecordedRequest)
    assert (first.number, first.provider, first.method, first.path) == (1, "openai", "POST", CHAT)
    assert first.body["messages"] == [{"role": "user", "content": "hi"}]
    assert first.headers["authorization"] == "[redacted]"
    assert first.headers["x-stainless-retry-count"] == "0"
    assert abs(first.received_at - time.time()) < 5
    assert {second.headers[name] for name in ("x-api-key", "cookie", "api-key")} == {"[redacted]"}
    assert second.headers["x-trace"] == "t"
    assert "sk-test" not in repr(emu.requests)
    emu.clear()
    assert emu.requests == []
    assert emu.stats.requests == 0


# --- scripts


def test_exhausted_script_is_a_clear_400(emu: ProviderEmulator) -> None:
    response = post(emu, CHAT)
    assert response.status_code == 400
    assert "script is exhausted (request #1)" in response.json()["error"]["message"]


def test_default_turn_answers_when_the_queue_is_empty() -> None:
    with ProviderEmulator([Turn.text("first")], default_turn=Turn.text("again")) as emu:
        assert [text_of(post(emu, CHAT)) for _ in range(3)] == ["first", "again", "again"]


def test_faults_in_the_queue_are_answered_in_order(emu: ProviderEmulator) -> None:
    emu.enqueue(Fault.server_error(502), Fault.latency(0.05), Turn.text("ok"))
    assert post(emu, CHAT).status_code == 502
    assert text_of(post(emu, CHAT)) == "ok"


def test_script_callable_sees_a_neutral_request(emu: ProviderEmulator) -> None:
    seen: list[EmulatedRequest] = []

    def script(request: EmulatedRequest) -> Turn | Fault | None:
        seen.append(request)
        if request.tool_results:
            return Turn.text(f"{len(request.tool_results)} results")
        return Turn.tool_calls(EmulatedToolCall(request.tools[0], {}))

    emu.set_script(script)
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    first = post(
        emu, "/v1/messages", {"model": "claude-x", "max_tokens": 5, "messages": [], "tools": tools}
    )
    assert first.json()["content"][0]["name"] == "get_weather"
    request = seen[0]
    assert (request.number, request.provider, request.model) == (1, "anthropic", "claude-x")
    assert request.path == "/v1/messages"
    assert request.tools == ("get_weather",)
    assert request.headers["content-type"] == "application/json"


def test_queue_goes_before_the_callable_whose_exception_is_an_internal_error(
    emu: ProviderEmulator,
) -> None:
    def script(request: EmulatedRequest) -> Turn:
        raise RuntimeError("boom")

    emu.set_script(script)
    emu.enqueue(Turn.text("queued"))
    assert text_of(post(emu, CHAT)) == "queued"
    failed = post(emu, CHAT)
    assert failed.status_code == 418  # a script bug is no provider fault: nothing retries it
    assert failed.headers["x-wink-emulator-error"] == "script"
    assert "script callable failed on request #2" in failed.json()["error"]["message"]
    assert "RuntimeError('boom')" in failed.json()["error"]["message"]
    with pytest.raises(EmulatorInternalError, match="boom"):
        emu.check()


OPENAI_HISTORY = [
    {"role": "user", "content": "Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "no station"},
]
RESPONSES_INPUT = [
    {"type": "function_call", "call_id": "call_L", "name": "get_location", "arguments": "{}"},
    {
        "type": "function_call_output",
        "call_id": "call_L",
        "output": "Wrong location.\n\nFix the errors and try again.",
    },
]
ANTHROPIC_HISTORY = [
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "stock_lookup", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "search", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "2 validation errors",
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": [{"type": "text", "text": "found"}],
                "is_error": False,
            },
        ],
    },
]
GOOGLE_CONTENTS = [  # a conversation the real API takes: two calls, two responses
    {"role": "user", "parts": [{"text": "Capitals?"}]},
    {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "get_capital", "args": {}}},
            {"functionCall": {"name": "get_capital", "id": "c2", "args": {}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_capital", "response": {"error": "not supported"}}},
            {
                "functionResponse": {
                    "name": "get_capital",
                    "id": "c2",
                    "response": {"output": "Paris"},
                }
            },
        ],
    },
]


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        (
            CHAT,
            {"model": "m", "messages": OPENAI_HISTORY},
            [("call_1", "get_weather", "no station", None)],
        ),
        (
            "/v1/responses",
            {"model": "m", "input": RESPONSES_INPUT},
            [("call_L", "get_location", "Wrong location.\n\nFix the errors and try again.", None)],
        ),
        (
            "/v1/messages",
            {"model": "m", "max_tokens": 5, "messages": ANTHROPIC_HISTORY},
            [
                ("toolu_1", "stock_lookup", "2 validation errors", True),
                ("toolu_2", "search", "found", False),
            ],
        ),
        (
            "/v1beta/models/g:generateContent",
            {"contents": GOOGLE_CONTENTS},
            [(None, "get_capital", "not supported", True), ("c2", "get_capital", "Paris", False)],
        ),
    ],
)
def test_tool_results_view_per_provider(
    emu: ProviderEmulator, path: str, body: Any, expected: list[tuple[Any, ...]]
) -> None:
    seen: list[EmulatedRequest] = []
    emu.set_script(lambda request: seen.append(request) or Turn.text("ok"))
    assert post(emu, path, body).status_code == 200
    views = seen[0].tool_results
    assert [(v.call_id, v.name, v.text, v.is_error) for v in views] == expected


# --- fault plans


def test_inject_applies_to_the_next_n_requests_without_using_turns(emu: ProviderEmulator) -> None:
    emu.enqueue(Turn.text("after"))
    emu.inject(Fault.server_error(503), times=2)
    emu.inject(Fault.unauthorized())
    statuses = [post(emu, CHAT).status_code for _ in range(3)]
    assert statuses == [503, 503, 401]
    assert text_of(post(emu, CHAT)) == "after"


def test_schedule_counts_from_now(emu: ProviderEmulator) -> None:
    emu.enqueue(Turn.text("one"), Turn.text("two"))
    post(emu, "/nowhere")
    emu.schedule({2: Fault.server_error(), 3: Fault.rate_limit()})
    replies = [post(emu, CHAT) for _ in range(4)]
    assert [reply.status_code for reply in replies] == [200, 500, 429, 200]
    assert [text_of(replies[0]), text_of(replies[3])] == ["one", "two"]
    assert emu.stats.responses == {200: 2, 404: 1, 429: 1, 500: 1}


def test_schedule_from_the_constructor_and_latency_everywhere() -> None:
    with ProviderEmulator(
        default_turn=Turn.text("x"), schedule={1: Fault.overloaded()}, latency=0.1
    ) as emu:
        start = time.perf_counter()
        assert (
            post(emu, "/v1/messages", {"model": "m", "max_tokens": 1, "messages": []}).status_code
            == 529
        )
        assert post(emu, CHAT).status_code == 200
        assert time.perf_counter() - start >= 0.2


def test_http_fault_sends_anything(emu: ProviderEmulator) -> None:
    emu.inject(Fault.http(418, "<teapot/>", {"X-Extra": "1"}))
    response = post(emu, CHAT)
    assert (response.status_code, response.text) == (418, "<teapot/>")
    assert response.headers["x-extra"] == "1"


def test_reset_forgets_script_and_plans(emu: ProviderEmulator) -> None:
    emu.enqueue(Turn.text("x"))
    emu.inject(Fault.server_error())
    emu.schedule({1: Fault.server_error()})
    emu.reset()
    assert emu.pending == 0
    assert "exhausted" in post(emu, CHAT).text


def test_hang_is_cut_short_by_close() -> None:
    emu = ProviderEmulator(schedule={1: Fault.hang(30)}).start()
    errors: list[BaseException] = []

    async def call() -> None:
        try:
            async with httpx.AsyncClient(timeout=10) as client:
                await client.post(emu.url + CHAT, json=CHAT_BODY)
        except httpx.HTTPError as exc:
            errors.append(exc)

    async def main() -> None:
        task = asyncio.create_task(call())
        waited = time.perf_counter()
        while emu.stats.hung == 0:  # the request is in and hanging (a loaded machine is slow)
            assert time.perf_counter() - waited < 10, "the request never reached the emulator"
            await asyncio.sleep(0.01)
        start = time.perf_counter()
        await asyncio.to_thread(emu.close)
        await task
        assert time.perf_counter() - start < 2

    asyncio.run(main())
    assert len(errors) == 1
    assert emu.stats.hung == 1


@pytest.mark.parametrize("invalid", [lambda: Fault.server_error(404), lambda: Fault.latency(-1)])
def test_invalid_fault_arguments(invalid: Callable[[], Fault]) -> None:
    with pytest.raises(ValueError):
        invalid()


def test_script_items_are_checked() -> None:
    with pytest.raises(InvalidArgumentError, match="Turn and Fault"):
        ProviderEmulator(["It is sunny."])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError, match=r"a list of Turn and Fault .*, got a str"):
        ProviderEmulator("It is sunny.")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="got a Turn"):
        ProviderEmulator(Turn.text("It is sunny."))  # type: ignore[arg-type]
