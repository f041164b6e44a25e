"""The adapter: a provider's translator, plugged into the runtime that core provides.

Three seams, as the design asks:

* how a client is obtained and closed: `wink.core.transport.clients.ClientPool`, fed by the
  provider's `_make_client`;
* the translator, in the provider's file: `_build_request` (neutral -> wire body),
  `_parse_response` (wire -> neutral) and `_map_errors` (SDK exceptions -> the contract);
* the runner: the loop (`wink.core.agent.loop`), one request under pacing and the deadline
  (`wink.core.transport.runner`), and the sync bridge (`wink.core.foundation.runtime`).

`ProviderAdapter` itself holds the caller's options and the public entry points.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from abc import abstractmethod
from collections.abc import Generator, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ..core.foundation.errors import (
    ConfigurationError,
    InvalidArgumentError,
    PromptEvaluationError,
    UnsupportedSettingWarning,
)
from ..core.foundation.events import EventSink
from ..core.foundation.messages import ModelRequest, ModelResponse
from ..core.limiter import InProcessLimiter, Limiter
from ..core.throttling.headers import (
    NO_RATE_LIMIT_HEADERS,
    RateLimitHeaders,
    rate_limit_info_from_headers,
)
from ..core.throttling.retry import RetryPolicy
from ..core.transport.clients import ClientPool
from ..core.transport.errors import response_shape_error
from ..core.transport.http import (
    AsyncTransport,
    EncodedRequest,
    HttpCalls,
    SyncTransport,
    Transport,
    WireRequest,
)
from ..core.transport.runner import Runner
from .evaluator import Evaluator
from .options import (
    AdapterOptions,
    ModelSettings,
    as_bool,
    base_url_option,
    check_output_retries,
    limit,
    optional_str,
    positive,
    settings_from,
    telemetry_option,
)

if TYPE_CHECKING:  # the loop is imported on the first evaluation: importing an adapter
    # costs little more than importing its SDK
    from ..core.agent.loop import LoopSettings
    from ..core.prompting.session import Session
    from ..core.transport.decoding import StreamFormat

__all__ = [
    "AdapterOptions",
    "EncodedRequest",
    "ModelSettings",
    "ProviderAdapter",
    "StainlessCalls",
    "WireRequest",
]

_DEFAULT_MAX_ROUNDS = 50  # = wink.core.agent.loop.DEFAULT_MAX_ROUNDS (not imported: see above)
_DEFAULT_MAX_OUTPUT_RETRIES = 2  # = wink.core.agent.answers.DEFAULT_MAX_OUTPUT_RETRIES


class ProviderAdapter(Evaluator):
    """Runs the one core loop against one provider; a subclass only translates.

    A subclass sets `provider` (the prefix of `create_adapter("provider:model")`) and
    `api_key_variables`, and implements `_make_client`, `_build_request`,
    `_parse_response`, `_map_errors` and `_http_calls` (a Stainless SDK's are
    `StainlessCalls`; a provider whose SDK has no raw call brings its own `HttpCalls`).
    """

    provider: ClassVar[str]
    api_key_variables: ClassVar[tuple[str, ...]] = ()
    unsupported_settings: ClassVar[frozenset[str]] = frozenset()
    rate_limit_headers: ClassVar[RateLimitHeaders] = NO_RATE_LIMIT_HEADERS

    def __init__(self, model: str, **options: Any) -> None:
        if not isinstance(cast(object, model), str) or not model.strip():
            raise ConfigurationError(
                f"a model name is required, got {model!r}", provider=self.provider
            )
        unknown = sorted(set(options) - set(AdapterOptions.__annotations__))
        if unknown:
            known = ", ".join(sorted(AdapterOptions.__annotations__))
            raise ConfigurationError(
                f"unknown option(s) {', '.join(unknown)} for {self.provider}; known: {known}",
                provider=self.provider,
                option=unknown[0],
            )
        self.model = model.strip()
        self.base_url: str | None = base_url_option(options.get("base_url"))
        self.timeout: float = positive(options.get("timeout", 60.0), "timeout")
        policy = options.get("retry_policy")
        if policy is not None and not isinstance(policy, RetryPolicy):
            raise ConfigurationError(
                f"retry_policy must be a RetryPolicy, got {policy!r}", option="retry_policy"
            )
        self.retry_policy: RetryPolicy = policy if policy is not None else RetryPolicy()
        self.graceful_tool_errors: bool = as_bool(
            options.get("graceful_tool_errors", True), "graceful_tool_errors"
        )
        self.max_rounds: int | None = limit(
            options.get("max_rounds", _DEFAULT_MAX_ROUNDS), "max_rounds"
        )
        self.max_failed_tool_rounds: int | None = limit(
            options.get("max_failed_tool_rounds", 8), "max_failed_tool_rounds"
        )
        self.max_output_retries: int | None = check_output_retries(
            options.get("max_output_retries", _DEFAULT_MAX_OUTPUT_RETRIES)
        )
        self.settings: ModelSettings = settings_from(options)
        unsupported = self.settings.set_fields() & self.unsupported_settings
        if unsupported:
            import warnings

            warnings.warn(
                f"{self.provider} cannot honour {', '.join(sorted(unsupported))}; it is not "
                "sent (filter UnsupportedSettingWarning to silence, or make it an error)",
                UnsupportedSettingWarning,
                stacklevel=3,
            )
        self._check_settings()
        self._api_key: str | None = optional_str(options.get("api_key"), "api_key")
        client = options.get("client")
        self._clients = ClientPool(
            self._client_for,
            given=_without_sdk_retries(client),
            given_is_async=client is not None and self._is_async_client(client),
            describe=f"{self.provider} client",
        )
        self._secrets: tuple[str, ...] = self._known_secrets(client)
        self._telemetry = telemetry_option(options.get("tracer_provider"))
        limiter = options.get("limiter")
        if limiter is not None and not isinstance(limiter, Limiter):
            raise ConfigurationError(
                f"limiter must be a wink Limiter (InProcessLimiter, RedisLimiter), got {limiter!r}",
                option="limiter",
            )
        self.limiter: Limiter = limiter if limiter is not None else InProcessLimiter()
        self._pacer = self.limiter.pacer(self.name)
        self._calls = self._http_calls()

    # ---- identity

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    # ---- what the public entry points (`Evaluator`) run

    def _plan(self, session: Session, *, blocking: bool) -> tuple[Runner, LoopSettings]:
        return self.model_client(blocking=blocking), self.loop_settings()

    def model_client(self, *, blocking: bool) -> Runner:
        """What serves one evaluation's requests on this adapter (the loop's
        `ModelClient`; `FallbackAdapter` chains these). `blocking`: the evaluation runs
        on a private loop of a sync entry point (see `wink.core.transport.http`)."""
        if not isinstance(cast(object, blocking), bool):
            raise InvalidArgumentError(
                f"blocking must be True or False, got {blocking!r}", argument="blocking"
            )
        return Runner(
            self.name,
            self._exchange,
            self._stream_exchange,
            lambda request: self._transport(request, blocking),
            pacer=self._pacer,
            retry_policy=self.retry_policy,
            secrets=self._secrets,
        )

    def loop_settings(self) -> LoopSettings:
        """How the loop runs an evaluation on this adapter (a call may override some)."""
        from ..core.agent.loop import LoopSettings
        from ..core.telemetry.spans import telemetry_for

        return LoopSettings(
            retry_policy=self.retry_policy,
            graceful_tool_errors=self.graceful_tool_errors,
            max_failed_tool_rounds=self.max_failed_tool_rounds,
            max_rounds=self.max_rounds,
            max_output_retries=self.max_output_retries,
            telemetry=telemetry_for(self._telemetry),
        )

    # ---- opening and closing

    def _prepare(self, *, sync: bool) -> None:
        self._clients.prepare(sync=sync)

    async def aclose(self) -> None:
        """Close the clients this adapter made (the running loop's async client and the
        sync client). A client passed in as `client=` belongs to the caller: left open."""
        await self._clients.aclose()

    def close(self) -> None:
        """Close the sync client `evaluate()` used. Async clients made by `evaluate()`
        are closed with its call; one made on your loop needs `aclose()` there."""
        self._clients.close_sync()

    # ---- one exchange: the translator's parts, put together once

    def _transport(self, request: ModelRequest, blocking: bool) -> Transport:
        client, sync = self._clients.get(blocking=blocking)
        if not sync:
            return AsyncTransport(self._calls, client)
        # in place only on a sync entry point's private loop, and with no deadline to cut
        # the wait; else on a worker thread
        offload = not blocking or request.deadline is not None
        return SyncTransport(self._calls, client, offload=offload)

    async def _exchange(self, request: ModelRequest, transport: Transport) -> ModelResponse:
        wire = self._wire(request)
        with self._client_refused(request), self._map_errors(request.prompt_name):
            content, headers = await transport.post(wire, self._request_timeout(request))
        return self._parse_body(request, content, headers)

    async def _stream_exchange(
        self, request: ModelRequest, transport: Transport, sink: EventSink
    ) -> ModelResponse:
        """`_exchange`, streamed: the body is read as it arrives, through the wire
        format's decoder into `sink`, and closed whatever happens (cancellation too).
        An adapter with no streaming wire sends its whole answer as events."""
        from ..core.transport.decoding import events_of
        from ..core.transport.reading import BodyReader, read_errors, read_stream
        from ..providers.streams import stream_format

        streamed = stream_format(self.provider)
        if streamed is None:
            response = await self._exchange(request, transport)
            await sink.send(events_of(response))
            return response
        prompt, secrets = request.prompt_name, self._secrets
        wire = self._wire(request, streamed)
        reader = BodyReader(streamed.decoder(prompt, secrets), prompt, secrets)
        with self._client_refused(request), self._map_errors(prompt):
            body = await transport.open_stream(wire, self._request_timeout(request))
        try:
            with read_errors(prompt, secrets):
                response = await read_stream(body.pieces(), reader, sink)
        finally:  # a cancelled or failed read closes the connection here, at once
            await body.aclose()
        rate_limit = rate_limit_info_from_headers(body.headers, self.rate_limit_headers)
        return response if rate_limit is None else replace(response, rate_limit=rate_limit)

    @staticmethod
    @contextlib.contextmanager
    def _client_refused(request: ModelRequest) -> Generator[None]:
        """A client that cannot serve the call (not the provider's kind): nothing was
        sent, `phase="request"`."""
        try:
            yield
        except ConfigurationError as error:
            raise PromptEvaluationError(
                str(error), prompt_name=request.prompt_name, phase="request"
            ) from error

    def _wire(self, request: ModelRequest, streamed: StreamFormat | None = None) -> EncodedRequest:
        """The translated request (in its `streamed` form if given), encoded. A value JSON
        cannot carry (NaN, a lone surrogate) fails here: `phase="request"`, nothing sent."""
        try:
            wire = self._build_request(request)
            if streamed is not None:
                wire = WireRequest(*streamed.stream_body(wire.path, wire.body))
            content = json.dumps(
                wire.body, ensure_ascii=False, allow_nan=False, separators=(",", ":")
            ).encode()
        except (TypeError, ValueError) as error:
            raise PromptEvaluationError(
                f"cannot build the {self.provider} request: {type(error).__name__}: {error}",
                prompt_name=request.prompt_name,
                phase="request",
            ) from error
        return EncodedRequest(wire.path, content)

    def _client_for(self, sync: bool) -> Any:
        self._check_api_key()
        return self._make_client(sync=sync)

    def _check_api_key(self) -> None:
        """No key anywhere: say which variable to set, before the SDK fails obscurely."""
        if self._api_key or not self.api_key_variables or self._key_optional():
            return
        if any(os.environ.get(name) for name in self.api_key_variables):
            return
        names = " or ".join(self.api_key_variables)
        raise ConfigurationError(
            f"no API key for {self.provider}: set {names} or pass api_key=",
            provider=self.provider,
            option="api_key",
        )

    def _key_optional(self) -> bool:
        """True where a server may need no key (OpenAI-compatible servers)."""
        return False

    def _request_timeout(self, request: ModelRequest) -> float:
        """The SDK timeout for this attempt: the adapter's, cut to the deadline's rest."""
        if request.deadline is None:
            return self.timeout
        return max(0.001, min(self.timeout, request.deadline.remaining()))

    def _parse_body(
        self, request: ModelRequest, content: bytes | str, headers: Mapping[str, str] | None
    ) -> ModelResponse:
        """Decode a 2xx body; a body that is not the documented shape is
        `phase="response"`. Rate-limit headers feed the adapter's pacing."""
        try:
            response = self._parse_response(json.loads(content), request)
        except ValueError as error:  # JSON errors and MalformedResponse alike
            text = content if isinstance(content, str) else content.decode("utf-8", "replace")
            raise response_shape_error(
                request.prompt_name, str(error), body=text[:2000], secrets=self._secrets
            ) from error
        rate_limit = rate_limit_info_from_headers(headers, self.rate_limit_headers)
        return response if rate_limit is None else replace(response, rate_limit=rate_limit)

    def _known_secrets(self, client: Any) -> tuple[str, ...]:
        """Every key this adapter may send: given, in the environment, or in the caller's
        client. Each is masked wherever wink shows provider text."""
        found = [self._api_key, getattr(client, "api_key", None)]
        found += [os.environ.get(name) for name in self.api_key_variables]
        return tuple(dict.fromkeys(v.strip() for v in found if isinstance(v, str) and v.strip()))

    # ---- the translator: what a provider file implements

    def _check_settings(self) -> None:
        """Raise `ConfigurationError` for a setting this model refuses (at construction,
        not on the first request). Every setting is accepted unless a provider says not."""
        return

    @abstractmethod
    def _make_client(self, *, sync: bool) -> Any:
        """A new SDK client with its own retries off; `sync=True` may return None (the
        provider has no sync client: evaluate() then uses the async one)."""

    def _is_async_client(self, client: Any) -> bool:
        """Whether a caller's client is async (its calls return awaitables)."""
        return inspect.iscoroutinefunction(getattr(client, "post", None))

    @abstractmethod
    def _http_calls(self) -> HttpCalls:
        """How this provider's requests go out (made once, by the constructor)."""

    @abstractmethod
    def _build_request(self, request: ModelRequest) -> WireRequest:
        """The neutral request as the provider's path and body."""

    @abstractmethod
    def _parse_response(self, data: Any, request: ModelRequest) -> ModelResponse:
        """The provider's decoded 2xx body as a `ModelResponse`; raise
        `MalformedResponse` (a ValueError) when it is not the documented shape."""

    @abstractmethod
    def _map_errors(self, prompt_name: str) -> AbstractContextManager[None]:
        """Translate what the SDK raises inside the block (`map_sdk_errors`)."""


class StainlessCalls:
    """The HTTP calls of a Stainless SDK (openai, anthropic): its documented raw call.

    `client.post(path, cast_to=<its httpx>.Response, content=...)` keeps auth, headers,
    base URL, timeout and exception types the SDK's, and skips `create()`'s walk over the
    whole conversation on every request and its response models. With `stream=True` the
    SDK returns the response once its head is in (an error status raises the SDK's
    exception, read and mapped as for `post`).
    """

    __slots__ = ("_response_type",)

    def __init__(self, response_type: type) -> None:
        self._response_type = response_type

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes, Any]:
        http = client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
        )
        return http.content, http.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes, Any]:
        http = await client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
        )
        return http.content, http.headers

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
            stream=True,
        )

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options={"timeout": time_limit},
            stream=True,
        )


def _without_sdk_retries(client: Any) -> Any:
    """The caller's client with its own retries off, so `RetryPolicy` is the only one
    deciding. openai and anthropic clients copy cheaply (`with_options`, same pool)."""
    if client is None or not getattr(client, "max_retries", 0):
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client
