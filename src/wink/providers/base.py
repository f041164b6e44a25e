"""`Provider`: everything wink knows about one wire format (one API shape), in one object.

A provider folder (`wink.providers.<name>`) holds its translator (neutral transcript <->
wire JSON), stream decoder, error table and rate-limit headers, and one `Provider`
subclass per API shape that puts them together with the format's facts as class
attributes. Where its requests go and how they are signed is its `Host`'s
(`wink.providers.host`): the same wire is served by several hosts. Nothing outside the
folder keys a table by a provider's name: the registry (`wink.adapters.registry`) names
where each host's class is, and the adapter, the runner, fallback and telemetry read the
attributes. docs/architecture.md shows how to add one.

A `Provider` instance is one model with its settings and host: `ProviderAdapter` makes
it, and the core's `Exchange` drives it (`wink.core.transport.exchange.Translator`).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ..core.foundation.carriage import NO_CONTENT, ContentRules
from ..core.foundation.errors import UnsupportedFeatureError
from ..core.foundation.messages import ModelRequest, ModelResponse
from ..core.foundation.portable import CallIdRules
from ..core.foundation.settings import ModelSettings
from ..core.throttling.headers import NO_RATE_LIMIT_HEADERS, RateLimitHeaders
from ..core.transport.errors import MalformedResponse
from ..core.transport.http import HttpCalls, WireRequest

if TYPE_CHECKING:  # a stream's decoder and a batch's wire load when first used
    from ..core.transport.batches import BatchWire
    from ..core.transport.decoding import Framing, Parse, StreamDecoder, StreamFormat
    from .host import Host

__all__ = ["Connection", "LazyStreamFormat", "Provider", "token_count", "token_count_body"]


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

    def framing(self) -> Framing:
        return self._load().framing()

    def _load(self) -> StreamFormat:
        loaded = self._loaded
        if loaded is None:  # two threads may both load it: the objects hold no state
            loaded = self._loaded = getattr(importlib.import_module(self._module), self._name)()
        return loaded


class Provider(ABC):
    """One wire format for one model on one host; subclasses set the facts and implement
    the translator (`build_request`, `parse_response`, `map_errors`) and the client
    (`make_client`, `http_calls`), which they make with what the host says
    (`host.endpoint()`).

    Facts: `name` (the wire format's name, in messages), `unsupported_settings` (warned
    about, not sent), `settings_type` (its settings class: a subclass of `ModelSettings`
    for a wire with settings of its own, `OpenAISettings`; a setting of another wire's is
    warned about, not sent), `rate_limit_headers`, `stream_format` (None: not streamed on the
    wire), `call_ids`, `content_rules` (the images, documents and audio it carries, where,
    within which limits: checked before sending), `counts_tokens` (it has a token-count
    endpoint: `token_count_form` and `parse_token_count`). Its batch API, if it has one,
    is `batch_wire()`. `model` is the model its rules are chosen for, `model_id` what the
    request names (they differ on a host with deployments).
    """

    name: ClassVar[str]
    unsupported_settings: ClassVar[frozenset[str]] = frozenset()
    settings_type: ClassVar[type[ModelSettings]] = ModelSettings
    rate_limit_headers: ClassVar[RateLimitHeaders] = NO_RATE_LIMIT_HEADERS
    stream_format: ClassVar[StreamFormat | None] = None
    call_ids: ClassVar[CallIdRules] = CallIdRules()
    content_rules: ClassVar[ContentRules] = NO_CONTENT
    counts_tokens: ClassVar[bool] = False

    def __init__(self, settings: ModelSettings, host: Host) -> None:
        self.host = host
        self.model = host.rules_model()
        self.model_id = host.model_id()
        self.settings = settings
        self.connection: Connection = host.connection
        self.check_settings()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    # ---- the client

    @abstractmethod
    def make_client(self) -> Any:
        """A new async SDK client with its own retries off (wink's `RetryPolicy` decides).
        wink makes no sync client: every entry point runs on an event loop (a sync one
        on the portal); a sync client is only ever the caller's (`client=`)."""

    @abstractmethod
    def is_async_client(self, client: Any) -> bool:
        """Whether a caller's client is async (its calls return awaitables)."""

    @property
    @abstractmethod
    def http_calls(self) -> HttpCalls:
        """How requests go out with a client of this provider."""

    # ---- the translator

    def check_settings(self) -> None:
        """Raise `ConfigurationError` for a setting this model refuses (at construction,
        not on the first request). Every setting is accepted unless a provider says not."""
        return

    def build_request(self, request: ModelRequest) -> WireRequest:
        """The neutral request as the host takes it: the wire's path (or URL) and JSON
        body (`translate`), then the host's path and quirks."""
        wire = self.translate(request)
        host = self.host
        return WireRequest(host.path(wire.path), host.adjust_body(dict(wire.body)), wire.headers)

    @abstractmethod
    def translate(self, request: ModelRequest) -> WireRequest:
        """The neutral request as the wire format's path (or URL) and JSON body."""

    @abstractmethod
    def parse_response(self, data: Any) -> ModelResponse:
        """The provider's decoded 2xx body as a `ModelResponse`; raise
        `MalformedResponse` (a ValueError) when it is not the documented shape."""

    @abstractmethod
    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        """Translate what the SDK raises inside the block (`map_sdk_errors`)."""

    # ---- its token-count endpoint

    def check_token_counts(self) -> None:
        """Raise `UnsupportedFeatureError` when neither the wire nor the host can count a
        request's tokens (before anything is rendered or sent: wink never estimates)."""
        host = self.host
        if not self.counts_tokens:
            raise UnsupportedFeatureError(
                f"{self.name} has no token-count endpoint, and wink does not estimate: "
                "count_tokens works on the Responses, Messages and Gemini wire formats",
                feature="count_tokens",
                provider=host.name,
            )
        if not host.offers_token_counts:
            why = f" ({host.no_token_counts_reason})" if host.no_token_counts_reason else ""
            raise UnsupportedFeatureError(
                f"{host.name} does not count tokens{why}, and wink does not estimate",
                feature="count_tokens",
                provider=host.name,
            )

    def build_token_count(self, request: ModelRequest) -> WireRequest:
        """The token-count request for `request`: the body `build_request` makes (the
        host's quirks applied), less what the endpoint does not take, on its path."""
        self.check_token_counts()
        wire = self.translate(request)
        host = self.host
        counted = self.token_count_form(wire.path, host.adjust_body(dict(wire.body)))
        return WireRequest(host.path(counted.path), counted.body, wire.headers)

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        """The generation request (`path`, `body`) as its token-count request."""
        raise NotImplementedError(f"{self.name} has no token-count endpoint")

    def parse_token_count(self, data: Any) -> int:
        """The input tokens of the decoded 2xx count answer; raise `MalformedResponse`
        when it is not the documented shape."""
        raise NotImplementedError(f"{self.name} has no token-count endpoint")

    # ---- its batch API

    def batch_wire(self) -> BatchWire | None:
        """Its batch API for this model (`wink.core.transport.batches`), its `batch.py`;
        None: it has none (docs/batch.md)."""
        return None


def token_count(data: Any, key: str) -> int:
    """The count a token-count answer gives under `key`: a whole number of tokens."""
    value = cast(dict[str, Any], data).get(key) if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MalformedResponse(f"the token-count answer has no whole number {key}")
    return value


def token_count_body(body: Mapping[str, Any], taken: frozenset[str]) -> dict[str, Any]:
    """A generation body less the fields a token-count endpoint does not take (the
    output limit, sampling, streaming, storage: nothing that changes the input)."""
    return {key: value for key, value in body.items() if key in taken}
