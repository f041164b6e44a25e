"""Mistral (api.mistral.ai/v1): Chat Completions with an output limit named `max_tokens`;
its seed is `random_seed`, and it refuses OpenAI's prompt-cache options
(docs/hosts/compatible.md)."""

from __future__ import annotations

from ..openai import ChatHost, OpenAIChat

__all__ = ["Mistral"]


class Mistral(ChatHost):
    name = "mistral"
    wire = OpenAIChat
    system = "mistral"
    telemetry_name = "mistral_ai"
    api_key_variables = ("MISTRAL_API_KEY",)
    base_url = "https://api.mistral.ai/v1"
    max_tokens_field = "max_tokens"
    unsupported_settings = frozenset({"seed", "prompt_cache_key", "prompt_cache_retention"})
    offers_batches = False
    no_batches_reason = "Mistral's batch API is not wired in wink"
