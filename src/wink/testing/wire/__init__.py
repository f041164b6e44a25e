"""The wire formats the emulator speaks, by provider name."""

from __future__ import annotations

from ..records import Provider
from .anthropic import AnthropicWire
from .base import Rendered, WireContext, WireFormat
from .bedrock import BedrockWire
from .google import GoogleWire
from .openai import OpenAIChatWire
from .openai_responses import OpenAIResponsesWire

__all__ = ["WIRES", "Rendered", "WireContext", "WireFormat"]

WIRES: dict[Provider, WireFormat] = {
    "openai": OpenAIChatWire(),
    "openai-responses": OpenAIResponsesWire(),
    "anthropic": AnthropicWire(),
    "google": GoogleWire(),
    "bedrock": BedrockWire(),
}
