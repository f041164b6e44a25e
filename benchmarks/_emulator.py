"""The emulator as a benchmark server: `python -m benchmarks._emulator --shape loop`.

Shapes: `loop` (a tool call, then a final answer once the request carries a tool result),
`heavy` (rounds of 4 parallel tool calls until 200 results, then a final answer), `text`
(a final answer at once), `stream` (a final answer of `--chunks` pieces of
`--chunk-size` characters; streamed one piece per event when the request streams,
`--chunk-delay` seconds apart), `json-stream` (the same, the answer an 18 KB JSON
document: `structured_answer()`). `--stray-429 SHARE` answers that share of the requests,
at random (seeded), with a 429 asking for `--stray-retry-after` seconds, with no rate
limit behind it. `GET /__stats` answers the emulator's counters as JSON and
`POST /__reset` clears them (the rate limiter's bucket refills on its own).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable

from pydantic import BaseModel

from wink.testing import (
    EmulatedRequest,
    EmulatedToolCall,
    Fault,
    ProviderEmulator,
    RateLimit,
    Turn,
)
from wink.testing.server import RawRequest, Reply, serve_forever

HEAVY_ROUNDS, HEAVY_WIDTH = 50, 4


def streamed_text(chunks: int, chunk_size: int) -> str:
    """`chunks` pieces of `chunk_size` characters, each different (no run compresses)."""
    piece = "abcdefghijklmnopqrstuvwxyz0123456789 " * (chunk_size // 37 + 1)
    return "".join(piece[index % 37 : index % 37 + chunk_size] for index in range(chunks))


class Item(BaseModel):
    name: str
    note: str
    score: int


class Report(BaseModel):
    """The output type `structured_answer()` validates as."""

    items: list[Item]


def structured_answer(size: int = 18_000) -> str:
    """A JSON answer of about `size` characters: `{"items": [{"name", "note", "score"}]}`
    (strings, numbers and objects, each different), a `Report`."""
    items: list[dict[str, object]] = []
    while len(json.dumps({"items": items})) < size:
        number = len(items)
        note = streamed_text(10, 8)[number % 37 :]
        items.append({"name": f"item {number}", "note": note, "score": number * 7 % 101})
    return json.dumps({"items": items})


def script_for(
    shape: str, chunks: int = 2000, chunk_size: int = 8
) -> Callable[[EmulatedRequest], Turn]:
    def loop(request: EmulatedRequest) -> Turn:
        if request.tool_results:
            return Turn.text("The value is aa.", input_tokens=40, output_tokens=6)
        return Turn.tool_calls(
            EmulatedToolCall("lookup", {"key": "a"}), input_tokens=30, output_tokens=12
        )

    def heavy(request: EmulatedRequest) -> Turn:
        done = len(request.tool_results)
        if done >= HEAVY_ROUNDS * HEAVY_WIDTH:
            return Turn.text("All looked up.")
        calls = [
            EmulatedToolCall("lookup", {"key": f"r{done // HEAVY_WIDTH}-{index}"})
            for index in range(HEAVY_WIDTH)
        ]
        return Turn.tool_calls(*calls)

    def text(request: EmulatedRequest) -> Turn:
        return Turn.text("Hello.", input_tokens=8, output_tokens=2)

    answer = Turn.text(streamed_text(chunks, chunk_size), input_tokens=8, output_tokens=chunks)

    def stream(request: EmulatedRequest) -> Turn:
        return answer

    structured = Turn.text(structured_answer(), input_tokens=8, output_tokens=chunks)

    def json_stream(request: EmulatedRequest) -> Turn:
        return structured

    shapes = {"loop": loop, "heavy": heavy, "text": text, "stream": stream}
    return {**shapes, "json-stream": json_stream}[shape]


def with_stray_429s(
    script: Callable[[EmulatedRequest], Turn], share: float, retry_after: float
) -> Callable[[EmulatedRequest], Turn | Fault]:
    """`script`, but `share` of the requests (at random, seeded) get a 429 instead: the
    one OpenAI sends when its capacity runs short, with no limit of the account behind it
    (no rate-limit header, no limit named: `Fault.rate_limit` would claim one)."""
    dice = random.Random(20)
    overloaded = {
        "message": "That model is currently overloaded with other requests. You can retry "
        "your request, or contact us through our help center at help.openai.com if the "
        "error persists.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    refusal = Fault.http(429, {"error": overloaded}, {"retry-after": f"{retry_after:g}"})

    def answer(request: EmulatedRequest) -> Turn | Fault:
        return refusal if dice.random() < share else script(request)

    return answer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--shape", choices=["loop", "heavy", "text", "stream", "json-stream"], default="loop"
    )
    parser.add_argument("--chunks", type=int, default=2000, help="stream shape: events")
    parser.add_argument("--chunk-size", type=int, default=8, help="stream shape: characters")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="stream shape: seconds")
    parser.add_argument("--stray-429", type=float, default=0.0, help="share refused at random")
    parser.add_argument("--stray-retry-after", type=float, default=0.05)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rate", type=float, default=0.0, help="requests/s; 0 = no limit")
    parser.add_argument("--burst", type=int, default=1)
    parser.add_argument(
        "--no-rate-headers", action="store_true", help="a 429 says only retry-after"
    )
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    script: Callable[[EmulatedRequest], Turn | Fault] = script_for(
        args.shape, args.chunks, args.chunk_size
    )
    if args.stray_429 > 0:
        script = with_stray_429s(script, args.stray_429, args.stray_retry_after)
    emulator = ProviderEmulator(
        script,
        stream_chunk_size=args.chunk_size,
        stream_chunk_delay=args.chunk_delay,
        latency=args.latency,
        rate_limit=(
            RateLimit(args.rate, args.burst, headers=not args.no_rate_headers)
            if args.rate > 0
            else None
        ),
        record_limit=1,
        google_function_call_ids=True,
    )

    def handle(raw: RawRequest) -> Reply:
        if raw.path == "/__stats":
            stats = emulator.stats
            body = {
                "requests": stats.requests,
                "responses": {str(status): count for status, count in stats.responses.items()},
                "throttled": stats.throttled,
            }
            return Reply(200, {"content-type": "application/json"}, json.dumps(body).encode())
        if raw.path == "/__reset":
            emulator.clear()
            return Reply(204, {}, b"")
        return emulator.handle(raw)

    serve_forever(handle, "127.0.0.1", args.port, lambda port: print(port, flush=True))


if __name__ == "__main__":
    main()
