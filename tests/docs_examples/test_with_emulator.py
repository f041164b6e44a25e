"""An agent tested against the provider emulator with pytest (shown in docs/testing.md)."""

from dataclasses import dataclass

import pytest

from wink import (
    MarkdownSection,
    Prompt,
    RetryPolicy,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    create_adapter,
)
from wink.testing import EmulatedToolCall, Fault, Provider, ProviderEmulator, Turn


@dataclass(frozen=True)
class OrderParams:
    order_id: str


def order_status(params: OrderParams, *, context: ToolContext) -> ToolResult[str]:
    if params.order_id != "A-1":
        return ToolResult.error(f"no order {params.order_id}", code="not_found")
    return ToolResult.ok("shipped", message="shipped on Monday")


SUPPORT = Prompt(
    name="support",
    sections=[
        MarkdownSection(
            key="task",
            title="Task",
            template="Where is order A-1?",
            tools=[Tool(name="order_status", description="Order status", handler=order_status)],
        )
    ],
)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-4.1"),
        ("openai-responses", "gpt-4.1"),
        ("anthropic", "claude-sonnet-4-6"),
        ("google", "gemini-2.5-flash"),
    ],
)
def test_agent_recovers_from_a_failed_tool_and_a_429(
    provider_emulator: ProviderEmulator, provider: Provider, model: str
) -> None:
    provider_emulator.enqueue(
        Turn.tool_calls(EmulatedToolCall("order_status", {"order_id": "A-7"})),  # fails
        Fault.rate_limit(retry_after=0.01),  # the next request is throttled once
        Turn.tool_calls(EmulatedToolCall("order_status", {"order_id": "A-1"})),
        Turn.text("Order A-1 shipped on Monday."),
    )
    session = Session()
    with create_adapter(
        f"{provider}:{model}",
        base_url=provider_emulator.base_url(provider),
        api_key="test",
        retry_policy=RetryPolicy(initial_delay=0.01),
    ) as adapter:
        response = adapter.evaluate(SUPPORT, session=session)

    assert response.text == "Order A-1 shipped on Monday."
    assert response.usage.requests == 3  # answered requests; the 429 was retried
    calls = [(event.params.order_id, event.result.success) for event in session[ToolInvoked]]
    assert calls == [("A-7", False), ("A-1", True)]
    assert provider_emulator.stats.requests == 4
    assert provider_emulator.stats.responses[429] == 1
