"""xAI (api.x.ai/v1): Chat Completions; its reasoning models refuse `stop`, and it takes
none of OpenAI's prompt-cache options (docs/hosts/compatible.md)."""

from __future__ import annotations

from ..openai import ChatHost, OpenAIChat

__all__ = ["XAI"]


class XAI(ChatHost):
    name = "xai"
    wire = OpenAIChat
    system = "x-ai"
    telemetry_name = "x_ai"
    api_key_variables = ("XAI_API_KEY",)
    base_url = "https://api.x.ai/v1"
    unsupported_settings = frozenset({"stop", "prompt_cache_key", "prompt_cache_retention"})
    offers_batches = False
    no_batches_reason = "xAI's batch API is not wired in wink"
