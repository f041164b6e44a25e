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

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict, cast

from typing_extensions import Unpack

from ..core.foundation.errors import (
    ConfigurationError,
    InvalidArgumentError,
    PromptEvaluationError,
    WinkError,
)
from ..core.foundation.limits import DEFAULT_MAX_OUTPUT_RETRIES, DEFAULT_MAX_ROUNDS
from ..core.foundation.messages import ModelRequest
from ..core.foundation.pricing import Pricer
from ..core.foundation.runtime import portal
from ..core.foundation.settings import ModelSettings
from ..core.throttling.limiter import InProcessLimiter, Limiter
from ..core.throttling.retry import RetryPolicy
from ..core.transport.clients import ClientPool
from ..core.transport.exchange import Exchange
from ..core.transport.http import AsyncTransport, SyncTransport, Transport
from ..core.transport.runner import Exchanging, Runner
from ..providers.base import Connection, Provider
from ..providers.host import Host, SignedCalls
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
    warn_unsupported,
)

if TYPE_CHECKING:  # the loop is imported on the first evaluation: importing an adapter
    # costs little more than importing its SDK
    from ..core.agent.loop import LoopSettings
    from ..core.foundation.builtin import BuiltinTool
    from ..core.foundation.content import Attachment
    from ..core.foundation.limits import Deadline
    from ..core.foundation.settings import ToolChoice
    from ..core.foundation.transcript import Transcript
    from ..core.prompting.prompt import Prompt
    from ..core.prompting.session import Session
    from ..core.prompting.tools import Tool
    from .batch import BatchRunner
    from .evaluator import Call

__all__ = ["AdapterOptions", "CountOptions", "ProviderAdapter"]


class CountOptions(TypedDict, total=False):
    """What `count_tokens` takes besides the prompt: what shapes the request `evaluate`
    would send first (`EvaluateOptions`' `history`, `attachments`, `settings`,
    `tool_choice`, `parallel_tool_calls`, `builtin_tools`, `session` to render with; a
    string prompt's `instructions`, `tools`, `output_type`), and a `deadline` for the count
    itself."""

    session: Session | None
    deadline: Deadline | None
    attachments: Sequence[Attachment] | None
    history: Transcript | None
    settings: ModelSettings | None
    tool_choice: ToolChoice | None
    parallel_tool_calls: bool | None
    builtin_tools: Sequence[BuiltinTool] | None
    instructions: str | None
    tools: Sequence[Tool[Any, Any] | Callable[..., Any]]
    output_type: type[Any] | None


_COUNT_OPTIONS = frozenset(CountOptions.__annotations__)


