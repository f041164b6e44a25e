"""A local Ollama server (http://localhost:11434/v1), no key: Chat Completions. Its `/v1`
endpoint ignores `num_ctx`: the context length is the server's (`OLLAMA_CONTEXT_LENGTH`)
or the model's (`PARAMETER num_ctx` in a Modelfile) (docs/hosts/compatible.md)."""

from __future__ import annotations

from ..openai import ChatHost, OpenAIChat

__all__ = ["Ollama"]


class Ollama(ChatHost):
    name = "ollama"
    wire = OpenAIChat
    system = "ollama"
    telemetry_name = "ollama"
    base_url = "http://localhost:11434/v1"
    key_required = False
    max_tokens_field = "max_tokens"
    unsupported_settings = frozenset({"prompt_cache_key", "prompt_cache_retention"})
    offers_batches = False
    no_batches_reason = "Ollama has no batch API"
