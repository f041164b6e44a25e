"""Streaming, per wire format: each module turns one round's SSE events into stream
events and the round's `ModelResponse` (see `base.py` for what they share)."""

from __future__ import annotations

import importlib

from ..core.transport.decoding import StreamFormat

__all__ = ["stream_format"]

# provider name -> (module, format class); a module is imported with its first stream
_FORMATS: dict[str, tuple[str, str]] = {
    "openai": ("openai.chat_stream", "ChatStream"),
    "openai-responses": ("openai.responses_stream", "ResponsesStream"),
    "anthropic": ("anthropic.stream", "AnthropicStream"),
    "google": ("google.stream", "GeminiStream"),
}


def stream_format(provider: str) -> StreamFormat | None:
    """How `provider`'s wire streams; None for an adapter with no streaming wire (its
    rounds are then told as a stream once they arrive whole)."""
    found = _FORMATS.get(provider)
    if found is None:
        return None
    module = importlib.import_module(f"wink.providers.{found[0]}")
    format_type: type[StreamFormat] = getattr(module, found[1])
    return format_type()
