"""`create_adapter("provider:model")`: switch provider by changing one string."""

from __future__ import annotations

import importlib
from typing import Any

from .base import ProviderAdapter

__all__ = ["PROVIDERS", "create_adapter"]

# provider prefix -> (module, class); imported only when asked for, so `import wink`
# never pulls in an SDK.
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("wink.adapters.openai", "OpenAIAdapter"),
    "openai-responses": ("wink.adapters.openai_responses", "OpenAIResponsesAdapter"),
    "anthropic": ("wink.adapters.anthropic", "AnthropicAdapter"),
    "google": ("wink.adapters.google", "GoogleAdapter"),
    "gemini": ("wink.adapters.google", "GoogleAdapter"),
}


def create_adapter(spec: str, **options: Any) -> ProviderAdapter:
    """Build the adapter for `"provider:model"`, e.g. `"anthropic:claude-sonnet-4-6"`.

    `options` are the adapter's keyword arguments (`client=`, `base_url=`, `api_key=`,
    `retry_policy=`, `timeout=`, `temperature=`, ...).
    """
    provider, separator, model = spec.partition(":")
    if not separator or not provider or not model:
        raise ValueError(
            f"adapter spec {spec!r} must look like 'provider:model', e.g. 'openai:gpt-4.1'"
        )
    try:
        module_name, class_name = PROVIDERS[provider]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(f"unknown provider {provider!r}; known providers: {known}") from None
    module = importlib.import_module(module_name)
    adapter_class: type[ProviderAdapter] = getattr(module, class_name)
    return adapter_class(model, **options)
