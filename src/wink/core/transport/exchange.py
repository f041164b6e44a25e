"""One round trip, put together once for every provider: the translator's parts around a
transport.

A provider (`wink.providers`) is a `Translator`: it builds the wire request, parses the
answer, maps its SDK's exceptions and names its rate-limit headers and stream format.
`Exchange` does the rest, the same for all: encode the body once as strict JSON, send it
through the transport the entry point chose, read a streamed body through the format's
decoder, check the answer's shape, read the rate-limit headers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..foundation.carriage import ContentRules, check_content
from ..foundation.errors import ConfigurationError, PromptEvaluationError, WinkError
from ..foundation.events import EventSink
from ..foundation.messages import ModelRequest, ModelResponse
from ..foundation.pricing import Pricer
from ..throttling.headers import RateLimitHeaders, rate_limit_info_from_headers
from . import wire_log
from .decoding import StreamFormat, events_of
from .errors import response_shape_error
from .http import EncodedRequest, Transport, WireRequest
from .reading import BodyReader, read_errors, read_stream

if TYPE_CHECKING:
    from .runner import OnOpen

__all__ = ["Exchange", "Translator"]


class Translator(Protocol):
    """What a provider gives the exchange (`wink.providers.base.Provider` implements it)."""

    name: ClassVar[str]
    rate_limit_headers: ClassVar[RateLimitHeaders]
    stream_format: ClassVar[StreamFormat | None]
    """How its wire streams; None: its rounds are told as a stream once whole."""
    content_rules: ClassVar[ContentRules]
    """The attachments it carries, where, within which limits (checked before sending)."""

    def build_request(self, request: ModelRequest) -> WireRequest: ...

    def build_token_count(self, request: ModelRequest) -> WireRequest:
        """The token-count request for `request` (raises `UnsupportedFeatureError`
        where there is no endpoint)."""
        ...

    def parse_token_count(self, data: Any) -> int: ...

    def parse_response(self, data: Any) -> ModelResponse:
        """The decoded 2xx body; raises `MalformedResponse` (a ValueError) when it is not
        the documented shape."""
        ...

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]: ...


class Exchange:
    """One adapter's round trips: `request` (the whole answer), `stream` (into a sink)
    and `count_tokens` (the input tokens `request` would send, by the provider's count).

    With a `pricer`, every answer it reads carries its price tag (`ModelResponse.cost`),
    a stream's `UsageReported` too."""

    __slots__ = ("_pricer", "_secrets", "_timeout", "translator")

    def __init__(
        self,
        translator: Translator,
        *,
        secrets: tuple[str, ...],
        timeout: float,
        pricer: Pricer | None = None,
    ) -> None:
        self.translator = translator
        self._secrets = secrets
        self._timeout = timeout
        self._pricer = pricer

    async def request(self, request: ModelRequest, transport: Transport) -> ModelResponse:
        content, headers = await self._post(request, self._wire(request), transport)
        return self._parse_body(request, content, headers)

    async def count_tokens(self, request: ModelRequest, transport: Transport) -> int:
        """The input tokens of `request` by the provider's own count (its token-count
        endpoint), sent and refused as `request` is."""
        wire = self._wire(request, counted=True)
        content, _headers = await self._post(request, wire, transport)
        try:
            return self.translator.parse_token_count(json.loads(content))
        except ValueError as error:  # JSON errors and MalformedResponse alike
            text = content if isinstance(content, str) else content.decode("utf-8", "replace")
            raise response_shape_error(
                request.prompt_name, str(error), body=text[:2000], secrets=self._secrets
            ) from error

    async def _post(
        self, request: ModelRequest, wire: EncodedRequest, transport: Transport
    ) -> tuple[bytes | str, Mapping[str, str] | None]:
        if not wire_log.enabled():
            with _client_refused(request), self._map_errors(request):
                return await transport.post(wire, self._time_limit(request))
        name, secrets = self.translator.name, self._secrets
        wire_log.log_request(name, self._url(wire), wire.content, secrets)
        try:
            with _client_refused(request), self._map_errors(request):
                content, headers = await transport.post(wire, self._time_limit(request))
        except Exception as error:
            wire_log.log_error(name, error, secrets)
            raise
        wire_log.log_response(name, 200, headers, content, secrets)
        return content, headers

    def _url(self, wire: EncodedRequest) -> str:
        """Where `wire` goes: its URL, or its path under the client's base URL."""
        if "://" in wire.path:
            return wire.path
        connection = getattr(self.translator, "connection", None)
        base = getattr(connection, "base_url", None)
        return f"{str(base).rstrip('/')}{wire.path}" if base else wire.path

    def encode(self, request: ModelRequest) -> EncodedRequest:
        """The request as `request` sends it, byte for byte, without sending it (a batch
        item); fails as `request` does, `phase="request"`, for what cannot be sent."""
        return self._wire(request)

    def decode(self, request: ModelRequest, data: Any) -> ModelResponse:
        """A 2xx answer body that came some other way (a batch's results), decoded JSON,
        read as `request` reads its answer."""
        try:
            response = self.translator.parse_response(data)
        except ValueError as error:  # MalformedResponse
            text = json.dumps(data, ensure_ascii=False, default=str)
            raise response_shape_error(
                request.prompt_name, str(error), body=text[:2000], secrets=self._secrets
            ) from error
        pricer = self._pricer
        return response if pricer is None else pricer.tag(response)

    async def stream(
        self,
        request: ModelRequest,
        transport: Transport,
        sink: EventSink,
        opened: OnOpen | None = None,
    ) -> ModelResponse:
        """`request`, streamed: the body is read as it arrives, through the wire format's
        decoder into `sink`, and closed whatever happens (cancellation too). `opened`
        hears of the response head (its rate headers) before the body is read."""
        translator = self.translator
        streamed = translator.stream_format
        if streamed is None:
            response = await self.request(request, transport)
            await sink.send(events_of(response))
            return response
        prompt, secrets = request.prompt_name, self._secrets
        wire = self._wire(request, streamed)
        decoder = streamed.decoder(prompt, secrets, translator.parse_response)
        reader = BodyReader(decoder, prompt, secrets, streamed.framing(), self._pricer)
        logged = wire_log.enabled()
        if logged:
            wire_log.log_request(translator.name, self._url(wire), wire.content, secrets)
        try:
            with _client_refused(request), self._map_errors(request):
                body = await transport.open_stream(wire, self._time_limit(request))
        except Exception as error:
            if logged:
                wire_log.log_error(translator.name, error, secrets)
            raise
        rate_limit = rate_limit_info_from_headers(body.headers, translator.rate_limit_headers)
        pieces = body.pieces()
        if logged:
            wire_log.log_response(translator.name, 200, body.headers, None, secrets)
            pieces = wire_log.logged_pieces(translator.name, pieces, secrets)
        try:
            if opened is not None:
                await opened(rate_limit)
            with read_errors(prompt, secrets):
                response = await read_stream(pieces, reader, sink)
        finally:  # a cancelled or failed read closes the connection here, at once
            await body.aclose()
        return response if rate_limit is None else replace(response, rate_limit=rate_limit)

    def _map_errors(self, request: ModelRequest) -> AbstractContextManager[None]:
        return self.translator.map_errors(request.prompt_name, self._secrets)

    def _wire(
        self, request: ModelRequest, streamed: StreamFormat | None = None, *, counted: bool = False
    ) -> EncodedRequest:
        """The translated request (in its `streamed` form if given, or its token-count
        form if `counted`), encoded. A part the provider cannot take, or a value JSON
        cannot carry (NaN, a lone surrogate), fails here: `phase="request"`, nothing sent."""
        translator = self.translator
        check_content(request, translator.content_rules, translator.name)
        try:
            if counted:
                wire = translator.build_token_count(request)
            else:
                wire = translator.build_request(request)
            if streamed is not None:
                wire = WireRequest(*streamed.stream_body(wire.path, wire.body), wire.headers)
            content = json.dumps(
                wire.body, ensure_ascii=False, allow_nan=False, separators=(",", ":")
            ).encode()
        except WinkError:  # the translator's own refusal (a tool_choice naming no tool)
            raise
        except (TypeError, ValueError) as error:
            raise PromptEvaluationError(
                f"cannot build the {self.translator.name} request: {type(error).__name__}: {error}",
                prompt_name=request.prompt_name,
                phase="request",
            ) from error
        return EncodedRequest(wire.path, content, wire.headers)

    def _time_limit(self, request: ModelRequest) -> float:
        """The SDK timeout for this attempt: the adapter's, cut to the deadline's rest."""
        if request.deadline is None:
            return self._timeout
        return max(0.001, min(self._timeout, request.deadline.remaining()))

    def _parse_body(
        self, request: ModelRequest, content: bytes | str, headers: Mapping[str, str] | None
    ) -> ModelResponse:
        """Decode a 2xx body; a body that is not the documented shape is
        `phase="response"`. Rate-limit headers feed the adapter's pacing."""
        translator = self.translator
        try:
            response = translator.parse_response(json.loads(content))
        except ValueError as error:  # JSON errors and MalformedResponse alike
            text = content if isinstance(content, str) else content.decode("utf-8", "replace")
            raise response_shape_error(
                request.prompt_name, str(error), body=text[:2000], secrets=self._secrets
            ) from error
        # both in one copy of the response (a dataclass `replace` is ~10 us)
        changes: dict[str, Any] = {}
        rate_limit = rate_limit_info_from_headers(headers, translator.rate_limit_headers)
        if rate_limit is not None:
            changes["rate_limit"] = rate_limit
        if self._pricer is not None:
            changes["price_tag"] = self._pricer.price_tag(response)
        return replace(response, **changes) if changes else response


@contextlib.contextmanager
def _client_refused(request: ModelRequest) -> Generator[None]:
    """A client that cannot serve the call (not the provider's kind): nothing was sent,
    `phase="request"`."""
    try:
        yield
    except ConfigurationError as error:
        raise PromptEvaluationError(
            str(error), prompt_name=request.prompt_name, phase="request"
        ) from error
