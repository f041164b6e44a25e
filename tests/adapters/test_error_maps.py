"""Each exception class an SDK exports maps to its own outcome, checked one by one.

The tables below give every public exception class of openai, anthropic, google-genai
and of the two transports google-genai lets through (httpx, httpx2) the exact outcome
wink must produce: which row of the adapter's `SdkErrors` took it, the phase, the
throttle kind and retry safety, and the HTTP status. Instances are built with the SDKs'
public constructors and raised inside each adapter's mapping. A class an SDK adds
without an entry here fails `test_every_public_exception_class_has_an_expectation`, so
it is looked at instead of landing in a catch-all unnoticed.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, cast, get_args

import anthropic
import httpx
import httpx2
import openai
import pytest
from google.genai import errors as genai_errors
from openai.types.chat import ChatCompletion

from wink import PromptEvaluationError, ThrottleError
from wink.adapters import anthropic as anthropic_adapter
from wink.adapters import google as google_adapter
from wink.adapters import openai as openai_adapter
from wink.core.errors import EvaluationPhase, ThrottleKind

_URL = "http://127.0.0.1/v1/x"
_REQUEST = httpx2.Request("POST", _URL)

# --- outcomes

Route = Literal["status", "timeout", "connection", "unreadable", "catch-all", "passes through"]

# How each `map_sdk_errors` row words its message: the route is read back from it, so a
# timeout taken by the connection row (same kind) is told apart.
_ROUTE_PREFIXES: tuple[tuple[str, Route], ...] = (
    ("HTTP ", "status"),
    ("the request timed out", "timeout"),
    ("the connection failed", "connection"),
    ("the provider's response could not be understood", "unreadable"),
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one raised SDK exception became; `kind` None: a plain PromptEvaluationError."""

    route: Route
    phase: EvaluationPhase | None
    kind: ThrottleKind | None = None
    retry_safe: bool = False
    status: int | None = None


def rejected(status: int) -> Outcome:
    return Outcome("status", "request", status=status)


def rate_limited(status: int = 429) -> Outcome:
    return Outcome("status", "request", "rate_limit", retry_safe=True, status=status)


def quota_exhausted(status: int = 429) -> Outcome:
    return Outcome("status", "request", "quota_exhausted", retry_safe=False, status=status)


def overloaded(status: int) -> Outcome:
    return Outcome("status", "request", "overloaded", retry_safe=True, status=status)


def status_timeout(status: int = 408) -> Outcome:
    return Outcome("status", "request", "timeout", retry_safe=True, status=status)


TIMED_OUT = Outcome("timeout", "request", "timeout", retry_safe=True)
CONNECTION_FAILED = Outcome("connection", "request", "timeout", retry_safe=True)
UNREADABLE = Outcome("unreadable", "response")
CATCH_ALL = Outcome("catch-all", "request")
PASSES_THROUGH = Outcome("passes through", None)  # not wink's to translate: re-raised as is


@dataclass(frozen=True, slots=True)
class Case:
    """One instance to raise: its outcome (whose status it carries) and its error body."""

    outcome: Outcome
    body: Any = None
    label: str = ""


Expectation = Outcome | Case | tuple[Outcome | Case, ...]
Table = Mapping[type[BaseException], Expectation]
Builder = Callable[[type[BaseException], Case], BaseException]


def _cases(expectation: Expectation) -> tuple[Case, ...]:
    items = expectation if isinstance(expectation, tuple) else (expectation,)
    return tuple(item if isinstance(item, Case) else Case(item) for item in items)


# --- openai

_OPENAI_QUOTA = {"message": "m", "type": "insufficient_quota", "code": "insufficient_quota"}

