"""Provider failures -> the typed contract, decided once for every adapter.

An adapter only extracts facts from its SDK's exception or a stream's error event
(`StatusFacts`: status, error body, headers, and what the provider's words say: the quota
is gone, the input is too long for the context window, a content filter blocked it, the
key was refused) and calls these functions, so a 429, a 404 or a context window too
small means the same thing whichever provider sent it.
"""

from __future__ import annotations

import math
import re
import socket
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any, cast

from ..foundation.errors import (
    AuthenticationError,
    BadRequestError,
    ContentFilteredError,
    ContextWindowExceededError,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    ThrottleDetails,
    ThrottleError,
    ThrottleKind,
    WinkError,
)
from ..throttling.headers import (
    NO_RATE_LIMIT_HEADERS,
    RateLimitHeaders,
    allowance_spent,
    retry_after_from_headers,
)

__all__ = [
    "REDACTED",
    "MalformedResponse",
    "SdkErrors",
    "StatusFacts",
    "connection_error",
    "error_from_facts",
    "error_from_status",
    "map_sdk_errors",
    "read_amount",
    "read_count",
    "read_label",
    "redact_exception_chain",
    "redact_secrets",
    "response_shape_error",
    "timeout_error",
]

_SECRET_KEYS = frozenset(
    {"authorization", "api_key", "api-key", "apikey", "x-api-key", "x-goog-api-key", "key"}
)
_SECRET_PATTERN = re.compile(
    r"(sk-[A-Za-z0-9_\-*]{6,}|AIza[0-9A-Za-z_\-]{10,}|Bearer\s+[A-Za-z0-9._\-*]+)"
)
REDACTED = "[redacted]"
"""What wink shows in place of a secret (a key, an auth header), wherever it shows text."""
_TIMEOUT_STATUSES = frozenset({408})


_SHORT_SECRET = 8
_MAX_DEPTH = 32  # provider error bodies are a handful of levels deep
_TOO_DEEP = f"[nested deeper than {_MAX_DEPTH} levels: dropped]"


