"""Streaming by hand on each raw SDK, on wink, and on pydantic-ai: the same job each time.

Each function streams one answer to "Say it.", keeps every text delta (an application
wants the answer) and returns `(seconds to the first text delta, the text)`. The clock
starts before the request is made, as a caller's would. Importing this module imports
neither wink nor pydantic-ai (the memory figures compare processes that load only what
their variant needs).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

SAY = "Say it."
MESSAGES: list[Any] = [{"role": "user", "content": SAY}]
CLAUDE = "claude-sonnet-4-6"
GEMINI = "gemini-2.5-flash"
KEY = "test-key-0123456789"
clock = time.perf_counter

Result = tuple[float, str]


# --- raw SDKs, sync


def openai_sync(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    stream = client.chat.completions.create(
        model="gpt-4.1", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            first = first or clock()
            parts.append(chunk.choices[0].delta.content)
    return first - start, "".join(parts)


def responses_sync(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    for event in client.responses.create(model="gpt-4.1", input=MESSAGES, stream=True):
        if event.type == "response.output_text.delta":
            first = first or clock()
            parts.append(event.delta)
    return first - start, "".join(parts)


def anthropic_sync(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    events = client.messages.create(model=CLAUDE, max_tokens=64000, messages=MESSAGES, stream=True)
    for event in events:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            first = first or clock()
            parts.append(event.delta.text)
    return first - start, "".join(parts)


def google_sync(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    for chunk in client.models.generate_content_stream(model=GEMINI, contents=SAY):
        if chunk.text:
            first = first or clock()
            parts.append(chunk.text)
    return first - start, "".join(parts)


# --- raw SDKs, async


async def openai_async(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    stream = await client.chat.completions.create(
        model="gpt-4.1", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            first = first or clock()
            parts.append(chunk.choices[0].delta.content)
    return first - start, "".join(parts)


async def responses_async(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    async for event in await client.responses.create(model="gpt-4.1", input=MESSAGES, stream=True):
        if event.type == "response.output_text.delta":
            first = first or clock()
            parts.append(event.delta)
    return first - start, "".join(parts)


async def anthropic_async(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    events = await client.messages.create(
        model=CLAUDE, max_tokens=64000, messages=MESSAGES, stream=True
    )
    async for event in events:
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            first = first or clock()
            parts.append(event.delta.text)
    return first - start, "".join(parts)


async def google_async(client: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    models = client.aio.models
    async for chunk in await models.generate_content_stream(model=GEMINI, contents=SAY):
        if chunk.text:
            first = first or clock()
            parts.append(chunk.text)
    return first - start, "".join(parts)


RAW_SYNC: dict[str, Callable[[Any], Result]] = {
    "openai": openai_sync,
    "openai-responses": responses_sync,
    "anthropic": anthropic_sync,
    "google": google_sync,
}
RAW_ASYNC: dict[str, Callable[[Any], Awaitable[Result]]] = {
    "openai": openai_async,
    "openai-responses": responses_async,
    "anthropic": anthropic_async,
    "google": google_async,
}


def sdk_client(provider: str, base_url: str, *, sync: bool) -> Any:
    """The raw SDK client, its own retries off (as wink's)."""
    if provider.startswith("openai"):
        import openai

        kind: Any = openai.OpenAI if sync else openai.AsyncOpenAI
        return kind(api_key=KEY, base_url=base_url, max_retries=0)
    if provider == "anthropic":
        import anthropic

        kind = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
        return kind(api_key=KEY, base_url=base_url, max_retries=0)
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=base_url, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)
    )
    return genai.Client(api_key=KEY, http_options=options)


# --- wink


def wink_adapter(provider: str, base_url: str) -> Any:
    from wink import create_adapter

    return create_adapter(f"{provider}:model", base_url=base_url, api_key=KEY)


def _prompt() -> Any:
    from wink import MarkdownSection, Prompt

    return Prompt(name="stream", sections=[MarkdownSection(key="task", title="Task", template=SAY)])


def wink_sync(adapter: Any) -> Result:
    from wink import Session, TextDelta

    prompt = _prompt()
    start, first, parts = clock(), 0.0, []
    with adapter.stream(prompt, session=Session()) as stream:
        for event in stream:
            if isinstance(event, TextDelta):
                first = first or clock()
                parts.append(event.text)
    return first - start, "".join(parts)


async def wink_async(adapter: Any) -> Result:
    from wink import Session, TextDelta

    prompt = _prompt()
    start, first, parts = clock(), 0.0, []
    async with adapter.stream_async(prompt, session=Session()) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                first = first or clock()
                parts.append(event.text)
    return first - start, "".join(parts)


# --- pydantic-ai (optional: the `bench` extra)


def pydantic_ai_agent(provider: str, base_url: str) -> Any | None:
    """A pydantic-ai Agent on `provider`'s wire at `base_url`; None when pydantic-ai (or
    its support for that provider) is not installed."""
    try:
        from pydantic_ai import Agent

        if provider.startswith("openai"):
            from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
            from pydantic_ai.providers.openai import OpenAIProvider

            kind: Any = OpenAIChatModel if provider == "openai" else OpenAIResponsesModel
            model = kind("gpt-4.1", provider=OpenAIProvider(base_url=base_url, api_key=KEY))
        elif provider == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            model = AnthropicModel(
                CLAUDE, provider=AnthropicProvider(base_url=base_url, api_key=KEY)
            )
        else:  # its google extra needs google-genai < 3: installed by hand, if at all
            from pydantic_ai.models.google import GoogleModel
            from pydantic_ai.providers.google import GoogleProvider

            model = GoogleModel(GEMINI, provider=GoogleProvider(base_url=base_url, api_key=KEY))
    except ImportError:
        return None
    return Agent(model)


async def pydantic_ai_async(agent: Any) -> Result:
    start, first, parts = clock(), 0.0, []
    async with agent.run_stream(SAY) as result:
        async for delta in result.stream_text(delta=True, debounce_by=None):
            if delta:
                first = first or clock()
                parts.append(delta)
    return first - start, "".join(parts)
