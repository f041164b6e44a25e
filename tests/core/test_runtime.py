"""The sync/async model (`wink.core.runtime`, `wink.core.clients`, `wink.core.runner`),
exercised through real adapters and SDKs against local servers."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import threading
import traceback
import warnings
from dataclasses import dataclass

import pytest

from tests.helpers.adapters import KEY, make_adapter
from tests.helpers.prompts import HELLO
from wink import (
    Deadline,
    DeadlineExceededError,
    MarkdownSection,
    Prompt,
    RetryPolicy,
    Session,
    ThrottleError,
    Tool,
    ToolContext,
    ToolResult,
    create_adapter,
)
from wink.core.runtime import in_sync_call, run_sync
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn

# --- which task may block


def test_only_the_task_of_a_sync_call_may_block() -> None:
    async def probe() -> tuple[bool, list[bool]]:
        children = await asyncio.gather(*(asyncio.to_thread(in_sync_call) for _ in range(2)))
        spawned = await asyncio.gather(*(_in_task() for _ in range(3)))
        return in_sync_call(), [*children, *spawned]

    main, others = run_sync(probe())
    assert main is True
    assert others == [False] * 5  # no permission leaks into tasks or threads it starts
    assert in_sync_call() is False


async def _in_task() -> bool:
    return in_sync_call()


@dataclass(frozen=True)
class Fan:
    count: int


def test_sub_evaluations_gathered_in_a_tool_run_concurrently_under_evaluate(
    ok_emulator: ProviderEmulator,
) -> None:
    """An async tool that gathers evaluations gets async clients, so they overlap."""
    adapter = make_adapter("openai", ok_emulator)
    inner_flags: list[bool] = []

    async def fan_out(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        async def one() -> str | None:
            inner_flags.append(in_sync_call())
            return (await adapter.evaluate_async(HELLO, session=Session())).text

        answers = await asyncio.gather(*(one() for _ in range(params.count)))
        return ToolResult.ok(",".join(a or "" for a in answers))

    ok_emulator.set_script(
        [
            Turn.tool_calls(EmulatedToolCall("fan_out", {"count": 4})),
            *[Turn.text("sub")] * 4,
            Turn.text("done"),
        ]
    )
    prompt = Prompt(
        name="fan",
        sections=[
            MarkdownSection(
                key="t",
                title="T",
                template="Fan out.",
                tools=[Tool(name="fan_out", description="Fan out", handler=fan_out)],
            )
        ],
    )
    assert adapter.evaluate(prompt, session=Session()).text == "done"
    assert inner_flags == [False] * 4
    adapter.close()


# --- nothing left open


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_thread_per_call_leaves_no_loop_or_socket_behind(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    adapter.evaluate(HELLO, session=Session())  # warm: the one sync client and its pool
    gc.collect()
    before = _open_fds()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        for _ in range(40):
            thread = threading.Thread(target=lambda: adapter.evaluate(HELLO, session=Session()))
            thread.start()
            thread.join()
        gc.collect()
    assert _open_fds() <= before + 2  # was ~40 descriptors per 200 calls
    adapter.close()


def test_evaluate_inside_a_running_loop_closes_what_it_opened(
    ok_emulator: ProviderEmulator,
) -> None:
    adapter = create_adapter(
        "anthropic:claude-sonnet-4-6", base_url=ok_emulator.base_url("anthropic"), api_key=KEY
    )

    async def notebook_cell() -> str | None:
        return adapter.evaluate(HELLO, session=Session()).text  # Jupyter-style call

    assert asyncio.run(notebook_cell()) == "ok"
    assert adapter._clients.open_clients == 1  # the sync client only: no loop-bound one
    adapter.close()
    assert adapter._clients.open_clients == 0


# --- clean tracebacks


def test_a_sync_failure_has_a_clean_traceback(ok_emulator: ProviderEmulator) -> None:
    adapter = make_adapter("openai", ok_emulator)
    ok_emulator.inject(Fault.rate_limit(retry_after=0.01))
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(HELLO, session=Session())
    text = "".join(traceback.format_exception(info.value))
    assert "no running event loop" not in text
    assert "During handling of the above exception" not in text
    adapter.close()


# --- the deadline bounds the whole request


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


# --- one bad retry-after does not hold the adapter


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
