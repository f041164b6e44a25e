"""The built-in providers' adapter classes, by name: `create_adapter("anthropic:...")`
returns an `AnthropicAdapter`, and each class can be made directly with the same options.
Importing this module imports no SDK: the provider's module is loaded by the constructor.
"""

from __future__ import annotations

from .base import ProviderAdapter

__all__ = [
    "AnthropicAdapter",
    "BedrockAdapter",
    "GoogleAdapter",
    "OpenAIAdapter",
    "OpenAIResponsesAdapter",
]


class OpenAIAdapter(ProviderAdapter):
    """OpenAI Chat Completions (and OpenAI-compatible servers) through the openai SDK."""

    provider = "openai"


class OpenAIResponsesAdapter(ProviderAdapter):
    """OpenAI's Responses API through the openai SDK."""

    provider = "openai-responses"


class AnthropicAdapter(ProviderAdapter):
    """Anthropic's Messages API through the anthropic SDK."""

    provider = "anthropic"


class GoogleAdapter(ProviderAdapter):
    """Gemini's `generateContent` REST API, over httpx2."""

    provider = "google"


class BedrockAdapter(ProviderAdapter):
    """AWS Bedrock's Converse API, over httpx2, SigV4-signed or with a Bedrock API key."""

    provider = "bedrock"