OPENAI: Table = {
    openai.OpenAIError: CATCH_ALL,
    openai.APIError: CATCH_ALL,
    openai.APIStatusError: (rejected(418), status_timeout(408), overloaded(502)),
    openai.BadRequestError: rejected(400),
    openai.AuthenticationError: rejected(401),
    openai.OAuthError: rejected(401),
    openai.PermissionDeniedError: rejected(403),
    openai.NotFoundError: rejected(404),
    openai.ConflictError: rejected(409),
    openai.UnprocessableEntityError: rejected(422),
    openai.RateLimitError: (
        rate_limited(),
        Case(quota_exhausted(), _OPENAI_QUOTA, "insufficient_quota"),
    ),
    openai.InternalServerError: (overloaded(500), overloaded(503), overloaded(504)),
    openai.APIConnectionError: CONNECTION_FAILED,
    openai.APITimeoutError: TIMED_OUT,
    openai.APIResponseValidationError: UNREADABLE,
    # Raised by the typed `parse()` helpers and the realtime websocket, which wink does
    # not call: the catch-all is the honest answer.
    openai.LengthFinishReasonError: CATCH_ALL,
    openai.ContentFilterFinishReasonError: CATCH_ALL,
    openai.WebSocketConnectionClosedError: CATCH_ALL,
    openai.WebSocketQueueFullError: CATCH_ALL,
    # A ValueError from `client.webhooks.unwrap`, not an OpenAIError: not a request failure.
    openai.InvalidWebhookSignatureError: PASSES_THROUGH,
}


def _openai_error(cls: type[BaseException], case: Case) -> BaseException:
    status = case.outcome.status
    if issubclass(cls, openai.APIStatusError):
        assert status is not None
        body = case.body if case.body is not None else {"message": "m", "type": "t"}
        response = httpx2.Response(status, request=_REQUEST, json={"error": body})
        if issubclass(cls, openai.OAuthError):
            return cls(response=response, body=body)
        return cls("m", response=response, body=body)
    if issubclass(cls, openai.APIResponseValidationError):
        return cls(response=httpx2.Response(200, request=_REQUEST, json=[]), body=[])
    if issubclass(cls, openai.APIConnectionError):  # APITimeoutError too
        return cls(request=_REQUEST)
    if issubclass(cls, openai.APIError):
        return cls("m", _REQUEST, body=None)
    if issubclass(cls, openai.LengthFinishReasonError):
        completion = ChatCompletion.model_construct(usage=None)
        return cls(completion=completion)
    if issubclass(cls, openai.ContentFilterFinishReasonError):
        return cls()
    if issubclass(cls, openai.WebSocketConnectionClosedError):
        return cls("m", unsent_messages=[])
    return cls("m")


# --- anthropic


