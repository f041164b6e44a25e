"""The wire formats the emulator speaks: each `WireFormat` says which format it serves
(its `provider`), and is found by it (`wire_for`, or `WIRES`)."""

from __future__ import annotations

from ..records import Provider
from .anthropic import AnthropicWire
from .base import Rendered, WireContext, WireFormat
from .bedrock import BedrockWire
from .google import GoogleWire
from .openai import OpenAIChatWire
from .openai_responses import OpenAIResponsesWire

__all__ = ["WIRES", "Rendered", "WireContext", "WireFormat", "wire_for"]

_REGISTERED: tuple[WireFormat, ...] = (  # the order a stray request's 404 is claimed in
    BedrockWire(),
    GoogleWire(),
    AnthropicWire(),
    OpenAIResponsesWire(),
    OpenAIChatWire(),  # last: it answers any request no other wire claims
)
WIRES: dict[Provider, WireFormat] = {wire.provider: wire for wire in _REGISTERED}
"""Each registered wire by the format it serves (a wire names its own format)."""


def wire_for(provider: Provider) -> WireFormat:
    """The emulator's wire for `provider`'s format (KeyError when none serves it)."""
    return WIRES[provider]
