"""DeepSeek (api.deepseek.com): Chat Completions with its thinking in `reasoning_content`,
which must come back on every assistant tool-call turn while thinking is on (DeepSeek
answers a 400 otherwise), and an output limit named `max_tokens` (docs/hosts/compatible.md)."""

from __future__ import annotations

from ..openai import ChatHost, OpenAIChat

__all__ = ["DeepSeek"]


class DeepSeek(ChatHost):
    name = "deepseek"
    wire = OpenAIChat
    system = "deepseek"
    telemetry_name = "deepseek"
    api_key_variables = ("DEEPSEEK_API_KEY",)
    base_url = "https://api.deepseek.com"
    reasoning_echo = "reasoning_content"
    max_tokens_field = "max_tokens"
    unsupported_settings = frozenset({"prompt_cache_key", "prompt_cache_retention"})
    offers_batches = False
    no_batches_reason = "DeepSeek has no batch API"