class ProviderAdapter(Evaluator, BatchMethods):
    """Runs the one core loop against one host, named by `provider`
    (`create_adapter("host:model")`'s prefix): `host` says where requests go and how they
    are signed (its `system` names it for pricing), `api` is its wire format's object for
    this model and settings. A subclass sets only `provider` (`AnthropicAdapter` and the
    others); any registered host also runs as `ProviderAdapter(model, provider="name", ...)`.
    """

    provider: str = ""

    def __init__(
        self, model: str, *, provider: str | None = None, **options: Unpack[AdapterOptions]
    ) -> None:
        given = cast(dict[str, Any], options)
        name = self._provider_name(provider)
        host_type = self._host_type(name)
        if not isinstance(cast(object, model), str) or not model.strip():
            raise ConfigurationError(f"a model name is required, got {model!r}", provider=name)
        own = host_type.option_names()
        allowed = set(AdapterOptions.__annotations__) | own
        unknown = sorted(set(given) - allowed)
        if unknown:
            raise ConfigurationError(
                f"unknown option(s) {', '.join(unknown)} for {name}; known: "
                f"{', '.join(sorted(allowed))}",
                provider=name,
                option=unknown[0],
            )
        self.model = model.strip()
        self.base_url: str | None = base_url_option(given.get("base_url"))
        self.timeout: float = positive(given.get("timeout", 60.0), "timeout")
        self._set_loop_options(given)
        self.settings: ModelSettings
        self.settings, lacked = settings_from(given, host_type.wire.settings_type)
        self._api_key: str | None = optional_str(given.get("api_key"), "api_key")
        connection = Connection(self._api_key, self.base_url, self.timeout)
        self.host: Host = host_type(
            self.model, connection, {key: given[key] for key in own if key in given}
        )
        wire = host_type.wire
        refused = self.settings.set_fields() & host_type.unsupported_settings
        unsupported = wire.unsupported_settings | host_type.unsupported_settings
        warn_unsupported(
            name,
            unsupported,
            self.settings,
            stacklevel=3,
            takes=wire.settings_type,
            lacked=lacked,
        )
        sent = replace(self.settings, **dict.fromkeys(refused)) if refused else self.settings
        self.api: Provider = wire(sent, self.host)
        client = given.get("client")
        if client is None:  # known now: no key given, none in the environment
            self._check_api_key()
        self._clients = ClientPool(
            self._client_for,
            given=_without_sdk_retries(client),
            given_is_async=client is not None and self.api.is_async_client(client),
            describe=f"{name} client",
        )
        self._secrets: tuple[str, ...] = self._known_secrets(client)
        self._telemetry = telemetry_option(given.get("tracer_provider"))
        limiter = given.get("limiter")
        if limiter is not None and not isinstance(limiter, Limiter):
            raise ConfigurationError(
                f"limiter must be a wink Limiter (InProcessLimiter, RedisLimiter), got {limiter!r}",
                option="limiter",
            )
        self.limiter: Limiter = limiter if limiter is not None else InProcessLimiter()
        self._pacer = self.limiter.pacer(self.name)
        self.prices = prices_option(options.get("prices"))
        self.pricer = Pricer(self.host.system, self.model, self.prices)
        self._exchange = self._make_exchange()

    def _make_exchange(self) -> Exchanging:
        """How this adapter's requests make their round trip (core's `Exchange`, which
        drives the provider's translator and prices each answer)."""
        return Exchange(self.api, secrets=self._secrets, timeout=self.timeout, pricer=self.pricer)

    def check_priced(self) -> None:
        self.pricer.check()

    @classmethod
    def _host_type(cls, name: str) -> type[Host]:
        """The `Host` class for `name` (the registry's)."""
        from .registry import load_host  # the registry imports this module

        return load_host(name)

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
            options.get("max_rounds", DEFAULT_MAX_ROUNDS), "max_rounds"
        )
        self.max_failed_tool_rounds: int | None = limit(
            options.get("max_failed_tool_rounds", 8), "max_failed_tool_rounds"
        )
        self.max_output_retries: int | None = check_output_retries(
            options.get("max_output_retries", DEFAULT_MAX_OUTPUT_RETRIES)
        )

    # ---- identity

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    # ---- what the public entry points (`Evaluator`) run

    def _plan(
        self, session: Session, *, blocking: bool, settings: ModelSettings | None = None
    ) -> tuple[Runner, LoopSettings]:
        return self.model_client(blocking=blocking, settings=settings), self.loop_settings()

    def check_call_settings(self, settings: ModelSettings) -> None:
        self._api_with(settings)  # not a ModelSettings, or refused by the model: raises
        unsupported = self.api.unsupported_settings | self.host.unsupported_settings
        warn_unsupported(
            self.provider, unsupported, settings, stacklevel=4, takes=self.api.settings_type
        )

    def _api_with(self, settings: ModelSettings) -> Provider:
        """The translator with a call's settings merged over the adapter's, checked as
        the adapter's were (a model that refuses them: `ConfigurationError`)."""
        if not isinstance(cast(object, settings), ModelSettings):
            raise InvalidArgumentError(
                f"settings must be a ModelSettings or None, got {type(settings).__name__}",
                argument="settings",
            )
        merged = self.settings.merged(settings)
        refused = merged.set_fields() & self.host.unsupported_settings
        sent = replace(merged, **dict.fromkeys(refused)) if refused else merged
        return type(self.api)(sent, self.host)

    def model_client(self, *, blocking: bool, settings: ModelSettings | None = None) -> Runner:
        """What serves one evaluation's requests on this adapter (the loop's
        `ModelClient`; `FallbackAdapter` chains these). `blocking`: the evaluation comes
        from a sync entry point and runs on the portal (`wink.core.foundation.runtime`),
        where an async client you passed in cannot serve it.
        `settings`: the call's, merged over the adapter's."""
        if not isinstance(cast(object, blocking), bool):
            raise InvalidArgumentError(
                f"blocking must be True or False, got {blocking!r}", argument="blocking"
            )
        exchange = self._exchange
        if settings is not None:
            exchange = Exchange(
                self._api_with(settings), secrets=self._secrets, timeout=self.timeout
            )
        runner = Runner(
            self.name,
            exchange,
            lambda request: self._transport(request, blocking),
            system=self.host.telemetry_name,
            pacer=self._pacer,
            retry_policy=self.retry_policy,
            secrets=self._secrets,
            call_ids=self.api.call_ids,
        )
        runner.origin = self.host.origin() or runner.origin
        return runner

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
        return self._client_transport(blocking)

    def _client_transport(self, blocking: bool) -> Transport:
        """The running loop's async client; a sync client the caller passed in goes
        through a worker thread (see `wink.core.transport.http`)."""
        client, sync = self._clients.get(blocking=blocking)
        calls = self.api.http_calls
        signer = self.host.signer()
        if signer is not None:
            calls = SignedCalls(calls, signer)
        if sync:
            return SyncTransport(calls, client)
        return AsyncTransport(calls, client)

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

    # ---- token counts

    async def count_tokens_async(
        self, prompt: Prompt[Any] | str, **count_options: Unpack[CountOptions]
    ) -> int:
        """The input tokens of the request `evaluate_async(prompt, ...)` would send first
        (instructions, tools, the output schema, history, images...), counted by the
        provider's token-count endpoint: Anthropic `/v1/messages/count_tokens`, Gemini
        `:countTokens`, OpenAI Responses `/responses/input_tokens`. Chat Completions and
        hosts without the endpoint raise `UnsupportedFeatureError`: wink never estimates.
        Sent under the adapter's pacing and `RetryPolicy`, and failing as `evaluate` fails
        (docs/adapters/anthropic.md#counting-tokens)."""
        checked, call = self._count_call(prompt, count_options)
        return await self._count(checked, call, blocking=False)

    def count_tokens(self, prompt: Prompt[Any] | str, **count_options: Unpack[CountOptions]) -> int:
        """The sync form of `count_tokens_async`, run on the portal as `evaluate` is."""
        checked, call = self._count_call(prompt, count_options)
        return portal().call(self._count(checked, call, blocking=True))

    def _count_call(self, prompt: object, options: CountOptions) -> tuple[Prompt[Any], Call]:
        given = cast(dict[str, Any], options)
        refused = sorted(set(given) - _COUNT_OPTIONS)
        if refused:
            raise InvalidArgumentError(
                f"count_tokens does not take {', '.join(refused)}; it takes "
                f"{', '.join(sorted(_COUNT_OPTIONS))}",
                argument=refused[0],
            )
        checked, call = self._call(prompt, given)
        api = self._api_with(call.settings) if call.settings is not None else self.api
        api.check_token_counts()  # said at the call, before anything is rendered
        return checked, call

    async def _count(self, prompt: Prompt[Any], call: Call, *, blocking: bool) -> int:
        from ..core.agent.loop import first_request
        from ..core.prompting.session import Session

        session = call.session if call.session is not None else Session()
        if prompt.tool_sources:
            self._remember(prompt.tool_sources)
        try:
            request = await first_request(
                prompt,
                session=session,
                attachments=call.attachments,
                history=call.history,
                builtin_tools=call.builtin_tools,
            )
        except WinkError:
            raise
        except Exception as error:  # a bug in a section or a tool's schema: the contract
            raise PromptEvaluationError(
                f"unexpected {type(error).__name__} while building the request: {error}",
                prompt_name=prompt.name,
                phase="request",
            ) from error
        if call.deadline is not None:
            request = replace(request, deadline=call.deadline)
        runner = self.model_client(blocking=blocking, settings=call.settings)
        return await self.retry_policy.call(
            lambda: runner.count_tokens(request), deadline=call.deadline
        )

    # ---- opening and closing

    def _prepare(self, *, sync: bool) -> None:
        self._clients.prepare(sync=sync)

    async def aclose(self) -> None:
        """Close the clients this adapter made (the running loop's and the one the sync
        entry points used). A client passed in as `client=` belongs to the caller: left open.
        The MCP servers its evaluations connected are closed too (`wink.mcp`)."""
        await self._clients.aclose()
        await self._release_sources_async()

    def close(self) -> None:
        """Close the client the sync entry points used (the portal's; it is closed at
        exit otherwise). One made on your loop needs `aclose()` there. The MCP servers its
        evaluations connected are closed too (`wink.mcp`)."""
        self._clients.close_sync()
        self._release_sources()

    # ---- clients and keys

    def _client_for(self) -> Any:
        self._check_api_key()
        return self.api.make_client()

    def _check_api_key(self) -> None:
        """No key anywhere: say which variable to set, before the SDK fails obscurely
        (when the adapter is built, and again when a client is made: a variable may have
        gone since)."""
        if self._api_key is None:
            self.host.check_credentials()

    def _known_secrets(self, client: Any) -> tuple[str, ...]:
        """Every key this adapter may send: given, in the environment, or in the caller's
        client. Each is masked wherever wink shows provider text."""
        found = [self._api_key, getattr(client, "api_key", None), *self.host.secrets()]
        return tuple(dict.fromkeys(v.strip() for v in found if isinstance(v, str) and v.strip()))


def _without_sdk_retries(client: Any) -> Any:
    """The caller's client with its own retries off, so `RetryPolicy` is the only one
    deciding. openai and anthropic clients copy cheaply (`with_options`, same pool)."""
    if client is None or not getattr(client, "max_retries", 0):
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client
