"""`Host`: where a wire format's requests go and how they are signed.

A wire format (`Provider`, one folder per API shape: translator, stream decoder, error
table, content and thinking rules) says what a request and its answer look like. A host
says where it goes: its base URL and path shape, its auth (an API key header, a bearer
token from a callable that refreshes, none), the environment variables its key is read
from, its own options, its system name (telemetry and pricing), its model-id rules and
whether it offers batches. `openai`, `azure`, `deepseek` and `ollama` are four hosts of
one wire (Chat Completions); `vertex-anthropic` is a host of Anthropic's.

`create_adapter("<host>:<model>")` names a host; the registry
(`wink.adapters.registry.HOSTS`) says which module holds its class. docs/architecture.md
shows how to add one.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict, cast

from ..core.foundation.errors import ConfigurationError
from ..core.foundation.runtime import run_in_thread
from ..core.transport.http import EncodedRequest, HttpCalls

if TYPE_CHECKING:
    from .base import Connection, Provider

__all__ = [
    "BearerToken",
    "Endpoint",
    "Host",
    "REFRESH_MARGIN",
    "NoHostOptions",
    "OutgoingRequest",
    "SignedCalls",
    "Signer",
    "TokenProvider",
    "key_from",
]


class NoHostOptions(TypedDict, total=False):
    """A host with no options of its own (the common `AdapterOptions` only)."""


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """One request as it leaves: what a `Signer` signs."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes


class Signer(Protocol):
    """Adds auth to each request: the headers to send with it. `sign` may block (it runs
    where the sync client runs); `sign_async` must not block the event loop (a refresh
    runs on a worker thread)."""

    def sign(self, request: OutgoingRequest) -> Mapping[str, str]: ...

    async def sign_async(self, request: OutgoingRequest) -> Mapping[str, str]: ...


class SignedCalls:
    """A wire's HTTP calls with a host's `Signer`: each request gets the signer's headers
    (`sign` where the sync client runs, `sign_async` on the loop, which refreshes off it)."""

    __slots__ = ("_calls", "_signer")

    def __init__(self, calls: HttpCalls, signer: Signer) -> None:
        self._calls = calls
        self._signer = signer

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return self._calls.post(client, self._signed(client, wire), time_limit)

    async def post_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        signed = await self._signed_async(client, wire)
        return await self._calls.post_async(client, signed, time_limit)

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return self._calls.open_stream(client, self._signed(client, wire), time_limit)

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        signed = await self._signed_async(client, wire)
        return await self._calls.open_stream_async(client, signed, time_limit)

    def _signed(self, client: Any, wire: EncodedRequest) -> EncodedRequest:
        added = self._signer.sign(_outgoing(client, wire))
        return EncodedRequest(wire.path, wire.content, {**(wire.headers or {}), **added})

    async def _signed_async(self, client: Any, wire: EncodedRequest) -> EncodedRequest:
        added = await self._signer.sign_async(_outgoing(client, wire))
        return EncodedRequest(wire.path, wire.content, {**(wire.headers or {}), **added})


