"""A streamed event reaches the caller as soon as its piece of the body arrives.

A local server sends one Chat Completions chunk, then holds the rest of the body until
the test has seen the first `TextDelta` (or until a safety timeout). If wink waited for
more of the body before yielding (a buffered read, a sync client read ahead of the
caller), the caller would only get the delta after the timeout released the server, and
the recorded order says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.adapters import KEY, NO_RETRY
from tests.helpers.prompts import make_prompt
from wink import Session, TextDelta, create_adapter

_SAFETY = 10.0  # seconds the server waits at most before sending the rest anyway


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-gated",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class GatedServer:
    """Sends the first chunk, waits for `release`, then the rest; records the order."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.order: list[str] = []
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                self.wfile.write(_chunk({"role": "assistant", "content": "first"}))
                self.wfile.flush()
                if not gate.release.wait(_SAFETY):
                    gate.order.append("timed out")
                self.wfile.write(_chunk({"content": " second"}))
                self.wfile.write(_chunk({}, finish="stop"))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def first_delta_seen(self) -> None:
        self.order.append("first delta")
        self.release.set()


@pytest.fixture
def gated() -> Iterator[GatedServer]:
    server = GatedServer()
    server.thread.start()
    yield server
    server.release.set()
    server.server.shutdown()
    server.server.server_close()


def test_a_sync_stream_yields_each_piece_as_it_arrives(gated: GatedServer) -> None:
    adapter = create_adapter(
        "openai:gpt-4.1", base_url=gated.base_url, api_key=KEY, retry_policy=NO_RETRY
    )
    texts: list[str] = []
    with adapter.stream(make_prompt(), session=Session()) as stream:
        for event in stream:
            if isinstance(event, TextDelta):
                if not texts:
                    gated.first_delta_seen()
                texts.append(event.text)
    assert gated.order == ["first delta"]
    assert "".join(texts) == "first second"
    adapter.close()


async def test_an_async_stream_yields_each_piece_as_it_arrives(gated: GatedServer) -> None:
    adapter = create_adapter(
        "openai:gpt-4.1", base_url=gated.base_url, api_key=KEY, retry_policy=NO_RETRY
    )
    texts: list[str] = []
    async with adapter.stream_async(make_prompt(), session=Session()) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                if not texts:
                    gated.first_delta_seen()
                texts.append(event.text)
    assert gated.order == ["first delta"]
    assert "".join(texts) == "first second"
    await adapter.aclose()
