"""`Provider`: everything wink knows about one provider's wire format, in one object.

A provider folder (`wink.providers.<name>`) holds its translator (neutral transcript <->
wire JSON), stream decoder, error table and rate-limit headers, and one `Provider`
subclass that puts them together with the provider's facts as class attributes. Nothing
outside the folder keys a table by the provider's name: the registry
(`wink.providers.registry`) names where each folder's class is, and the adapter, the
runner, fallback and telemetry read the attributes. docs/architecture.md shows how to add
one.

A `Provider` instance is one model with its settings and connection: `ProviderAdapter`
makes it, and the core's `Exchange` drives it (`wink.core.transport.exchange.Translator`).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.foundation.carriage import NO_CONTENT, ContentRules
from ..core.foundation.messages import ModelRequest, ModelResponse
from ..core.foundation.portable import CallIdRules
from ..core.foundation.settings import ModelSettings
from ..core.throttling.headers import NO_RATE_LIMIT_HEADERS, RateLimitHeaders
from ..core.transport.http import HttpCalls, WireRequest

if TYPE_CHECKING:  # a stream's decoder and a batch's wire load when first used
    from ..core.transport.batches import BatchWire
    from ..core.transport.decoding import Parse, StreamDecoder, StreamFormat

__all__ = ["Connection", "LazyStreamFormat", "Provider"]


@dataclass(frozen=True, slots=True)
class Connection:
    """Where an adapter's requests go: the caller's `api_key` (None: the provider's
    environment variable), `base_url` (None: the provider's own) and `timeout` (seconds
    per request attempt)."""

    api_key: str | None
    base_url: str | None
    timeout: float


class LazyStreamFormat:
    """A wire's `StreamFormat` (`wink.core.transport.decoding`), class `name` of `module`,
    loaded on the first stream: a decoder brings the stream events and their machinery
    in, which an adapter that never streams need not import."""

    __slots__ = ("_loaded", "_module", "_name")

    def __init__(self, module: str, name: str) -> None:
        self._module, self._name = module, name
        self._loaded: StreamFormat | None = None

    def __repr__(self) -> str:
        return f"LazyStreamFormat({self._module}.{self._name})"

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        return self._load().stream_body(path, body)

    def decoder(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> StreamDecoder:
        return self._load().decoder(prompt_name, secrets, parse)

    def _load(self) -> StreamFormat:
        loaded = self._loaded
        if loaded is None:  # two threads may both load it: the objects hold no state
            loaded = self._loaded = getattr(importlib.import_module(self._module), self._name)()
        return loaded


class Provider(ABC):
    """One provider's wire format for one model; subclasses set the facts and implement
    the translator (`build_request`, `parse_response`, `map_errors`) and the client
    (`make_client`, `http_calls`).

    Facts: `name` (the prefix of `create_adapter("name:model")`), `api_key_variables`
    (read in order when no key is given), `unsupported_settings` (warned about, not sent),
    `rate_limit_headers`, `telemetry_name` (`gen_ai.provider.name`), `stream_format`
    (None: not streamed on the wire), `call_ids`, `content_rules` (the images, documents
    and audio it carries, where, within which limits: checked before sending),
    `price_provider_id` (genai-prices' provider id its answers are priced under: a host
    that resells a model at its own prices names its own; None lets genai-prices find the
    provider from the model name). Its batch API, if it has one, is `batch_wire()`.
    """

    name: ClassVar[str]
    api_key_variables: ClassVar[tuple[str, ...]] = ()
    unsupported_settings: ClassVar[frozenset[str]] = frozenset()
    rate_limit_headers: ClassVar[RateLimitHeaders] = NO_RATE_LIMIT_HEADERS
    telemetry_name: ClassVar[str]
    stream_format: ClassVar[StreamFormat | None] = None
    call_ids: ClassVar[CallIdRules] = CallIdRules()
    content_rules: ClassVar[ContentRules] = NO_CONTENT
    price_provider_id: ClassVar[str | None] = None

    def __init__(self, model: str, settings: ModelSettings, connection: Connection) -> None:
        self.model = model
        self.settings = settings
        self.connection = connection
        self.check_settings()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    # ---- the client

    @abstractmethod
    def make_client(self, *, sync: bool) -> Any:
        """A new SDK client with its own retries off (wink's `RetryPolicy` decides)."""

    @abstractmethod
    def is_async_client(self, client: Any) -> bool:
        """Whether a caller's client is async (its calls return awaitables)."""

    @property
    @abstractmethod
    def http_calls(self) -> HttpCalls:
        """How requests go out with a client of this provider."""

    def key_optional(self) -> bool:
        """True where a server may need no key (OpenAI-compatible servers)."""
        return False

    # ---- the translator

    def check_settings(self) -> None:
        """Raise `ConfigurationError` for a setting this model refuses (at construction,
        not on the first request). Every setting is accepted unless a provider says not."""
        return

    @abstractmethod
    def build_request(self, request: ModelRequest) -> WireRequest:
        """The neutral request as the provider's path (or URL) and JSON body."""

    @abstractmethod
    def parse_response(self, data: Any) -> ModelResponse:
        """The provider's decoded 2xx body as a `ModelResponse`; raise
        `MalformedResponse` (a ValueError) when it is not the documented shape."""

    @abstractmethod
    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        """Translate what the SDK raises inside the block (`map_sdk_errors`)."""

    # ---- its batch API

    def batch_wire(self) -> BatchWire | None:
        """Its batch API for this model (`wink.core.transport.batches`), its `batch.py`;
        None: it has none (docs/batch.md)."""
        return None