def _anthropic_body(error_code: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": "api_error", "message": "m"}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return {"type": "error", "error": error}


def _declared_error_code(cls: type[BaseException]) -> str | None:
    """The `error.details.error_code` the SDK picks this subclass for (its own annotation,
    `error_code: Literal["..."]`), or None for a class picked by status alone."""
    codes = get_args(inspect.get_annotations(cls).get("error_code"))
    return cast(str, codes[0]) if codes else None


ANTHROPIC: Table = {
    anthropic.AnthropicError: CATCH_ALL,
    anthropic.APIError: CATCH_ALL,
    anthropic.APIWebhookValidationError: CATCH_ALL,
    anthropic.APIStatusError: (rejected(418), overloaded(502)),
    anthropic.BadRequestError: rejected(400),
    anthropic.AuthenticationError: rejected(401),
    anthropic.PaymentRequiredError: rejected(402),
    anthropic.PermissionDeniedError: rejected(403),
    anthropic.NotFoundError: rejected(404),
    anthropic.RequestTimeoutError: status_timeout(408),
    anthropic.ConflictError: rejected(409),
    anthropic.PreconditionFailedError: rejected(412),
    anthropic.ContentTooLargeError: rejected(413),
    anthropic.UnprocessableEntityError: rejected(422),
    anthropic.RateLimitError: rate_limited(),
    anthropic.RequestHeaderFieldsTooLargeError: rejected(431),
    anthropic.ClientClosedRequestError: rejected(499),
    anthropic.InternalServerError: overloaded(500),
    # 501 is not transient, but the contract reads every 5xx as overloaded.
    anthropic.HTTPNotImplementedError: overloaded(501),
    anthropic.ServiceUnavailableError: overloaded(503),
    anthropic.GatewayTimeoutError: overloaded(504),
    anthropic.OverloadedError: overloaded(529),
    # Subclasses the SDK picks by `error.details.error_code` (built with their code).
    anthropic.ClaudeCodeKeyCreatorNotMemberError: rejected(400),
    anthropic.ClaudeCodeVersionTooOldError: rejected(400),
    anthropic.CMEKKeyDisabledError: rejected(400),
    anthropic.CMEKKeyNetworkBlockedError: rejected(400),
    anthropic.OrganizationOnHoldError: rejected(400),
    anthropic.OrganizationTypeNotSupportedError: rejected(400),
    anthropic.ParentOrganizationRequiredError: rejected(400),
    anthropic.RequestBodyEncodingInvalidError: rejected(400),
    anthropic.RequestBodyEncodingUnsupportedError: rejected(400),
    anthropic.LinkedOrganizationBillingUnavailableError: rejected(402),
    anthropic.LinkedOrganizationSpendLimitReachedError: rejected(402),
    anthropic.SandboxEgressRestrictedError: rejected(403),
    anthropic.RequestBodyTooLargeAfterDecodingError: rejected(413),
    # A spend limit is a 429 that waiting seconds does not lift: never retried.
    anthropic.ContractSpendLimitReachedError: quota_exhausted(),
    anthropic.EnforcedSpendLimitReachedError: quota_exhausted(),
    anthropic.RampLimitExceededError: rate_limited(),  # lifted after its retry-after
    anthropic.CMEKContextUnavailableError: overloaded(503),
    anthropic.CMEKKeyUnreachableError: overloaded(503),
    anthropic.APIConnectionError: CONNECTION_FAILED,
    anthropic.APITimeoutError: TIMED_OUT,
    anthropic.APIResponseValidationError: UNREADABLE,
    # Raised before any request (credentials) or by middleware asking for the SDK's own
    # retries, which wink turns off: a request failure, not retried.
    anthropic.RetryableError: CATCH_ALL,
    anthropic.CredentialsError: CATCH_ALL,
    anthropic.IdentityTokenFileError: CATCH_ALL,
    anthropic.WorkloadIdentityError: CATCH_ALL,
}


def _anthropic_error(cls: type[BaseException], case: Case) -> BaseException:
    status = case.outcome.status
    if issubclass(cls, anthropic.APIStatusError):
        assert status is not None
        code = _declared_error_code(cls)
        body = case.body if case.body is not None else _anthropic_body(code)
        response = httpx2.Response(status, request=_REQUEST, json=body)
        error = cls("m", response=response, body=body)
        assert error.error_code == code  # the SDK read the code back from the body
        return error
    if issubclass(cls, anthropic.APIResponseValidationError):
        return cls(response=httpx2.Response(200, request=_REQUEST, json=[]), body=[])
    if issubclass(cls, anthropic.APIConnectionError):  # APITimeoutError too
        return cls(request=_REQUEST)
    if issubclass(cls, anthropic.APIError):
        return cls("m", _REQUEST, body=None)
    return cls("m")


# --- google-genai


def _google_body(status: int, name: str, *details: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": "m", "status": name}
    if details:
        error["details"] = list(details)
    return {"error": error}


_DAILY_QUOTA = _google_body(
    429,
    "RESOURCE_EXHAUSTED",
    {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
    },
)

GOOGLE: Table = {
    # The SDK raises the base class only for a status outside 4xx / 5xx.
    genai_errors.APIError: (rejected(302), overloaded(503)),
    genai_errors.ClientError: (
        rejected(400),
        rejected(401),
        rejected(403),
        rejected(404),
        status_timeout(408),
        rate_limited(),
        Case(quota_exhausted(), _DAILY_QUOTA, "per-day"),
    ),
    genai_errors.ServerError: (overloaded(500), overloaded(503), overloaded(504)),
    genai_errors.UnknownApiResponseError: UNREADABLE,
    # Raised by the SDK's automatic function calling and Interactions continuation,
    # which wink does not use; a warning class is never raised.
    genai_errors.UnknownFunctionCallArgumentError: CATCH_ALL,
    genai_errors.UnsupportedFunctionError: CATCH_ALL,
    genai_errors.FunctionInvocationError: CATCH_ALL,
    genai_errors.ContinuationInterruptedError: CATCH_ALL,
    genai_errors.ExperimentalWarning: CATCH_ALL,
}


def _google_error(cls: type[BaseException], case: Case) -> BaseException:
    status = case.outcome.status
    if issubclass(cls, genai_errors.APIError):
        assert status is not None
        body = case.body if case.body is not None else _google_body(status, "X")
        return cls(status, body, httpx2.Response(status, request=_REQUEST, json=body))
    return cls("m")


# --- the transports google-genai lets through unwrapped (same table for both)


_TRANSPORT_NAMES: Mapping[Outcome, tuple[str, ...]] = {
    TIMED_OUT: ("TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout"),
    CONNECTION_FAILED: (
        "TransportError",
        *("NetworkError", "ConnectError", "ReadError", "WriteError", "CloseError"),
        *("ProtocolError", "LocalProtocolError", "RemoteProtocolError", "ProxyError"),
        "UnsupportedProtocol",  # a URL scheme no transport speaks, yet a TransportError
    ),
    UNREADABLE: ("DecodingError",),
    CATCH_ALL: (
        *("HTTPError", "RequestError", "TooManyRedirects", "HTTPStatusError"),
        *("InvalidURL", "CookieConflict"),
        *("StreamError", "StreamConsumed", "StreamClosed", "ResponseNotRead", "RequestNotRead"),
    ),
}


def _transport_table(module: ModuleType) -> Table:
    """httpx and httpx2 export the same classes; httpx2 adds `SSEError`."""
    table: dict[type[BaseException], Expectation] = {
        getattr(module, name): outcome
        for outcome, names in _TRANSPORT_NAMES.items()
        for name in names
    }
    if module is httpx2:
        table[httpx2.SSEError] = CONNECTION_FAILED
    return table


def _transport_builder(module: Any) -> Builder:
    def build(cls: type[BaseException], case: Case) -> BaseException:
        request = module.Request("POST", _URL)
        if issubclass(cls, module.HTTPStatusError):
            return cls("m", request=request, response=module.Response(500, request=request))
        if issubclass(cls, module.RequestError):
            return cls("m", request=request)
        if issubclass(cls, module.StreamError) and cls is not module.StreamError:
            return cls()
        return cls("m")

    return build


# Exceptions from outside the SDKs that an adapter's table names.
_JSON_ERROR = json.JSONDecodeError("Expecting value", "<html>", 0)
EXTRAS: Mapping[str, tuple[tuple[BaseException, Outcome], ...]] = {
    "openai": ((_JSON_ERROR, UNREADABLE),),
    "anthropic": ((_JSON_ERROR, UNREADABLE),),
    "google": (
        (_JSON_ERROR, UNREADABLE),
        (TimeoutError("total timeout"), TIMED_OUT),  # aiohttp's (asyncio.TimeoutError)
        (ConnectionResetError("reset"), CONNECTION_FAILED),
        (ConnectionRefusedError("refused"), CONNECTION_FAILED),
        (ValueError("m"), CATCH_ALL),
    ),
}

# --- the registry

Mapper = Callable[[str], AbstractContextManager[None]]

# adapter -> (its mapping entry, how its catch-all row names the SDK)
_MAPPERS: Mapping[str, tuple[Mapper, str]] = {
    "openai": (openai_adapter.map_openai_errors, "openai"),
    "anthropic": (anthropic_adapter._map_errors, "anthropic"),
    "google": (google_adapter._map_errors, "google-genai"),
}


@dataclass(frozen=True, slots=True)
class Sdk:
    """A module whose exception classes are enumerated, and the adapter that maps them."""

    label: str
    module: ModuleType
    table: Table
    build: Builder
    adapter: str


SDKS: tuple[Sdk, ...] = (
    Sdk("openai", openai, OPENAI, _openai_error, "openai"),
    Sdk("anthropic", anthropic, ANTHROPIC, _anthropic_error, "anthropic"),
    Sdk("google-genai", genai_errors, GOOGLE, _google_error, "google"),
    Sdk("httpx2", httpx2, _transport_table(httpx2), _transport_builder(httpx2), "google"),
    Sdk("httpx", httpx, _transport_table(httpx), _transport_builder(httpx), "google"),
)


def public_exception_classes(module: ModuleType) -> set[type[BaseException]]:
    """Every exception class a module exports under a public name.

    Read from the module's own namespace, with the real type of each value: openai's
    lazy client proxies answer `isinstance` by building a client.
    """
    return {
        cast(type[BaseException], value)
        for name, value in vars(module).items()
        if not name.startswith("_")
        and issubclass(type(value), type)
        and issubclass(cast(type, value), BaseException)
    }


def outcome_of(mapper: Mapper, sdk_name: str, error: BaseException) -> Outcome:
    """Raise `error` inside the mapping and describe what came out."""
    with pytest.raises(BaseException) as info, mapper("p"):
        raise error
    mapped = info.value
    if mapped is error:
        return PASSES_THROUGH
    assert isinstance(mapped, PromptEvaluationError), f"came out as {type(mapped).__name__}"
    assert mapped.__cause__ is error, "the SDK exception must stay chained"
    route = next(
        (route for prefix, route in _ROUTE_PREFIXES if mapped.message.startswith(prefix)), None
    )
    if route is None:
        assert mapped.message.startswith(f"{sdk_name} failed: {type(error).__name__}")
        route = "catch-all"
    payload_status = (mapped.provider_payload or {}).get("status_code")
    if not isinstance(mapped, ThrottleError):
        return Outcome(route, mapped.phase, status=payload_status)
    details = mapped.details
    assert payload_status == details.status_code
    return Outcome(route, mapped.phase, details.kind, details.retry_safe, details.status_code)


def _class_cases() -> Iterator[Any]:
    for sdk in SDKS:
        for cls, expectation in sdk.table.items():
            for case in _cases(expectation):
                outcome = case.outcome
                status = "" if outcome.status is None else f"-{outcome.status}"
                label = f"-{case.label}" if case.label else ""
                yield pytest.param(sdk, cls, case, id=f"{sdk.label}-{cls.__name__}{status}{label}")


@pytest.mark.parametrize(("sdk", "cls", "case"), list(_class_cases()))
def test_each_sdk_exception_maps_to_its_outcome(
    sdk: Sdk, cls: type[BaseException], case: Case
) -> None:
    declared = getattr(cls, "status_code", None)
    if isinstance(declared, int):  # the class's own status, where the SDK fixes one
        assert case.outcome.status == declared, "the table builds it with another status"
    error = sdk.build(cls, case)
    assert type(error) is cls
    mapper, sdk_name = _MAPPERS[sdk.adapter]
    assert outcome_of(mapper, sdk_name, error) == case.outcome


@pytest.mark.parametrize("sdk", SDKS, ids=[sdk.label for sdk in SDKS])
def test_every_public_exception_class_has_an_expectation(sdk: Sdk) -> None:
    """A class the SDK adds (or drops) must be looked at, not left to the catch-all."""
    exported = public_exception_classes(sdk.module)
    unexpected = sorted(cls.__name__ for cls in exported - set(sdk.table))
    missing = sorted(cls.__name__ for cls in set(sdk.table) - exported)
    assert not unexpected, (
        f"{sdk.label} exports exception classes with no expectation: {unexpected}"
    )
    assert not missing, f"{sdk.label} no longer exports {missing}"
    assert len(exported) >= 5


def _extra_cases() -> Iterator[Any]:
    for adapter, cases in EXTRAS.items():
        for error, outcome in cases:
            yield pytest.param(adapter, error, outcome, id=f"{adapter}-{type(error).__name__}")


@pytest.mark.parametrize(("adapter", "error", "outcome"), list(_extra_cases()))
def test_non_sdk_exceptions_the_tables_name(
    adapter: str, error: BaseException, outcome: Outcome
) -> None:
    mapper, sdk_name = _MAPPERS[adapter]
    assert outcome_of(mapper, sdk_name, error) == outcome


@pytest.mark.parametrize("adapter", list(_MAPPERS))
def test_a_wink_error_inside_is_not_wrapped_again(adapter: str) -> None:
    """A parser's own WinkError raised inside the mapping comes out as itself."""
    mapper, _ = _MAPPERS[adapter]
    inner = PromptEvaluationError("m", prompt_name="p", phase="response")
    with pytest.raises(PromptEvaluationError) as info, mapper("p"):
        raise inner
    assert info.value is inner
