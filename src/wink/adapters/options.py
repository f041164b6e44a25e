"""What a caller configures an adapter with, checked once: every bad value is a typed
`WinkError` at the call that passed it, before anything is sent."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast
from urllib.parse import urlsplit

from ..core.foundation.cost import Prices
from ..core.foundation.errors import (
    ConfigurationError,
    InvalidArgumentError,
    UnsupportedSettingWarning,
)
from ..core.foundation.settings import (
    SETTING_NAMES,
    Effort,
    ModelSettings,
    Thinking,
    ToolChoice,
)
from ..core.throttling.limiter import Limiter
from ..core.throttling.retry import RetryPolicy
from ..providers.azure.options import AzureOptions
from ..providers.bedrock.options import BedrockOptions
from ..providers.vertex.options import VertexOptions

if TYPE_CHECKING:
    from ..core.telemetry.spans import Telemetry

__all__ = [
    "AdapterOptions",
    "AnyHostOptions",
    "as_bool",
    "base_url_option",
    "check_arguments",
    "check_output_retries",
    "limit",
    "optional_str",
    "positive",
    "prices_option",
    "settings_from",
    "telemetry_option",
    "warn_unsupported",
]


class AdapterOptions(TypedDict, total=False):
    """The keyword options of `create_adapter` and of every adapter class.

    Connection: `client` (a ready SDK client, sync or async; wink turns its retries off),
    `base_url` (a compatible server, a proxy, the emulator), `api_key` (else the
    provider's environment variable), `timeout` (seconds per request attempt).
    Behaviour: `retry_policy`, `graceful_tool_errors`, `max_rounds` (model turns per
    evaluation, default 50), `max_failed_tool_rounds` (default 8), `max_output_retries`
    (how many structured answers that do not validate the model may correct, default 2;
    0 fails on the first, None sets no limit but `max_rounds`).
    Sampling: `settings` (a `ModelSettings`), or its fields one by one: `temperature`,
    `max_tokens`, `top_p`, `stop`, `seed`, `thinking` (a `Thinking`, an effort such as
    "high", or a token budget such as 2048), `extra_body`; OpenAI's prompt cache:
    `prompt_cache_key`, `prompt_cache_retention` ("in_memory" or "24h"; docs/caching.md),
    fields of its wire's `OpenAISettings` (another wire warns that it cannot honour them).
    Tools: `tool_choice` ("auto", "required", "none" or a tool's name) and
    `parallel_tool_calls` (docs/tools.md#tool-choice).
    Tracing: `tracer_provider` (an OpenTelemetry `TracerProvider`; default: the global one
    once the application has configured OpenTelemetry; see docs/observability.md).
    Pacing: `limiter` (default: this adapter's own `InProcessLimiter`; a `RedisLimiter`
    shares the provider's limit across processes, see docs/fleet.md).
    Cost: `prices` (a `Prices`: your own per-million rates for this model, which win over
    genai-prices'; see docs/cost.md).
    """

    client: Any
    base_url: str | None
    api_key: str | None
    timeout: float
    retry_policy: RetryPolicy | None
    graceful_tool_errors: bool
    max_rounds: int | None
    max_failed_tool_rounds: int | None
    max_output_retries: int | None
    settings: ModelSettings | None
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    stop: list[str] | tuple[str, ...] | str | None
    seed: int | None
    thinking: Thinking | Effort | int | None
    extra_body: Mapping[str, Any] | None
    prompt_cache_key: str | None
    prompt_cache_retention: Literal["in_memory", "24h"] | None
    tool_choice: ToolChoice | None
    parallel_tool_calls: bool | None
    tracer_provider: Any
    limiter: Limiter | None
    prices: Prices | None


class AnyHostOptions(AdapterOptions, AzureOptions, BedrockOptions, VertexOptions, total=False):
    """`create_adapter`'s options: the common ones and every built-in host's own (each
    host refuses another's, by name: `Host.options`)."""


# A wire's own settings, passed loose like the shared ones: fields of its settings class
# (`Provider.settings_type`), warned about by a wire whose class has no such field.
_WIRE_SETTING_OPTIONS = ("prompt_cache_key", "prompt_cache_retention")
_SETTING_OPTIONS = (*SETTING_NAMES, *_WIRE_SETTING_OPTIONS, "extra_body")


# --- checks


def check_arguments(
    prompt: object,
    session: object,
    deadline: object,
    budget: object,
    graceful_tool_errors: object,
    max_rounds: object,
    max_output_retries: object = None,
) -> None:
    """Wrong types fail here, at the call, before anything is rendered or sent."""
    from ..core.foundation.limits import Budget, Deadline
    from ..core.prompting.prompt import Prompt
    from ..core.prompting.session import Session

    if not isinstance(prompt, Prompt):
        raise InvalidArgumentError(
            f"prompt must be a string or a wink Prompt, got {type(prompt).__name__}",
            argument="prompt",
        )
    if session is not None and not isinstance(session, Session):
        raise InvalidArgumentError(
            f"session must be a wink Session (Session()) or None, got {type(session).__name__}",
            argument="session",
        )
    for name, value, kind in (("deadline", deadline, Deadline), ("budget", budget, Budget)):
        if value is not None and not isinstance(value, kind):
            raise InvalidArgumentError(
                f"{name} must be a {kind.__name__} or None, got {type(value).__name__}",
                argument=name,
            )
    if graceful_tool_errors is not None and not isinstance(graceful_tool_errors, bool):
        raise InvalidArgumentError(
            f"graceful_tool_errors must be a bool or None, got {graceful_tool_errors!r}",
            argument="graceful_tool_errors",
        )
    if max_rounds is not None and (
        not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1
    ):
        raise InvalidArgumentError(
            f"max_rounds must be an int >= 1 or None, got {max_rounds!r}",
            argument="max_rounds",
        )
    check_output_retries(max_output_retries, per_call=True)


def check_output_retries(value: object, *, per_call: bool = False) -> int | None:
    """`max_output_retries` checked: an int >= 0 or None (a call's None: the adapter's)."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        message = f"max_output_retries must be an int >= 0 or None, got {value!r}"
        if per_call:
            raise InvalidArgumentError(message, argument="max_output_retries")
        raise ConfigurationError(message, option="max_output_retries")
    return value


def settings_from(
    options: Mapping[str, Any], settings_type: type[ModelSettings] = ModelSettings
) -> tuple[ModelSettings, frozenset[str]]:
    """The adapter's settings, of its wire's class (`settings_type`), from `settings=` or
    the loose options; and the loose ones that class has no field for (not kept: the
    caller warns about them)."""
    given = options.get("settings")
    loose = {name: options[name] for name in _SETTING_OPTIONS if options.get(name) is not None}
    if given is not None:
        if not isinstance(given, ModelSettings):
            raise ConfigurationError(
                f"settings must be a ModelSettings, got {given!r}", option="settings"
            )
        if loose:
            raise ConfigurationError(
                f"pass either settings= or {', '.join(sorted(loose))}, not both",
                option="settings",
            )
        return given, frozenset()
    extra = loose.pop("extra_body", None)
    if extra is not None and not isinstance(extra, Mapping):
        raise ConfigurationError(
            f"extra_body must be a mapping, got {type(extra).__name__}", option="extra_body"
        )
    takes = {f.name for f in fields(settings_type)}
    lacked = frozenset(loose.keys() - takes)
    kept = {name: value for name, value in loose.items() if name in takes}
    return settings_type(**kept, extra=dict(cast(Mapping[str, Any], extra or {}))), lacked


def telemetry_option(tracer_provider: object) -> Telemetry | None:
    """`tracer_provider=` checked: anything with `get_tracer` (an OpenTelemetry
    `TracerProvider`), or None for the global one."""
    if tracer_provider is None:
        return None
    if not callable(getattr(tracer_provider, "get_tracer", None)):
        raise ConfigurationError(
            "tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer), "
            f"got {type(tracer_provider).__name__}",
            option="tracer_provider",
        )
    from ..core.telemetry.spans import Telemetry

    return Telemetry(tracer_provider)


def base_url_option(value: object) -> str | None:
    """`base_url=` checked once for every provider: None, or an http(s) URL with a host.

    Without this a URL missing its scheme ("localhost:8080") reached the SDKs, which
    retried it as a connection failure or refused it only at the first request."""
    url = optional_str(value, "base_url")
    if url is None:
        return None
    parts = urlsplit(url)
    try:
        valid = (
            parts.scheme in ("http", "https")
            and bool(parts.hostname)
            and (parts.port is None or parts.port > 0)
        )
    except ValueError:  # a port that is not a number
        valid = False
    if not valid:
        hint = "for example 'http://localhost:8080'"
        if url and "://" not in url:
            hint = f"did you mean 'http://{url}'?"
        raise ConfigurationError(
            f"base_url must be an http:// or https:// URL with a host, got {url!r}: {hint}",
            option="base_url",
        )
    return url


def optional_str(value: object, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(
            f"{name} must be a string, got {type(value).__name__}", option=name
        )
    return value


def positive(value: object, name: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise ConfigurationError(f"{name} must be a positive number, got {value!r}", option=name)
    return float(value)


def as_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False, got {value!r}", option=name)
    return value


def limit(value: object, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigurationError(f"{name} must be an int >= 1 or None, got {value!r}", option=name)
    return value


def prices_option(value: object) -> Prices | None:
    """The adapter's own `prices=`: a `Prices`, or None for genai-prices'."""
    if value is None or isinstance(value, Prices):
        return value
    raise ConfigurationError(
        f"prices must be a wink.Prices (per-million rates), got {type(value).__name__}",
        option="prices",
    )


def warn_unsupported(
    name: str,
    unsupported: frozenset[str],
    settings: ModelSettings,
    *,
    stacklevel: int,
    takes: type[ModelSettings] = ModelSettings,
    lacked: frozenset[str] = frozenset(),
) -> None:
    """A setting the provider cannot honour is warned about, never silently dropped
    (at the adapter, a call, a batch item alike): one it refuses (`unsupported`), one
    its wire's settings class (`takes`) has no field for, one left out (`lacked`)."""
    own = settings.set_fields()
    found = (own & unsupported) | (own - {f.name for f in fields(takes)}) | lacked
    if found:
        warnings.warn(
            f"{name} cannot honour {', '.join(sorted(found))}; it is not sent "
            "(filter UnsupportedSettingWarning to silence, or make it an error)",
            UnsupportedSettingWarning,
            stacklevel=stacklevel + 1,
        )
