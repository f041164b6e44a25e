"""Hand-written tool loops on the raw SDKs: the baselines wink is measured against.

Each does what wink's loop does for the `loop` shape: send the tool schema, read the tool
call, decode its arguments, run the tool, send the result in the provider's native form,
read the final text. Sync loops use the SDK's sync client, async loops its async client.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import anthropic
import httpx2 as httpx  # the SDKs' own transport (httpx 2), for the floor
import openai
from google import genai
from google.genai import types

from wink import MarkdownSection, Prompt, Tool, ToolContext, ToolResult

TASK = "Look up the key a."
SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string"}},
    "required": ["key"],
    "additionalProperties": False,
}
MODELS = {
    "openai": "gpt-4.1",
    "openai-responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",
}


@dataclass(frozen=True)
class LookupParams:
    key: str


@dataclass(frozen=True)
class Found:
    value: str


def lookup(params: LookupParams, *, context: ToolContext | None = None) -> ToolResult[Found]:
    if params.key.endswith("3"):  # a quarter of the tool-heavy calls fail
        return ToolResult.error(f"no value for {params.key}")
    return ToolResult.ok(Found(params.key * 2))


async def lookup_async(
    params: LookupParams, *, context: ToolContext | None = None
) -> ToolResult[Found]:
    """`lookup` as a coroutine: wink runs it on the caller's loop, as the raw async loop
    runs its tool (a sync tool under `evaluate_async` goes to a worker thread instead)."""
    return lookup(params)


def _bench_prompt(handler: Any) -> Prompt[Any]:
    tool = Tool(name="lookup", description="Look up a key", handler=handler)
    return Prompt(
        name="bench",
        sections=[MarkdownSection(key="task", title="Task", template=TASK, tools=[tool])],
    )


PROMPT = _bench_prompt(lookup)
ASYNC_TOOL_PROMPT = _bench_prompt(lookup_async)


def run_tool(arguments: Any) -> str:
    """What the hand-written loop does with a call: decode, validate by hand, run, encode."""
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    result = lookup(LookupParams(**arguments))
    if not result.success or result.value is None:
        return f"Error: {result.message}"
    return json.dumps(asdict(result.value))


# --- OpenAI Chat Completions

CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look up a key",
            "parameters": SCHEMA,
            "strict": True,
        },
    }
]


def _chat_follow_up(messages: list[dict[str, Any]], message: Any) -> None:
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or ():
        messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": run_tool(call.function.arguments)}
        )


def openai_sync(client: openai.OpenAI) -> str | None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    first = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=CHAT_TOOLS)
    _chat_follow_up(messages, first.choices[0].message)
    final = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=CHAT_TOOLS)
    return final.choices[0].message.content


async def openai_async(client: openai.AsyncOpenAI) -> str | None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    first = await client.chat.completions.create(
        model="gpt-4.1", messages=messages, tools=CHAT_TOOLS
    )
    _chat_follow_up(messages, first.choices[0].message)
    final = await client.chat.completions.create(
        model="gpt-4.1", messages=messages, tools=CHAT_TOOLS
    )
    return final.choices[0].message.content


# --- OpenAI Responses

RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "lookup",
        "description": "Look up a key",
        "parameters": SCHEMA,
        "strict": True,
    }
]


def _responses_follow_up(items: list[Any], output: list[Any]) -> None:
    for item in output:
        items.append(item.model_dump(exclude_none=True))
        if item.type == "function_call":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": item.call_id,
                    "output": run_tool(item.arguments),
                }
            )


def responses_sync(client: openai.OpenAI) -> str:
    items: list[Any] = [{"role": "user", "content": TASK}]
    first = client.responses.create(model="gpt-4.1", input=items, tools=RESPONSES_TOOLS)
    _responses_follow_up(items, first.output)
    return client.responses.create(model="gpt-4.1", input=items, tools=RESPONSES_TOOLS).output_text


async def responses_async(client: openai.AsyncOpenAI) -> str:
    items: list[Any] = [{"role": "user", "content": TASK}]
    first = await client.responses.create(model="gpt-4.1", input=items, tools=RESPONSES_TOOLS)
    _responses_follow_up(items, first.output)
    final = await client.responses.create(model="gpt-4.1", input=items, tools=RESPONSES_TOOLS)
    return final.output_text


# --- Anthropic Messages

ANTHROPIC_TOOLS = [{"name": "lookup", "description": "Look up a key", "input_schema": SCHEMA}]
CLAUDE = MODELS["anthropic"]


def _anthropic_follow_up(messages: list[dict[str, Any]], content: list[Any]) -> None:
    messages.append(
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in content]}
    )
    results = [
        {"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.input)}
        for block in content
        if block.type == "tool_use"
    ]
    messages.append({"role": "user", "content": results})


def anthropic_sync(client: anthropic.Anthropic) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    ask = {"model": CLAUDE, "max_tokens": 1024, "tools": ANTHROPIC_TOOLS}
    first = client.messages.create(messages=messages, **ask)  # type: ignore[arg-type]
    _anthropic_follow_up(messages, first.content)
    final = client.messages.create(messages=messages, **ask)  # type: ignore[arg-type]
    return final.content[0].text  # type: ignore[union-attr]


async def anthropic_async(client: anthropic.AsyncAnthropic) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    ask = {"model": CLAUDE, "max_tokens": 1024, "tools": ANTHROPIC_TOOLS}
    first = await client.messages.create(messages=messages, **ask)  # type: ignore[arg-type]
    _anthropic_follow_up(messages, first.content)
    final = await client.messages.create(messages=messages, **ask)  # type: ignore[arg-type]
    return final.content[0].text  # type: ignore[union-attr]


# --- Google Gemini

GEMINI_CONFIG = types.GenerateContentConfig(
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="lookup", description="Look up a key", parameters_json_schema=SCHEMA
                )
            ]
        )
    ]
)


def gemini_client(base_url: str) -> genai.Client:
    """The SDK a Gemini user would otherwise write against, on the API version wink's
    adapter uses (v1beta) and with one attempt (no SDK retry). wink itself speaks the REST
    API over httpx2 (docs/adapters/google.md), so this is the baseline, not its transport."""
    options = types.HttpOptions(
        base_url=base_url,
        api_version="v1beta",
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key="test-key-0123456789", http_options=options)


def _gemini_follow_up(contents: list[Any], answer: Any) -> None:
    contents.append(answer.candidates[0].content)
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=call.id, name=call.name, response={"output": run_tool(call.args)}
            )
        )
        for call in answer.function_calls or ()
    ]
    contents.append(types.Content(role="user", parts=parts))


def google_sync(client: genai.Client) -> str | None:
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=TASK)])]
    model = MODELS["google"]
    first = client.models.generate_content(model=model, contents=contents, config=GEMINI_CONFIG)
    _gemini_follow_up(contents, first)
    return client.models.generate_content(model=model, contents=contents, config=GEMINI_CONFIG).text


async def google_async(client: genai.Client) -> str | None:
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=TASK)])]
    model, models = MODELS["google"], client.aio.models
    first = await models.generate_content(model=model, contents=contents, config=GEMINI_CONFIG)
    _gemini_follow_up(contents, first)
    final = await models.generate_content(model=model, contents=contents, config=GEMINI_CONFIG)
    return final.text


# --- the floor: plain httpx, same JSON as the OpenAI loop


def _httpx_bodies(first: dict[str, Any]) -> dict[str, Any]:
    message = first["choices"][0]["message"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}, message]
    for call in message.get("tool_calls") or ():
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "content": run_tool(call["function"]["arguments"]),
            }
        )
    return {"model": "gpt-4.1", "messages": messages, "tools": CHAT_TOOLS}


FIRST_BODY = {
    "model": "gpt-4.1",
    "messages": [{"role": "user", "content": TASK}],
    "tools": CHAT_TOOLS,
}


def httpx_sync(client: httpx.Client) -> str:
    first = client.post("/chat/completions", json=FIRST_BODY).json()
    final = client.post("/chat/completions", json=_httpx_bodies(first)).json()
    return final["choices"][0]["message"]["content"]


async def httpx_async(client: httpx.AsyncClient) -> str:
    first = (await client.post("/chat/completions", json=FIRST_BODY)).json()
    final = (await client.post("/chat/completions", json=_httpx_bodies(first))).json()
    return final["choices"][0]["message"]["content"]


def sdk_client(provider: str, base_url: str, *, sync: bool, max_retries: int = 0) -> Any:
    """The raw SDK client, built the way wink builds its own (retries off by default)."""
    key = "test-key-0123456789"
    if provider.startswith("openai"):
        kind = openai.OpenAI if sync else openai.AsyncOpenAI
        return kind(api_key=key, base_url=base_url, max_retries=max_retries)
    if provider == "anthropic":
        kind = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
        return kind(api_key=key, base_url=base_url, max_retries=max_retries)
    return gemini_client(base_url)


RAW_LOOPS = {
    "openai": (openai_sync, openai_async),
    "openai-responses": (responses_sync, responses_async),
    "anthropic": (anthropic_sync, anthropic_async),
    "google": (google_sync, google_async),
}
