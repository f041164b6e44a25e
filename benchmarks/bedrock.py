"""Bedrock: wink's Converse loop and stream against hand-written ones, each request
signed with botocore's `SigV4Auth` and sent with httpx2 (what a careful user writes
without boto3), on the same emulator in the same run.

The tool loop sends the tool's schema, reads the `toolUse`, runs the tool, sends the
`toolResult` and reads the final text; the stream reads ConverseStream's event-stream
frames with botocore's `EventStreamBuffer` and joins the text deltas.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx2 as httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import EventStreamBuffer

from wink import MarkdownSection, Prompt, Session, TextDelta, create_adapter

from . import raw
from ._common import Row, emulator, interleave, row
from .loops import _per_loop  # pyright: ignore[reportPrivateUsage]

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
REGION = "us-east-1"
_ACCESS, _SECRET = "AKIAWINKBENCH0000000", "wink-bench-secret-key-0000000000000000"
_CREDENTIALS = Credentials(_ACCESS, _SECRET)
_TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "lookup",
                "description": "Look up a key",
                "inputSchema": {"json": raw.SCHEMA},
            }
        }
    ]
}
_JSON = {"content-type": "application/json"}
_STREAM_PROMPT = Prompt(
    name="bench",
    sections=[MarkdownSection(key="task", title="Task", template="Write the text.")],
)


def bedrock(loops: int, repeat: int, warmup: int, events: int) -> list[Row]:
    """The tool loop (sync and async) and one stream of `events` deltas (async)."""
    os.environ.update(
        {"AWS_ACCESS_KEY_ID": _ACCESS, "AWS_SECRET_ACCESS_KEY": _SECRET, "AWS_REGION": REGION}
    )
    os.environ.pop("AWS_BEARER_TOKEN_BEDROCK", None)
    rows: list[Row] = []
    runner = asyncio.Runner()
    try:
        with emulator("--shape", "loop") as server:
            rows += _loops(runner, server.base_url("bedrock"), loops, repeat, warmup)
        with emulator("--shape", "stream", "--chunks", str(events), "--chunk-size", "8") as server:
            rows += _streams(runner, server.base_url("bedrock"), repeat, warmup, events)
    finally:
        runner.close()
    return rows


# --- the hand-written side


def _url(base_url: str, operation: str) -> str:
    return f"{base_url}/model/{quote(MODEL, safe='')}/{operation}"


def _signed(url: str, body: bytes) -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(_JSON))
    SigV4Auth(_CREDENTIALS, "bedrock", REGION).add_auth(request)
    return dict(request.headers.items())


def _first_body() -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"text": raw.TASK}]}], "toolConfig": _TOOLS}


def _follow_up(body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    message = answer["output"]["message"]
    results = [
        {
            "toolResult": {
                "toolUseId": block["toolUse"]["toolUseId"],
                "content": [{"text": raw.run_tool(block["toolUse"]["input"])}],
            }
        }
        for block in message["content"]
        if "toolUse" in block
    ]
    return {**body, "messages": [*body["messages"], message, {"role": "user", "content": results}]}


def _final_text(answer: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in answer["output"]["message"]["content"])


def hand_sync(client: httpx.Client, base_url: str) -> str:
    url = _url(base_url, "converse")
    body = _first_body()
    content = json.dumps(body).encode()
    first = client.post(url, content=content, headers=_signed(url, content)).json()
    content = json.dumps(_follow_up(body, first)).encode()
    final = client.post(url, content=content, headers=_signed(url, content)).json()
    return _final_text(final)


async def hand_async(client: httpx.AsyncClient, base_url: str) -> str:
    url = _url(base_url, "converse")
    body = _first_body()
    content = json.dumps(body).encode()
    first = (await client.post(url, content=content, headers=_signed(url, content))).json()
    content = json.dumps(_follow_up(body, first)).encode()
    final = (await client.post(url, content=content, headers=_signed(url, content))).json()
    return _final_text(final)


async def hand_stream(client: httpx.AsyncClient, base_url: str) -> str:
    url = _url(base_url, "converse-stream")
    body = {"messages": [{"role": "user", "content": [{"text": "## Task\n\nWrite the text."}]}]}
    content = json.dumps(body).encode()
    headers = {**_signed(url, content), "accept": "application/vnd.amazon.eventstream"}
    parts: list[str] = []
    frames = EventStreamBuffer()
    async with client.stream("POST", url, content=content, headers=headers) as response:
        async for piece in response.aiter_bytes():
            frames.add_data(piece)
            for message in frames:
                if message.headers.get(":event-type") == "contentBlockDelta":
                    parts.append(json.loads(message.payload)["delta"].get("text", ""))
    return "".join(parts)


# --- wink


async def wink_stream(adapter: Any) -> str:
    parts: list[str] = []
    async with adapter.stream_async(_STREAM_PROMPT, session=Session()) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
    return "".join(parts)


def _adapter(base_url: str) -> Any:
    return create_adapter(f"bedrock:{MODEL}", base_url=base_url, region=REGION)


async def _async_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=60)


def _loops(
    runner: asyncio.Runner, base_url: str, loops: int, repeat: int, warmup: int
) -> list[Row]:
    adapter = _adapter(base_url)
    sync_client = httpx.Client(timeout=60)
    async_client = runner.run(_async_client())
    assert hand_sync(sync_client, base_url) == adapter.evaluate(raw.PROMPT).text

    def sync_hand(count: int) -> None:
        for _ in range(count):
            hand_sync(sync_client, base_url)

    def sync_wink(count: int) -> None:
        for _ in range(count):
            adapter.evaluate(raw.PROMPT, session=Session())

    def async_hand(count: int) -> None:
        async def batch() -> None:
            for _ in range(count):
                await hand_async(async_client, base_url)

        runner.run(batch())

    def async_wink(count: int) -> None:
        async def batch() -> None:
            for _ in range(count):
                await adapter.evaluate_async(raw.ASYNC_TOOL_PROMPT, session=Session())

        runner.run(batch())

    variants = {
        "sync hand": sync_hand,
        "sync wink": sync_wink,
        "async hand": async_hand,
        "async wink": async_wink,
    }
    for run in variants.values():
        run(warmup)
    timings = interleave(repeat, {name: _per_loop(run, loops) for name, run in variants.items()})
    rows: list[Row] = []
    for mode in ("sync", "async"):
        base = timings[f"{mode} hand"]
        rows.append(row("bedrock", f"tool loop {mode}: hand-written, SigV4", "ms/loop", base))
        rows.append(
            row(
                "bedrock",
                f"tool loop {mode}: wink",
                "ms/loop",
                timings[f"{mode} wink"],
                against=base,
                baseline=f"botocore-signed httpx2 loop, {mode}",
                target=1.15,
            )
        )
    adapter.close()
    runner.run(adapter.aclose())
    sync_client.close()
    runner.run(async_client.aclose())
    return rows


def _streams(
    runner: asyncio.Runner, base_url: str, repeat: int, warmup: int, events: int
) -> list[Row]:
    adapter = _adapter(base_url)
    client = runner.run(_async_client())
    expected = runner.run(hand_stream(client, base_url))
    assert runner.run(wink_stream(adapter)) == expected

    def timed(call: Callable[[], Any]) -> Callable[[], float]:
        def measure() -> float:
            started = time.perf_counter()
            assert runner.run(call()) == expected
            return (time.perf_counter() - started) * 1000

        return measure

    variants = {
        "hand": timed(lambda: hand_stream(client, base_url)),
        "wink": timed(lambda: wink_stream(adapter)),
    }
    for measure in variants.values():
        for _ in range(warmup):
            measure()
    timings = interleave(repeat, variants)
    runner.run(adapter.aclose())
    runner.run(client.aclose())
    what = f"stream of {events:,} text deltas, async"
    return [
        row("bedrock", f"{what}: hand-written, SigV4", "ms", timings["hand"]),
        row(
            "bedrock",
            f"{what}: wink",
            "ms",
            timings["wink"],
            against=timings["hand"],
            baseline="botocore-signed httpx2 stream read with EventStreamBuffer",
            target=1.1,
        ),
    ]
