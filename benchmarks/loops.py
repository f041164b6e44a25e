"""Loop overhead: sequential tool loops, wink against the hand-written raw SDK loop.

One persistent event loop serves every async variant, so clients and connection pools
live across batches exactly as they do in a long-running application.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import httpx2 as httpx  # the SDKs' own transport (httpx 2), for the floor

from wink import Session, ToolInvoked, create_adapter

from . import raw
from ._common import Row, emulator, interleave, row

PROVIDERS = ("openai", "openai-responses", "anthropic", "google")


def loop_overhead(loops: int, repeat: int, warmup: int) -> list[Row]:
    rows: list[Row] = []
    runner = asyncio.Runner()
    with emulator("--shape", "loop") as server:
        for provider in PROVIDERS:
            base_url = server.base_url(provider)
            model = f"{provider}:{raw.MODELS[provider]}"
            sync_loop, async_loop = raw.RAW_LOOPS[provider]
            sync_client = raw.sdk_client(provider, base_url, sync=True)
            async_client = runner.run(_make_async_client(provider, base_url))
            adapter = create_adapter(model, base_url=base_url, api_key="test-key-0123456789")

            def sync_raw(count: int, client: Any = sync_client, loop: Any = sync_loop) -> None:
                for _ in range(count):
                    loop(client)

            def sync_wink(count: int, adapter: Any = adapter) -> None:
                for _ in range(count):
                    adapter.evaluate(raw.PROMPT, session=Session())

            def async_raw(count: int, client: Any = async_client, loop: Any = async_loop) -> None:
                async def batch() -> None:
                    for _ in range(count):
                        await loop(client)

                runner.run(batch())

            def async_wink(count: int, adapter: Any = adapter) -> None:
                async def batch() -> None:
                    for _ in range(count):
                        await adapter.evaluate_async(raw.PROMPT, session=Session())

                runner.run(batch())

            def async_wink_tool(count: int, adapter: Any = adapter) -> None:
                async def batch() -> None:
                    for _ in range(count):
                        await adapter.evaluate_async(raw.ASYNC_TOOL_PROMPT, session=Session())

                runner.run(batch())

            variants: dict[str, Callable[[int], None]] = {
                "sync raw": sync_raw,
                "sync wink": sync_wink,
                "async raw": async_raw,
                "async wink": async_wink,
                "async wink, async tool": async_wink_tool,
            }
            if provider == "openai":
                floor_sync = httpx.Client(base_url=base_url)
                floor_async = runner.run(_make_httpx(base_url))

                def sync_httpx(count: int, client: Any = floor_sync) -> None:
                    for _ in range(count):
                        raw.httpx_sync(client)

                def async_httpx(count: int, client: Any = floor_async) -> None:
                    async def batch() -> None:
                        for _ in range(count):
                            await raw.httpx_async(client)

                    runner.run(batch())

                variants |= {"sync httpx": sync_httpx, "async httpx": async_httpx}
            for run in variants.values():  # warm: connections, lazy imports, first-call caches
                run(warmup)
            timings = interleave(
                repeat, {name: _per_loop(run, loops) for name, run in variants.items()}
            )
            for mode in ("sync", "async"):
                base = timings[f"{mode} raw"]
                rows.append(
                    row(
                        "loop overhead",
                        f"{provider} {mode}: raw SDK",
                        "ms/loop",
                        base,
                    )
                )
                rows.append(
                    row(
                        "loop overhead",
                        f"{provider} {mode}: wink",
                        "ms/loop",
                        timings[f"{mode} wink"],
                        against=base,
                        baseline=f"raw {provider} SDK, {mode}",
                        target=1.0,  # issue 20: at most the raw SDK
                    )
                )
                if mode == "async":
                    rows.append(
                        row(
                            "loop overhead",
                            f"{provider} async: wink, the tool a coroutine (on the loop, "
                            "as the raw loop runs its tool; a sync one goes to a thread)",
                            "ms/loop",
                            timings["async wink, async tool"],
                            against=base,
                            baseline=f"raw {provider} SDK, async",
                            target=1.0,
                        )
                    )
                if f"{mode} httpx" in timings:
                    rows.append(
                        row(
                            "loop overhead",
                            f"{provider} {mode}: plain httpx2, the SDKs' transport (floor)",
                            "ms/loop",
                            timings[f"{mode} httpx"],
                            against=base,
                            baseline=f"raw {provider} SDK, {mode}",
                        )
                    )
            adapter.close()
            runner.run(adapter.aclose())
            sync_client.close()
            runner.run(_close(async_client))
            if provider == "openai":
                floor_sync.close()
                runner.run(floor_async.aclose())
    runner.close()
    return rows


def _per_loop(run: Callable[[int], None], loops: int) -> Callable[[], float]:
    """A measurement: milliseconds per loop over `loops` loops of `run`."""

    def measure() -> float:
        started = time.perf_counter()
        run(loops)
        return (time.perf_counter() - started) * 1000 / loops

    return measure


async def _make_async_client(provider: str, base_url: str) -> Any:
    return raw.sdk_client(provider, base_url, sync=False)


async def _make_httpx(base_url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base_url)


async def _close(client: Any) -> None:
    if hasattr(client, "aio"):  # google: the sync client owns the async one
        await client.aio.aclose()
        client.close()
        return
    await client.close()


# --- tool-heavy: one evaluation, 50 rounds of 4 parallel calls, a quarter failing


def tool_heavy(repeat: int) -> list[Row]:
    from ._emulator import HEAVY_ROUNDS, HEAVY_WIDTH

    with emulator("--shape", "heavy") as server:
        base_url = server.base_url("openai")
        adapter = create_adapter(
            "openai:gpt-4.1",
            base_url=base_url,
            api_key="test-key-0123",
            max_rounds=HEAVY_ROUNDS + 1,  # a long run on purpose: past the default 50
        )
        client = raw.sdk_client("openai", base_url, sync=True)

        def wink_run() -> float:
            started = time.perf_counter()
            adapter.evaluate(raw.PROMPT, session=Session())
            return (time.perf_counter() - started) * 1e6 / HEAVY_ROUNDS

        def raw_run() -> float:
            started = time.perf_counter()
            messages: list[dict[str, Any]] = [{"role": "user", "content": raw.TASK}]
            while True:
                answer = client.chat.completions.create(
                    model="gpt-4.1", messages=messages, tools=raw.CHAT_TOOLS
                )
                message = answer.choices[0].message
                if not message.tool_calls:
                    break
                raw._chat_follow_up(messages, message)
            return (time.perf_counter() - started) * 1e6 / HEAVY_ROUNDS

        wink_run(), raw_run()
        timings = interleave(repeat, {"raw": raw_run, "wink": wink_run})
        # the session after the run: its log holds every ToolInvoked, failures included
        gc.collect()
        tracemalloc.start()
        session = Session()
        adapter.evaluate(raw.PROMPT, session=session)
        gc.collect()
        with_session = tracemalloc.get_traced_memory()[0]
        events = len(session[ToolInvoked])
        del session
        gc.collect()
        session_bytes = with_session - tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        adapter.close()
        client.close()
    core = [_scripted_round_us() for _ in range(len(timings["wink"]))]
    calls = HEAVY_ROUNDS * HEAVY_WIDTH
    return [
        row("tool-heavy", "raw SDK loop, per round", "µs/round", timings["raw"]),
        row(
            "tool-heavy",
            "wink, per round",
            "µs/round",
            timings["wink"],
            against=timings["raw"],
            baseline="raw SDK loop",
        ),
        row(
            "tool-heavy",
            "wink's own work per round (scripted model, no HTTP)",
            "µs/round",
            core,
            note="loop, 4 tool calls with validation, session transactions and rollbacks",
        ),
        row(
            "tool-heavy",
            f"session after the run ({events} ToolInvoked of {calls} calls)",
            "KiB",
            [session_bytes / 1024],
        ),
    ]


def _scripted_round_us() -> float:
    """The loop's own cost per round, with an in-process model: no SDK, no HTTP."""
    from wink.testing.scripted import ScriptedAdapter, call, final, tool_turn

    from ._emulator import HEAVY_ROUNDS, HEAVY_WIDTH

    turns: list[Any] = [
        tool_turn(
            *(
                call("lookup", {"key": f"r{round_}-{index}"}, id=f"c{round_}-{index}")
                for index in range(HEAVY_WIDTH)
            )
        )
        for round_ in range(HEAVY_ROUNDS)
    ]
    adapter = ScriptedAdapter([*turns, final("All looked up.")], max_rounds=HEAVY_ROUNDS + 1)
    started = time.perf_counter()
    adapter.evaluate(raw.PROMPT, session=Session())
    return (time.perf_counter() - started) * 1e6 / HEAVY_ROUNDS
