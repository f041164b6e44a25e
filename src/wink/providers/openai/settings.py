"""OpenAI's own settings: the prompt cache's key and retention, which both OpenAI APIs
take and no other wire has (docs/caching.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast, get_args

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.settings import ModelSettings, check_type

__all__ = ["CacheRetention", "OpenAISettings"]

CacheRetention = Literal["in_memory", "24h"]
"""How long OpenAI keeps a cached prompt prefix (`prompt_cache_retention`)."""
_RETENTIONS: tuple[str, ...] = get_args(CacheRetention)


@dataclass(frozen=True, slots=True)
class OpenAISettings(ModelSettings):
    """`ModelSettings` plus OpenAI's prompt-cache options, for an adapter (`settings=`)
    or one call (`evaluate(..., settings=...)`): `prompt_cache_key` routes requests
    that share a long prefix to the same cache; `prompt_cache_retention` ("in_memory"
    or "24h") is how long it is kept. Chat Completions and Responses send both; another
    wire warns that it cannot honour them (`UnsupportedSettingWarning`), as a host of
    Chat Completions that refuses them does (Groq, DeepSeek...)."""

    prompt_cache_key: str | None = None
    prompt_cache_retention: CacheRetention | None = None

    def __post_init__(self) -> None:
        ModelSettings.__post_init__(self)
        check_type("prompt_cache_key", self.prompt_cache_key, (str,), "a string")
        if self.prompt_cache_key is not None and not self.prompt_cache_key.strip():
            raise ConfigurationError(
                "prompt_cache_key must not be empty", option="prompt_cache_key"
            )
        retention = cast(object, self.prompt_cache_retention)
        if retention is not None and retention not in _RETENTIONS:
            raise ConfigurationError(
                f"prompt_cache_retention must be one of {', '.join(_RETENTIONS)}, "
                f"got {retention!r}",
                option="prompt_cache_retention",
            )
