"""`create_adapter("provider:model")`: switch provider by changing one string."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..core.foundation.errors import ConfigurationError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .base import AdapterOptions, ProviderAdapter

__all__ = ["PROVIDERS", "ProviderInfo", "create_adapter"]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """Where a provider's adapter lives and what it needs."""

    module: str
    class_name: str
    extra: str
    key_variables: tuple[str, ...]
    api: str


# Imported only when asked for, so `import wink` never pulls in an SDK.
PROVIDERS: dict[str, ProviderInfo] = {
    "openai": ProviderInfo(
        "wink.providers.openai.chat",
        "OpenAIAdapter",
        "openai",
        ("OPENAI_API_KEY",),
        "Chat Completions (and OpenAI-compatible servers via base_url=)",
    ),
    "openai-responses": ProviderInfo(
        "wink.providers.openai.responses",
        "OpenAIResponsesAdapter",
        "openai",
        ("OPENAI_API_KEY",),
        "the Responses API",
    ),
    "anthropic": ProviderInfo(
        "wink.providers.anthropic.messages",
        "AnthropicAdapter",
        "anthropic",
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        "the Messages API",
    ),
    "google": ProviderInfo(
        "wink.providers.google.generate",
        "GoogleAdapter",
        "google",
        ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        "Gemini generateContent",
    ),
}
PROVIDERS["gemini"] = PROVIDERS["google"]


def create_adapter(spec: str, **options: Unpack[AdapterOptions]) -> ProviderAdapter:
    """The adapter for `"provider:model"`, e.g. `"anthropic:claude-sonnet-4-6"`.

    Providers (the prefix is case-insensitive; spaces around the parts are ignored):

    - `openai`: Chat Completions, and any OpenAI-compatible server through `base_url=`;
      key `OPENAI_API_KEY`; extra `wink[openai]`.
    - `openai-responses`: the Responses API; key `OPENAI_API_KEY`; extra `wink[openai]`.
    - `anthropic`: the Messages API; key `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`);
      extra `wink[anthropic]`.
    - `google` (alias `gemini`): Gemini `generateContent`; key `GOOGLE_API_KEY` or
      `GEMINI_API_KEY`; extra `wink[google]`.

    Options (all keyword, all optional; see `AdapterOptions`):

    - `api_key`, `base_url`, `client` (a ready SDK client, sync or async), `timeout`
      (seconds per request attempt, default 60);
    - `retry_policy` (a `RetryPolicy`), `graceful_tool_errors` (default True),
      `max_rounds` (model turns per evaluation, default 50), `max_failed_tool_rounds`
      (default 8), `max_output_retries` (structured answers the model may correct,
      default 2: docs/prompts.md);
    - `settings` (a `ModelSettings`) or `temperature`, `max_tokens`, `top_p`, `stop`,
      `seed`, `thinking` (a `Thinking`, an effort or a token budget: docs/reasoning.md),
      `extra_body` (merged into the request body as is);
    - `tracer_provider` (an OpenTelemetry `TracerProvider` for this adapter's spans;
      default: the global one once the application has configured OpenTelemetry:
      docs/observability.md);
    - `limiter` (paces requests to the provider's rate limit; default: the adapter's own
      `InProcessLimiter`; a `RedisLimiter` shares one limit across processes:
      docs/fleet.md).

    A malformed spec, an unknown provider or option, or a missing extra raises
    `ConfigurationError` (a `WinkError` and a `ValueError`).
    """
    provider, model = _parse_spec(spec)
    info = PROVIDERS[provider]
    try:
        module = importlib.import_module(info.module)
    except ImportError as error:
        name = error.name or getattr(error.__cause__, "name", None)  # the module missing
        missing = f"no module named {name!r}" if name else str(error)
        raise ConfigurationError(
            f"the {provider} adapter needs an optional dependency that is not installed "
            f"({missing}): pip install 'wink[{info.extra}]'",
            provider=provider,
        ) from error
    adapter_class = cast("type[ProviderAdapter]", getattr(module, info.class_name))
    return adapter_class(model, **cast(dict[str, Any], options))


def _parse_spec(spec: object) -> tuple[str, str]:
    if not isinstance(spec, str):
        raise ConfigurationError(
            f"the adapter spec must be a string like 'openai:gpt-4.1', got {type(spec).__name__}"
        )
    provider, separator, model = spec.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if not separator or not provider or not model:
        raise ConfigurationError(
            f"adapter spec {spec!r} must look like 'provider:model', e.g. 'openai:gpt-4.1'"
        )
    if provider not in PROVIDERS:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigurationError(
            f"unknown provider {provider!r} in {spec!r}; known providers: {known}",
            provider=provider,
        )
    return provider, model
