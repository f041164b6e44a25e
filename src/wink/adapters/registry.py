"""`create_adapter("host:model")`: switch provider or host by changing one string; and the
registry of hosts it reads (adding a host: a class in `wink/providers/` and one entry
here, docs/architecture.md)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..core.foundation.errors import ConfigurationError
from .base import ProviderAdapter

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..providers.host import Host
    from .options import AnyHostOptions

__all__ = ["HOSTS", "PROVIDERS", "HostEntry", "ProviderEntry", "create_adapter", "load_host"]


@dataclass(frozen=True, slots=True)
class HostEntry:
    """Where a host lives (`module`, its `Host` class), the extra that installs what it
    needs, and its named adapter class in `wink.adapters.named`, if it has one."""

    module: str
    host_class: str
    extra: str
    adapter_class: str | None = None


# The registry: one entry per host, imported only when asked for, so `import wink` never
# pulls in an SDK. Everything else about a host is its class's attributes.
HOSTS: dict[str, HostEntry] = {
    "openai": HostEntry("wink.providers.openai", "OpenAI", "openai", "OpenAIAdapter"),
    "openai-responses": HostEntry(
        "wink.providers.openai", "OpenAIResponsesHost", "openai", "OpenAIResponsesAdapter"
    ),
    "anthropic": HostEntry(
        "wink.providers.anthropic", "AnthropicHost", "anthropic", "AnthropicAdapter"
    ),
    "google": HostEntry("wink.providers.google", "GeminiHost", "google", "GoogleAdapter"),
}
HOSTS["gemini"] = HOSTS["google"]
HOSTS["bedrock"] = HostEntry("wink.providers.bedrock.hosts", "Bedrock", "bedrock", "BedrockAdapter")
HOSTS["azure"] = HostEntry("wink.providers.azure.hosts", "Azure", "openai")
HOSTS["azure-responses"] = HostEntry("wink.providers.azure.hosts", "AzureResponses", "openai")
HOSTS["vertex"] = HostEntry("wink.providers.vertex.gemini", "Vertex", "vertex")
HOSTS["vertex-anthropic"] = HostEntry(
    "wink.providers.vertex.claude", "VertexAnthropic", "vertex,anthropic"
)
HOSTS.update(
    (name, HostEntry(f"wink.providers.{name}", host_class, "openai"))
    for name, host_class in (
        ("deepseek", "DeepSeek"),
        ("openrouter", "OpenRouter"),
        ("groq", "Groq"),
        ("mistral", "Mistral"),
        ("xai", "XAI"),
        ("ollama", "Ollama"),
    )
)
PROVIDERS = HOSTS  # the registry's earlier names
ProviderEntry = HostEntry


def load_host(name: str) -> type[Host]:
    """The `Host` class registered as `name`; a missing extra is a `ConfigurationError`
    naming it."""
    entry = HOSTS.get(name)
    if entry is None:
        known = ", ".join(sorted(HOSTS))
        raise ConfigurationError(
            f"unknown provider {name!r}; known providers: {known}", provider=name
        )
    try:
        module = importlib.import_module(entry.module)
    except ImportError as error:
        missing = error.name or getattr(error.__cause__, "name", None)  # the module missing
        what = f"no module named {missing!r}" if missing else str(error)
        raise ConfigurationError(
            f"the {name} adapter needs an optional dependency that is not installed "
            f"({what}): pip install 'wink[{entry.extra}]'",
            provider=name,
        ) from error
    return cast("type[Host]", getattr(module, entry.host_class))


def create_adapter(spec: str, **options: Unpack[AnyHostOptions]) -> ProviderAdapter:
    """The adapter for `"provider:model"`, e.g. `"anthropic:claude-sonnet-4-6"`.

    Providers (the prefix is case-insensitive; spaces around the parts are ignored):

    - `openai`: Chat Completions, and any OpenAI-compatible server through `base_url=`;
      key `OPENAI_API_KEY`; extra `wink[openai]`.
    - `openai-responses`: the Responses API; key `OPENAI_API_KEY`; extra `wink[openai]`.
    - `anthropic`: the Messages API; key `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`);
      extra `wink[anthropic]`.
    - `google` (alias `gemini`): Gemini `generateContent`; key `GOOGLE_API_KEY` or
      `GEMINI_API_KEY`; extra `wink[google]`.
    - `bedrock`: AWS Bedrock's Converse API, by model id or inference profile, with
      `region=`; SigV4 over the AWS credential chain, or a Bedrock API key
      (`AWS_BEARER_TOKEN_BEDROCK`); extra `wink[bedrock]`.

    Hosts of those wires, each with options of its own: `azure`, `azure-responses`
    (docs/hosts/azure.md); `vertex` (Gemini) and `vertex-anthropic` (Claude) on Google
    Vertex AI, with `project=`, `location=`, `credentials=` (docs/hosts/vertex.md); the
    OpenAI-compatible `deepseek`, `openrouter`, `groq`, `mistral`, `xai`, `ollama`
    (docs/hosts/compatible.md).

    Options (all keyword, all optional; see `AdapterOptions`):

    - `api_key`, `base_url`, `client` (a ready SDK client, sync or async), `timeout`
      (seconds per request attempt, default 60);
    - `retry_policy` (a `RetryPolicy`), `graceful_tool_errors` (default True),
      `max_rounds` (model turns per evaluation, default 50), `max_failed_tool_rounds`
      (default 8), `max_output_retries` (structured answers the model may correct,
      default 2: docs/prompts.md);
    - `settings` (a `ModelSettings`, or `OpenAISettings` for OpenAI's own) or
      `temperature`, `max_tokens`, `top_p`, `stop`,
      `seed`, `thinking` (a `Thinking`, an effort or a token budget: docs/reasoning.md),
      `extra_body` (merged into the request body as is);
    - `prompt_cache_key`, `prompt_cache_retention` (OpenAI's prompt cache, fields of
      `OpenAISettings`; another wire warns that it cannot honour them: docs/caching.md);
    - `tool_choice` ("auto", "required", "none" or a tool's name; "required" and a
      name hold for the first round) and `parallel_tool_calls` (docs/tools.md);
    - `tracer_provider` (an OpenTelemetry `TracerProvider` for this adapter's spans;
      default: the global one once the application has configured OpenTelemetry:
      docs/observability.md);
    - `limiter` (paces requests to the provider's rate limit; default: the adapter's own
      `InProcessLimiter`; a `RedisLimiter` shares one limit across processes:
      docs/fleet.md);
    - `prices` (a `Prices`: your own per-million rates for this model, which win over
      genai-prices': docs/cost.md).

    A malformed spec, an unknown provider or option, or a missing extra raises
    `ConfigurationError` (a `WinkError` and a `ValueError`).
    """
    provider, model = _parse_spec(spec)
    entry = HOSTS[provider]
    given = cast(dict[str, Any], options)
    if entry.adapter_class is None:
        return ProviderAdapter(model, provider=provider, **given)
    from . import named

    adapter_class: type[ProviderAdapter] = getattr(named, entry.adapter_class)
    return adapter_class(model, **given)


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
    if provider not in HOSTS:
        known = ", ".join(sorted(HOSTS))
        raise ConfigurationError(
            f"unknown provider {provider!r} in {spec!r}; known providers: {known}",
            provider=provider,
        )
    return provider, model
