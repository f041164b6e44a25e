"""The emulator in-process through `httpx2.ASGITransport` (no socket)."""

from __future__ import annotations

import httpx2
import openai
import pytest

from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn


async def test_openai_sdk_over_asgi_transport() -> None:
    emu = ProviderEmulator([Turn.tool_calls(EmulatedToolCall("f", {"x": 1})), Turn.text("done")])
    transport = httpx2.ASGITransport(app=emu.asgi_app)
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        openai.AsyncOpenAI(
            api_key="k", base_url="http://emulator/v1", http_client=http, max_retries=0
        ) as client,
    ):
        messages: list[openai.types.chat.ChatCompletionMessageParam] = [
            {"role": "user", "content": "hi"}
        ]
        first = await client.chat.completions.create(model="m", messages=messages)
        second = await client.chat.completions.create(model="m", messages=messages)
        emu.inject(Fault.rate_limit(0.5))
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="m", messages=messages)
        emu.inject(Fault.drop_connection())
        with pytest.raises(openai.APIConnectionError):
            await client.chat.completions.create(model="m", messages=messages)
    assert first.choices[0].finish_reason == "tool_calls"
    assert second.choices[0].message.content == "done"
    assert [request.provider for request in emu.requests] == ["openai"] * 4
