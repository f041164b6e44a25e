"""The raw OpenAI Chat tool loop of `raw.py`, instrumented by hand the way an application
would: the same four spans wink makes (evaluation, two requests, one tool), with the same
GenAI attributes, through the same tracer. What it adds to the raw loop is what the
OpenTelemetry SDK itself costs for those spans, the floor under wink's figure.
"""

from __future__ import annotations

from typing import Any

from . import raw

MODEL = raw.MODELS["openai"]
AGENT = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "bench",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": MODEL,
}
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": MODEL,
}


def _answered(span: Any, completion: Any) -> None:
    span.set_attributes(
        {
            "gen_ai.usage.input_tokens": completion.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": completion.usage.completion_tokens,
            "gen_ai.response.finish_reasons": (completion.choices[0].finish_reason,),
            "gen_ai.response.model": completion.model,
            "gen_ai.response.id": completion.id,
        }
    )


def _run_tools(tracer: Any, messages: list[dict[str, Any]], message: Any) -> None:
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or ():
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
        }
        with tracer.start_as_current_span(
            f"execute_tool {call.function.name}", attributes=attributes
        ):
            content = raw.run_tool(call.function.arguments)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def openai_sync(client: Any, tracer: Any) -> str | None:
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span("invoke_agent bench", attributes=AGENT) as agent:
        messages: list[dict[str, Any]] = [{"role": "user", "content": raw.TASK}]
        with tracer.start_as_current_span(
            f"chat {MODEL}", kind=SpanKind.CLIENT, attributes=CHAT
        ) as span:
            first = client.chat.completions.create(
                model=MODEL, messages=messages, tools=raw.CHAT_TOOLS
            )
            _answered(span, first)
        _run_tools(tracer, messages, first.choices[0].message)
        with tracer.start_as_current_span(
            f"chat {MODEL}", kind=SpanKind.CLIENT, attributes=CHAT
        ) as span:
            final = client.chat.completions.create(
                model=MODEL, messages=messages, tools=raw.CHAT_TOOLS
            )
            _answered(span, final)
        _totals(agent, first, final)
        return final.choices[0].message.content


async def openai_async(client: Any, tracer: Any) -> str | None:
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span("invoke_agent bench", attributes=AGENT) as agent:
        messages: list[dict[str, Any]] = [{"role": "user", "content": raw.TASK}]
        with tracer.start_as_current_span(
            f"chat {MODEL}", kind=SpanKind.CLIENT, attributes=CHAT
        ) as span:
            first = await client.chat.completions.create(
                model=MODEL, messages=messages, tools=raw.CHAT_TOOLS
            )
            _answered(span, first)
        _run_tools(tracer, messages, first.choices[0].message)
        with tracer.start_as_current_span(
            f"chat {MODEL}", kind=SpanKind.CLIENT, attributes=CHAT
        ) as span:
            final = await client.chat.completions.create(
                model=MODEL, messages=messages, tools=raw.CHAT_TOOLS
            )
            _answered(span, final)
        _totals(agent, first, final)
        return final.choices[0].message.content


def _totals(agent: Any, first: Any, final: Any) -> None:
    agent.set_attributes(
        {
            "gen_ai.usage.input_tokens": first.usage.prompt_tokens + final.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": first.usage.completion_tokens
            + final.usage.completion_tokens,
            "wink.rounds": 2,
        }
    )
