"""Groq (api.groq.com/openai/v1): Chat Completions; it refuses OpenAI's prompt-cache
options (docs/hosts/compatible.md)."""

from __future__ import annotations

from ..openai import ChatHost, OpenAIChat

__all__ = ["Groq"]


class Groq(ChatHost):
    name = "groq"
    wire = OpenAIChat
    system = "groq"
    telemetry_name = "groq"
    api_key_variables = ("GROQ_API_KEY",)
    base_url = "https://api.groq.com/openai/v1"
    unsupported_settings = frozenset({"prompt_cache_key", "prompt_cache_retention"})
    offers_batches = False
    no_batches_reason = "Groq's batch API is not wired in wink"