def _outgoing(client: Any, wire: EncodedRequest) -> OutgoingRequest:
    """The request as it leaves: a path is joined to the client's `base_url`."""
    url = wire.path
    if "://" not in url:
        base = str(getattr(client, "base_url", "")).rstrip("/")
        url = f"{base}/{url.lstrip('/')}"
    return OutgoingRequest("POST", url, wire.headers or {}, wire.content)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What a wire's client is made with: `base_url` (None: the SDK's own), `api_key`
    (for the SDK's own auth header; None: the SDK reads its variable), `headers` sent
    on every request (a host's key header), `query` added to every URL (Azure's legacy
    `api-version`), `sdk_auth` (False: the SDK's own auth header is not sent, the host
    signs instead)."""

    base_url: str | None
    api_key: str | None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    query: Mapping[str, str] = field(default_factory=dict[str, str])
    sdk_auth: bool = True


TokenProvider = Callable[[], Any]
"""A callable returning a bearer token: a string (azure-identity's
`get_bearer_token_provider(...)`), or an object with `token` and `expires_on` (epoch
seconds, azure-identity's `AccessToken`)."""

_NO_KEY = "not-needed"  # what an SDK that insists on a key gets from a host that needs none
REFRESH_MARGIN = 300.0  # seconds before expiry a token is fetched again


class BearerToken:
    """`Authorization: Bearer <token>` from a token provider, called again before the
    token expires (5 minutes ahead); the call runs off the event loop. The expiry is the
    provider's `expires_on`, else the JWT's `exp` claim; a token of neither kind is asked
    for on every request (the provider caches it itself)."""

    __slots__ = ("_expires", "_lock", "_provider", "_token")

    def __init__(self, provider: TokenProvider) -> None:
        self._provider = provider
        self._token: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "BearerToken(<provider>)"  # never the token

    def fresh(self) -> str | None:
        """The cached token while it has more than the margin left, else None."""
        if self._token is not None and time.time() < self._expires - REFRESH_MARGIN:
            return self._token
        return None

    def refresh(self) -> str:
        """Ask the provider (blocking: on a worker thread from async code)."""
        with self._lock:
            token = self.fresh()
            if token is not None:  # another thread refreshed it meanwhile
                return token
            given = self._provider()
            token, expires = _token_of(given)
            self._token, self._expires = token, expires
            return token

    def sign(self, request: OutgoingRequest) -> Mapping[str, str]:
        return {"Authorization": f"Bearer {self.fresh() or self.refresh()}"}

    async def sign_async(self, request: OutgoingRequest) -> Mapping[str, str]:
        token = self.fresh()
        if token is None:
            token = await run_in_thread(self.refresh)
        return {"Authorization": f"Bearer {token}"}


def _token_of(given: Any) -> tuple[str, float]:
    """(token, expiry in epoch seconds; 0: unknown) from what a token provider returned."""
    if isinstance(given, str):
        token, expires = given, 0.0
    else:
        token = getattr(given, "token", None)
        expires = getattr(given, "expires_on", None)
        if not isinstance(token, str):
            raise ConfigurationError(
                "a token provider must return a string or an object with a string `token`, "
                f"got {type(given).__name__}",
                option="token_provider",
            )
        expires = float(expires) if isinstance(expires, int | float) else 0.0
    if not token.strip():
        raise ConfigurationError(
            "the token provider returned an empty token", option="token_provider"
        )
    return token, expires or _jwt_expiry(token)


def _jwt_expiry(token: str) -> float:
    """The `exp` claim of a JWT (read, not verified: only to know when to ask again)."""
    parts = token.split(".")
    if len(parts) != 3:
        return 0.0
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except ValueError:
        return 0.0
    exp = cast(dict[str, Any], claims).get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) else 0.0


def key_from(given: str | None, variables: tuple[str, ...]) -> str | None:
    """The key given, else the first of `variables` set (an empty value counts as unset)."""
    if given:
        return given
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


class Host:
    """One place a wire format is served: a subclass sets the facts and, where the host
    differs from the wire's own service, overrides the methods.

    Facts: `name` (the prefix of `create_adapter("name:model")`), `wire` (its `Provider`
    class), `system` (its provider id for pricing: genai-prices' "openai", "azure",
    "google"...), `telemetry_name` (`gen_ai.provider.name`), `api_key_variables` (read in
    order when no key is given), `base_url` (None: the SDK's default), `key_required`,
    `offers_batches` (and `no_batches_reason`, said when a batch is refused),
    `offers_token_counts` (False: this host does not serve its wire's token-count
    endpoint; `no_token_counts_reason` says why), `unsupported_settings` (what this
    host refuses on top of the wire: warned about, never sent), `options` (a TypedDict of
    its own options, checked when the adapter is made), `demo_model` (the model `wink demo`
    runs on this host, a small current one; None: the demo needs `--model`).
    """

    name: ClassVar[str]
    wire: ClassVar[type[Provider]]
    system: ClassVar[str]
    telemetry_name: ClassVar[str]
    api_key_variables: ClassVar[tuple[str, ...]] = ()
    base_url: ClassVar[str | None] = None
    key_required: ClassVar[bool] = True
    offers_batches: ClassVar[bool] = True
    no_batches_reason: ClassVar[str] = ""
    offers_token_counts: ClassVar[bool] = True
    no_token_counts_reason: ClassVar[str] = ""
    unsupported_settings: ClassVar[frozenset[str]] = frozenset()
    options: ClassVar[type[Any]] = NoHostOptions
    demo_model: ClassVar[str | None] = None

    def __init__(self, model: str, connection: Connection, options: Mapping[str, Any]) -> None:
        self.model = model
        self.connection = connection
        self.given = dict(options)
        self.check_options()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    @classmethod
    def option_names(cls) -> frozenset[str]:
        """The names of this host's own options."""
        return frozenset(cls.options.__annotations__)

    def check_options(self) -> None:
        """Raise `ConfigurationError` for an option value this host cannot use."""
        return

    # ---- model ids

    def model_id(self) -> str:
        """What the request names as its model (Azure: the deployment)."""
        return self.model

    def rules_model(self) -> str:
        """The model the wire's rules (thinking, roles, content) are chosen for (Azure: the
        `base_model=` option, else the deployment name)."""
        return self.model

    def origin(self) -> str | None:
        """The name its model turns are tagged with (`AssistantMessage.origin`), where it
        is not the adapter's: a host whose provider-bound data (thinking signatures) the
        wire's own service reads back names that service's adapter, so the data travels
        between the two (`wink.core.foundation.portable`). None: the adapter's name."""
        return None

    # ---- where requests go and how they are signed

    def api_key(self) -> str | None:
        """The key given, else the first of its variables set."""
        return key_from(self.connection.api_key, self.api_key_variables)

    def endpoint(self) -> Endpoint:
        """What the wire's client is made with. The default: the caller's `base_url` or
        the host's, and this host's key (given, or from its own variables, never the
        SDK's: another service's key must not reach this one) for the SDK's own header,
        a placeholder where it needs none."""
        return Endpoint(self.connection.base_url or self.base_url, self.api_key() or _NO_KEY)

    def sdk_endpoint(self) -> Endpoint:
        """The wire's own service as its SDK finds it: the caller's `base_url` and key, or
        the SDK's defaults and variables (OpenAI's, Anthropic's own hosts)."""
        return Endpoint(self.connection.base_url or self.base_url, self.connection.api_key)

    def signer(self) -> Signer | None:
        """What signs each request (a refreshing bearer token, a request signature); None:
        the client's own headers carry the auth."""
        return None

    def key_optional(self) -> bool:
        """True where this connection may need no key (a compatible server at `base_url`)."""
        return not self.key_required

    def check_credentials(self) -> None:
        """No key anywhere: say which variable to set, before the SDK fails obscurely."""
        if self.key_optional() or not self.api_key_variables:
            return
        if self.api_key() is None and self.signer() is None:
            raise ConfigurationError(
                f"no API key for {self.name}: set {' or '.join(self.api_key_variables)} "
                "or pass api_key=",
                provider=self.name,
                option="api_key",
            )

    def secrets(self) -> tuple[str, ...]:
        """Every key this host may send (masked wherever wink shows provider text)."""
        found = [self.connection.api_key]
        found += [os.environ.get(name) for name in self.api_key_variables]
        return tuple(v.strip() for v in found if isinstance(v, str) and v.strip())

    # ---- the request, as this host takes it

    def adjust_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The wire's body as this host takes it (a quirk: a field it needs or refuses).
        The default sends the wire's body unchanged."""
        return body

    def path(self, path: str) -> str:
        """The wire's path as this host serves it (the default: unchanged)."""
        return path
