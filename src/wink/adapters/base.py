"""`ProviderAdapter`: one provider (`wink.providers`) plugged into the runtime core provides.

The three seams:

* how a client is obtained and closed: `wink.core.transport.clients.ClientPool`, fed by
  the provider's `make_client`;
* the translator: the provider object (`wink.providers.base.Provider`), driven by core's
  `Exchange`;
* the runner: the loop (`wink.core.agent.loop`), one request under pacing and the
  deadline (`wink.core.transport.runner`), the sync bridge (`wink.core.foundation.runtime`).

`ProviderAdapter` holds the caller's options and says which of those serve an evaluation
(`model_client`); the public entry points are `Evaluator`'s.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, cast

from ..core.foundation.errors import (
    ConfigurationError,
    InvalidArgumentError,
    UnsupportedSettingWarning,
)
from ..core.foundation.messages import ModelRequest
from ..core.foundation.pricing import Pricer
from ..core.foundation.settings import ModelSettings
from ..core.throttling.limiter import InProcessLimiter, Limiter
from ..core.throttling.retry import RetryPolicy
from ..core.transport.clients import ClientPool
from ..core.transport.exchange import Exchange
from ..core.transport.http import AsyncTransport, SyncTransport, Transport
from ..core.transport.runner import Exchanging, Runner
from ..providers.base import Connection, Provider
from .batch_methods import BatchMethods
from .evaluator import Evaluator
from .options import (
    AdapterOptions,
    as_bool,
    base_url_option,
    check_output_retries,
    limit,
    optional_str,
    positive,
    prices_option,
    settings_from,
    telemetry_option,
)

if TYPE_CHECKING:  # the loop is imported on the first evaluation: importing an adapter
    # costs little more than importing its SDK
    from ..core.agent.loop import LoopSettings
    from ..core.prompting.session import Session
    from .batch import BatchRunner

__all__ = ["AdapterOptions", "ProviderAdapter"]

_DEFAULT_MAX_ROUNDS = 50  # = wink.core.agent.loop.DEFAULT_MAX_ROUNDS (not imported: see above)
_DEFAULT_MAX_OUTPUT_RETRIES = 2  # = wink.core.agent.answers.DEFAULT_MAX_OUTPUT_RETRIES


class ProviderAdapter(Evaluator, BatchMethods):
    """Runs the one core loop against one provider, named by `provider`
    (`create_adapter("provider:model")`'s prefix); its wire format is `api`, the
    provider's object for this model and settings. A subclass sets only `provider`
    (`AnthropicAdapter` and the others); any registered provider also runs as
    `ProviderAdapter(model, provider="name", ...)`.
    """

    provider: str = ""

    def __init__(self, model: str, *, provider: str | None = None, **options: Any) -> None:
        name = self._provider_name(provider)
        api_type = self._provider_type(name)
        if not isinstance(cast(object, model), str) or not model.strip():
            raise ConfigurationError(f"a model name is required, got {model!r}", provider=name)
        unknown = sorted(set(options) - set(AdapterOptions.__annotations__))
        if unknown:
            known = ", ".join(sorted(AdapterOptions.__annotations__))
            raise ConfigurationError(
                f"unknown option(s) {', '.join(unknown)} for {name}; known: {known}",
                provider=name,
                option=unknown[0],
            )
        self.model = model.strip()
        self.base_url: str | None = base_url_option(options.get("base_url"))
        self.timeout: float = positive(options.get("timeout", 60.0), "timeout")
        self._set_loop_options(options)
        self.settings: ModelSettings = settings_from(options)
        unsupported = self.settings.set_fields() & api_type.unsupported_settings
        if unsupported:
            warnings.warn(
                f"{name} cannot honour {', '.join(sorted(unsupported))}; it is not sent "
                "(filter UnsupportedSettingWarning to silence, or make it an error)",
                UnsupportedSettingWarning,
                stacklevel=3,
            )
        self._api_key: str | None = optional_str(options.get("api_key"), "api_key")
        self.api: Provider = api_type(
            self.model, self.settings, Connection(self._api_key, self.base_url, self.timeout)
        )
        client = options.get("client")
        self._clients = ClientPool(
            self._client_for,
            given=_without_sdk_retries(client),
            given_is_async=client is not None and self.api.is_async_client(client),
            describe=f"{name} client",
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
        self.prices = prices_option(options.get("prices"))
        self.pricer = Pricer(api_type.price_provider_id, self.model, self.prices)
        self._exchange = self._make_exchange()

    def _make_exchange(self) -> Exchanging:
        """How this adapter's requests make their round trip (core's `Exchange`, which
        drives the provider's translator and prices each answer)."""
        return Exchange(self.api, secrets=self._secrets, timeout=self.timeout, pricer=self.pricer)

    def _check_priced(self) -> None:
        self.pricer.check()

    @classmethod
    def _provider_type(cls, name: str) -> type[Provider]:
        """The `Provider` class for `name` (the registry's)."""
        from .registry import load_provider  # the registry imports this module

        return load_provider(name)

    def _provider_name(self, given: str | None) -> str:
        fixed = type(self).provider
        if given is None:
            if not fixed:
                raise ConfigurationError(
                    "ProviderAdapter needs provider= (a registered provider's name, as in "
                    "create_adapter's 'provider:model'), or use create_adapter"
                )
            return fixed
        if not isinstance(cast(object, given), str):
            raise InvalidArgumentError(
                f"provider must be a provider's name, got {type(given).__name__}",
                argument="provider",
            )
        if fixed and given != fixed:
            raise ConfigurationError(
                f"{type(self).__name__} is the {fixed} adapter, not {given}", provider=given
            )
        self.provider = given
        return given

    def _set_loop_options(self, options: dict[str, Any]) -> None:
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
            lambda request: self._transport(request, blocking),
            system=self.api.telemetry_name,
            pacer=self._pacer,
            retry_policy=self.retry_policy,
            secrets=self._secrets,
            call_ids=self.api.call_ids,
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

    def _transport(self, request: ModelRequest, blocking: bool) -> Transport:
        # in place only on a sync entry point's private loop, and with no deadline to cut
        # the wait; else on a worker thread
        return self._client_transport(blocking, offload=request.deadline is not None)

    def _client_transport(self, blocking: bool, *, offload: bool = False) -> Transport:
        client, sync = self._clients.get(blocking=blocking)
        calls = self.api.http_calls
        if not sync:
            return AsyncTransport(calls, client)
        return SyncTransport(calls, client, offload=offload or not blocking)

    def _batch_runner(self, *, blocking: bool) -> BatchRunner:
        from .batch import BatchRunner

        return BatchRunner(
            self.name,
            self.api,
            lambda: self._client_transport(blocking),
            secrets=self._secrets,
            timeout=self.timeout,
            retry_policy=self.retry_policy,
            loop_settings=self.loop_settings(),
            pricer=self.pricer.for_batch(),
        )

    # ---- opening and closing

    def _prepare(self, *, sync: bool) -> None:
        self._clients.prepare(sync=sync)

    async def aclose(self) -> None:
        """Close the clients this adapter made (the running loop's async client and the
        sync client). A client passed in as `client=` belongs to the caller: left open.
        The MCP servers its evaluations connected are closed too (`wink.mcp`)."""
        await self._clients.aclose()
        await self._release_sources_async()

    def close(self) -> None:
        """Close the sync client `evaluate()` used. Async clients made by `evaluate()`
        are closed with its call; one made on your loop needs `aclose()` there. The MCP
        servers its evaluations connected are closed too (`wink.mcp`)."""
        self._clients.close_sync()
        self._release_sources()

    # ---- clients and keys

    def _client_for(self, sync: bool) -> Any:
        self._check_api_key()
        return self.api.make_client(sync=sync)

    def _check_api_key(self) -> None:
        """No key anywhere: say which variable to set, before the SDK fails obscurely."""
        variables = self.api.api_key_variables
        if self._api_key or not variables or self.api.key_optional():
            return
        if any(os.environ.get(name) for name in variables):
            return
        raise ConfigurationError(
            f"no API key for {self.provider}: set {' or '.join(variables)} or pass api_key=",
            provider=self.provider,
            option="api_key",
        )

    def _known_secrets(self, client: Any) -> tuple[str, ...]:
        """Every key this adapter may send: given, in the environment, or in the caller's
        client. Each is masked wherever wink shows provider text."""
        found = [self._api_key, getattr(client, "api_key", None)]
        found += [os.environ.get(name) for name in self.api.api_key_variables]
        return tuple(dict.fromkeys(v.strip() for v in found if isinstance(v, str) and v.strip()))


def _without_sdk_retries(client: Any) -> Any:
    """The caller's client with its own retries off, so `RetryPolicy` is the only one
    deciding. openai and anthropic clients copy cheaply (`with_options`, same pool)."""
    if client is None or not getattr(client, "max_retries", 0):
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client
