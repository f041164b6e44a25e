"""What one evaluation walks through: the distinct wink functions called, and how often
the call moves from one layer (docs/architecture.md) to another, in one `stream_async`
(or `stream`, `evaluate`) with one tool call on Anthropic against the emulator.

`python -m benchmarks.trace_calls [stream_async|stream|evaluate]`: a structural figure,
not a timing; compare it before and after a change of the runtime.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass
from typing import Any

from wink import MarkdownSection, Prompt, Session, Tool, ToolContext, ToolResult, create_adapter
from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

_LAYERS = (
    "wink.core.foundation",
    "wink.core.prompting",
    "wink.core.throttling",
    "wink.core.telemetry",
    "wink.core.transport",
    "wink.core.agent",
    "wink.providers",
    "wink.adapters",
    "wink",
)


@dataclass(frozen=True)
class City:
    city: str


def weather(params: City, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(f"sunny in {params.city}")


def _layer(module: str) -> str:
    return next(layer for layer in _LAYERS if module == layer or module.startswith(layer + "."))


def trace(mode: str) -> tuple[int, int]:
    """(distinct wink functions, layer switches) of one evaluation in `mode`."""
    tool = Tool(name="weather", description="Weather by city", handler=weather)
    prompt = Prompt(
        name="p", sections=[MarkdownSection(key="t", title="T", template="Go.", tools=[tool])]
    )
    functions: set[tuple[str, str]] = set()
    switches = 0
    last: dict[int, str] = {}

    def profile(frame: Any, event: str, _: Any) -> None:
        nonlocal switches
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not (module == "wink" or module.startswith("wink.")) or module.startswith(
            "wink.testing"
        ):
            return
        functions.add((module, frame.f_code.co_qualname))
        layer = _layer(module)
        thread = threading.get_ident()
        if last.get(thread, layer) != layer:
            switches += 1
        last[thread] = layer

    script = [
        Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"})),
        Turn.text("Sunny."),
    ]
    with ProviderEmulator(script) as emulator:
        adapter = create_adapter(
            "anthropic:claude-sonnet-4-6", base_url=emulator.base_url("anthropic"), api_key="k"
        )
        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            if mode == "stream_async":

                async def run() -> None:
                    async with adapter.stream_async(prompt, session=Session()) as stream:
                        async for _ in stream:
                            pass
                    await adapter.aclose()

                asyncio.run(run())
            elif mode == "stream":
                with adapter.stream(prompt, session=Session()) as stream:
                    for _ in stream:
                        pass
            else:
                adapter.evaluate(prompt, session=Session())
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
        adapter.close()
    return len(functions), switches


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "stream_async"
    count, moves = trace(chosen)
    print(f"{chosen}: {count} distinct wink functions, {moves} layer switches")