def redact_secrets(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """A copy of `value` with credential fields, key-shaped strings and `secrets` masked.

    A secret shorter than 8 characters (a test key such as "k") is masked only where it
    stands alone: masking it inside words would garble ids and messages, and a value
    that short protects nothing anyway.

    Containers nested deeper than 32 levels are replaced by a marker string: a hostile or
    broken error body thousands of levels deep must not exhaust the recursion limit and
    turn a throttle into a different error (and a self-containing body must end).
    """
    known = tuple(secret for secret in secrets if secret and len(secret) >= _SHORT_SECRET)
    short = tuple(
        re.compile(rf"(?<![\w-]){re.escape(secret)}(?![\w-])")
        for secret in secrets
        if secret and len(secret) < _SHORT_SECRET
    )

    def clean(node: Any, depth: int) -> Any:
        if isinstance(node, Mapping | list | tuple) and depth >= _MAX_DEPTH:
            return _TOO_DEEP
        if isinstance(node, Mapping):
            return {
                key: (REDACTED if str(key).lower() in _SECRET_KEYS else clean(item, depth + 1))
                for key, item in cast(Mapping[Any, Any], node).items()
            }
        if isinstance(node, list | tuple):
            return [clean(item, depth + 1) for item in cast(Iterable[Any], node)]
        if isinstance(node, str):
            for secret in known:
                node = node.replace(secret, REDACTED)
            for pattern in short:
                node = pattern.sub(REDACTED, node)
            return _SECRET_PATTERN.sub(REDACTED, node)
        return node

    return clean(value, 0)


_CHAIN_LIMIT = 32  # exceptions looked at in one cause/context chain
_SDK_TEXT_ATTRIBUTES = ("message", "body", "details")  # Stainless APIError; genai APIError


def _exception_chain(error: BaseException) -> list[BaseException]:
    """`error` and the exceptions its `__cause__` / `__context__` links reach: each once,
    at most 32 (a chain can loop, and an SDK's can be long)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    pending = [error]
    while pending and len(chain) < _CHAIN_LIMIT:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        chain.append(current)
        pending.extend(
            linked for linked in (current.__context__, current.__cause__) if linked is not None
        )
    return chain


def _cleaned(value: object, secrets: tuple[str | None, ...]) -> tuple[bool, Any]:
    """(changed, value with secrets masked) for a string, mapping or list; else unchanged."""
    if not isinstance(value, str | Mapping | list):
        return False, value
    cleaned = redact_secrets(value, secrets)
    return cleaned != value, cleaned


def redact_exception_chain(error: BaseException, secrets: Iterable[str | None] = ()) -> None:
    """Mask secrets, in place, in `error` and every exception chained to it.

    wink's own messages are clean, but it chains the SDK's exception (`raise ... from`),
    and a traceback or `logging.exception` prints every exception of the chain: a server
    that echoes a rejected key would put it in the log. So for each exception of the
    chain, the string, mapping and list `args`, `__notes__` and the public `message`,
    `body` (openai, anthropic) and `details` (google-genai) attributes get the
    `redact_secrets` treatment. Types and everything else are left alone, so code that
    inspects `error.__cause__` still sees the SDK's exception. An attribute that cannot
    be set is skipped.
    """
    secrets = tuple(secrets)
    for current in _exception_chain(error):
        try:
            args = [_cleaned(arg, secrets) for arg in current.args]
            if any(changed for changed, _ in args):
                current.args = tuple(value for _, value in args)
        except Exception:  # an argument that cannot be compared: left as it is
            pass
        for name in ("__notes__", *_SDK_TEXT_ATTRIBUTES):
            try:
                changed, value = _cleaned(getattr(current, name, None), secrets)
                if changed:
                    setattr(current, name, value)
            except Exception:  # a property that refuses is left as it is
                continue


def _payload(body: Any, status: int | None, secrets: Iterable[str | None]) -> dict[str, Any]:
    payload: dict[str, Any] = {"status_code": status}
    if isinstance(body, Mapping):
        payload.update(cast(Mapping[str, Any], body))
    elif body is not None:
        payload["body"] = body
    return cast(dict[str, Any], redact_secrets(payload, secrets))


def error_from_status(
    status: int,
    message: str,
    *,
    prompt_name: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    quota_exhausted: bool = False,
    retry_after: float | None = None,
    secrets: Iterable[str | None] = (),
    rate_limit_headers: RateLimitHeaders = NO_RATE_LIMIT_HEADERS,
) -> PromptEvaluationError:
    """`error_from_facts` for an answer known only by its status, message and body."""
    facts = StatusFacts(status, message, body, headers, quota_exhausted, retry_after)
    return error_from_facts(
        facts, prompt_name=prompt_name, secrets=secrets, rate_limit_headers=rate_limit_headers
    )


def error_from_facts(
    facts: StatusFacts,
    *,
    prompt_name: str,
    secrets: Iterable[str | None] = (),
    rate_limit_headers: RateLimitHeaders = NO_RATE_LIMIT_HEADERS,
    model: str | None = None,
) -> PromptEvaluationError:
    """Classify an error answer: throttles are retry-safe, request errors are not retried.

    Throttles (`ThrottleError`): an exhausted quota (any 4xx the provider's words say is
    one, `facts.quota_exhausted`: its wire knows which statuses and bodies mean it; never
    retried), 429 -> rate_limit, any 5xx (a 529 included) -> overloaded, 408 -> timeout.
    Only HTTP's own meanings live here: a status a wire gives a meaning of its own is
    read by its error reader into `facts`. Then what the provider's words say: the context window
    (`ContextWindowExceededError`), a content filter (`ContentFilteredError`), a key it
    refused (`AuthenticationError`); then the status: 401 `AuthenticationError`, 403
    `PermissionDeniedError`, 404 `NotFoundError` (naming `model`), any other 4xx
    `BadRequestError`. The message, like the payload, is cleaned of `secrets` (providers
    echo a rejected key). Without a `retry_after` of its own, the wait is read from the
    headers: `retry-after`, then the provider's `rate_limit_headers`. A rate limit's
    `limit_reached` is the provider's own word that a limit was hit: its body names one
    (`facts.limit_named`), or one of its `rate_limit_headers` says 0 remaining.
    """
    secrets = tuple(secrets)
    status = facts.status
    payload = _payload(facts.body, status, secrets)
    message = f"HTTP {status}: {redact_secrets(facts.message, secrets)}"
    kind = _throttle_kind(facts)
    if kind is not None:
        retry_after = facts.retry_after
        if retry_after is None and facts.headers is not None:
            retry_after = retry_after_from_headers(facts.headers, rate_limit_headers)
        spent = facts.headers is not None and allowance_spent(facts.headers, rate_limit_headers)
        details = ThrottleDetails(
            kind=kind,
            retry_after=_provider_wait(retry_after),
            attempts=1,
            retry_safe=kind != "quota_exhausted",
            status_code=status,
            limit_reached=kind == "rate_limit" and (facts.limit_named or spent),
        )
        return ThrottleError(
            message, prompt_name=prompt_name, details=details, provider_payload=payload
        )
    kind_of_error = _request_error_class(facts)
    if kind_of_error is NotFoundError:
        asked = f"is the model name {model!r} right?" if model else "is the model name right?"
        return NotFoundError(
            f"{message} (a 404 usually means a model the provider does not know: {asked})",
            prompt_name=prompt_name,
            provider_payload=payload,
            status_code=status,
            model=model,
        )
    return kind_of_error(
        message,
        prompt_name=prompt_name,
        phase="request",
        provider_payload=payload,
        status_code=status,
    )


_STATUS_CLASSES: dict[int, type[PromptEvaluationError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
}


def _throttle_kind(facts: StatusFacts) -> ThrottleKind | None:
    status = facts.status
    if facts.quota_exhausted and status < 500:
        return "quota_exhausted"
    if status == 429:
        return "rate_limit"
    if status >= 500:  # whatever the provider calls it (Anthropic's 529 is one)
        return "overloaded"
    if status in _TIMEOUT_STATUSES:
        return "timeout"
    return None


def _request_error_class(facts: StatusFacts) -> type[PromptEvaluationError]:
    """What a rejected request calls for: what the provider said first, then the status."""
    if facts.context_window_exceeded:
        return ContextWindowExceededError
    if facts.content_filtered:
        return ContentFilteredError
    if facts.authentication_failed:
        return AuthenticationError
    found = _STATUS_CLASSES.get(facts.status)
    if found is not None:
        return found
    return BadRequestError if 400 <= facts.status < 500 else PromptEvaluationError


def _provider_wait(seconds: float | None) -> timedelta | None:
    """A provider's ask as a timedelta: kept however long (up to `timedelta.max`); a
    negative or non-finite value says nothing, like a malformed header."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        return timedelta.max


def timeout_error(prompt_name: str, error: BaseException) -> ThrottleError:
    """The request timed out: safe to retry, nothing to wait for."""
    return ThrottleError(
        f"the request timed out ({type(error).__name__})",
        prompt_name=prompt_name,
        details=ThrottleDetails(kind="timeout", retry_safe=True),
    )


def connection_error(prompt_name: str, error: BaseException) -> PromptEvaluationError:
    """The connection failed: a host that does not resolve is a configuration error,
    `phase="request"`, never retried (retrying a typo only delays the answer); refused,
    reset or dropped connections are retry-safe throttles of kind `connection`.

    "Does not resolve" is a `socket.gaierror` anywhere in the cause/context chain,
    except `EAI_AGAIN` ("temporary failure in name resolution"), which is retried.
    """
    cause = error.__cause__ or error
    unresolved = _name_resolution_failure(error)
    if unresolved is not None:
        host = _request_host(error)
        where = f"the host {host!r}" if host is not None else "the provider's host"
        return PromptEvaluationError(
            f"{where} could not be resolved (check the adapter's base_url): "
            f"{type(unresolved).__name__}: {redact_secrets(str(unresolved))}",
            prompt_name=prompt_name,
            phase="request",
        )
    return ThrottleError(
        f"the connection failed: {type(cause).__name__}: {redact_secrets(str(cause))}",
        prompt_name=prompt_name,
        details=ThrottleDetails(kind="connection", retry_safe=True),
    )


def _name_resolution_failure(error: BaseException) -> socket.gaierror | None:
    for linked in _exception_chain(error):
        if isinstance(linked, socket.gaierror) and linked.errno != socket.EAI_AGAIN:
            return linked
    return None


def _request_host(error: BaseException) -> str | None:
    """The host the failed request was for, read duck-typed from `request.url.host`
    (openai, anthropic and httpx errors carry the request) along the chain."""
    for linked in _exception_chain(error):
        try:
            host = cast(Any, linked).request.url.host
        except Exception:  # absent, or httpx's "request not set"
            continue
        if isinstance(host, str) and host:
            return host
    return None


def response_shape_error(
    prompt_name: str,
    problem: str,
    body: Any = None,
    secrets: Iterable[str | None] = (),
    *,
    status_code: int = 200,
) -> PromptEvaluationError:
    """A 2xx answer (200: what every provider answers) that is not the documented shape."""
    return PromptEvaluationError(
        f"the provider's response could not be understood: {problem}",
        prompt_name=prompt_name,
        phase="response",
        provider_payload=_payload(body, None, secrets) if body is not None else None,
        status_code=status_code,
    )


# --- the one error map every adapter instantiates


class MalformedResponse(ValueError):
    """A provider body that is JSON but not the documented shape (raised by parsers)."""


def _at(node: Any, path: tuple[str, ...]) -> Any:
    """The value at `path`, None where it or the way to it is absent."""
    for key in path:
        if type(node) is not dict and not isinstance(node, Mapping):  # decoded JSON: a dict
            return None
        node = cast("Mapping[str, Any]", node).get(key)  # a string: no alias built per key
    return node


def read_label(body: Any, *path: str) -> str | None:
    """A string at `path` in an answer (the model that answered, its service tier): None
    when it or the way to it is absent, malformed when it is not a string."""
    node = _at(body, path)
    if node is None:
        return None
    if not isinstance(node, str):
        raise MalformedResponse(f"{'.'.join(path)} is not a string")
    return node or None


def read_amount(counts: Any, *path: str) -> Decimal | None:
    """An amount of money at `path` in a usage object (a host's billed cost), exactly as
    written: None when absent, malformed when not a number."""
    node = _at(counts, path)
    if node is None:
        return None
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise MalformedResponse(f"usage.{'.'.join(path)} is not a number")
    amount = Decimal(repr(node)) if isinstance(node, float) else Decimal(node)
    if not amount.is_finite() or amount < 0:
        raise MalformedResponse(f"usage.{'.'.join(path)} is not an amount")
    return amount


def read_count(counts: Any, *path: str) -> int:
    """A token count at `path` in a usage object: 0 when the object or the count is absent,
    malformed when either is not what it should be (an object, an int)."""
    node: Any = counts
    for key in path:
        if node is None:
            return 0
        if type(node) is not dict and not isinstance(node, Mapping):  # dict: the fast way
            raise MalformedResponse(f"usage.{'.'.join(path)}: not an object on the way")
        node = cast("Mapping[str, Any]", node).get(key)
    if node is None:
        return 0
    if not isinstance(node, int) or isinstance(node, bool):
        raise MalformedResponse(f"usage.{'.'.join(path)} is not an integer")
    return node


@dataclass(frozen=True, slots=True)
class StatusFacts:
    """What an adapter reads off its SDK's HTTP-status exception (or a stream's error
    event): the status and the provider's words, and what those words say that the
    status does not. `quota_exhausted`: out of credit, whatever the status;
    `context_window_exceeded`: the input does not fit the model's window;
    `content_filtered`: a content filter refused the request; `authentication_failed`:
    the key was refused (Gemini says it with a 400); `limit_named`: the body names the
    limit of the account that was hit (a 429 without it may be a stray: a provider short
    of capacity, a gateway in front of it)."""

    status: int
    message: str
    body: Any = None
    headers: Mapping[str, str] | None = None
    quota_exhausted: bool = False
    retry_after: float | None = None
    context_window_exceeded: bool = False
    content_filtered: bool = False
    authentication_failed: bool = False
    limit_named: bool = False


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """One SDK's exception classes, sorted into the contract's cases.

    `status` exceptions carry an HTTP answer and are read by `facts`; the tuples are
    checked in order (timeout before connection: a timeout is also a transport error).
    """

    sdk: str
    status: tuple[type[BaseException], ...]
    facts: Callable[[Any], StatusFacts]
    timeout: tuple[type[BaseException], ...]
    connection: tuple[type[BaseException], ...]
    unreadable: tuple[type[BaseException], ...]
    other: tuple[type[BaseException], ...] = (Exception,)
    rate_limit_headers: RateLimitHeaders = NO_RATE_LIMIT_HEADERS


@contextmanager
def map_sdk_errors(
    errors: SdkErrors,
    prompt_name: str,
    secrets: Iterable[str | None] = (),
    *,
    model: str | None = None,
) -> Generator[None]:
    """Translate what the SDK raises inside the block; the original is always chained,
    cleaned of `secrets` first (`redact_exception_chain`). `model` is the model the
    request asked for, named by a 404."""
    try:
        yield
    except WinkError:
        raise
    except Exception as error:
        secrets = tuple(secrets)
        mapped = _translate(errors, error, prompt_name, secrets, model)
        redact_exception_chain(error, secrets)
        if mapped is None:
            raise
        raise mapped from error


def _translate(
    errors: SdkErrors,
    error: Exception,
    prompt_name: str,
    secrets: tuple[str | None, ...],
    model: str | None,
) -> PromptEvaluationError | None:
    """The wink error for an SDK exception, the table's cases tried in order (None: not
    the SDK's, let it through)."""
    if isinstance(error, errors.status):
        return error_from_facts(  # the message is cleaned of secrets there, like the payload
            errors.facts(error),
            prompt_name=prompt_name,
            secrets=secrets,
            rate_limit_headers=errors.rate_limit_headers,
            model=model,
        )
    if isinstance(error, errors.timeout):
        return timeout_error(prompt_name, error)
    if isinstance(error, errors.connection):
        return connection_error(prompt_name, error)
    if isinstance(error, errors.unreadable):
        problem = f"{type(error).__name__}: {redact_secrets(str(error), secrets)}"
        return response_shape_error(prompt_name, problem[:500])
    if isinstance(error, errors.other):
        return PromptEvaluationError(
            f"{errors.sdk} failed: {type(error).__name__}: {redact_secrets(str(error), secrets)}",
            prompt_name=prompt_name,
            phase="request",
        )
    return None
