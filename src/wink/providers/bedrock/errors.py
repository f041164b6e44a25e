"""Bedrock's error answers: the `x-amzn-ErrorType` header (`ThrottlingException:http://...`)
or the body's `__type`, and the body's `message`, read into core's `StatusFacts`.

The statuses Bedrock sends do not all say what the error is (`ModelNotReadyException`
is a 429 that waiting a moment lifts, `ServiceQuotaExceededException` a 400 that waiting
does not, `UnrecognizedClientException` a 403 that is a refused key), so each type is
given the status that classifies it as the contract says (docs/hosts/bedrock.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, cast

from ...core.transport.errors import StatusFacts

__all__ = ["bedrock_error_facts", "error_type", "profile_hint", "stream_error_facts"]

# type -> (status that classifies it, a throttle that waiting does not lift)
_TYPES: dict[str, tuple[int, bool]] = {
    "ThrottlingException": (429, False),
    "ServiceUnavailableException": (503, False),
    "ModelNotReadyException": (503, False),
    "InternalServerException": (500, False),
    "ModelErrorException": (502, False),
    "ModelStreamErrorException": (502, False),
    "ModelTimeoutException": (408, False),
    "ValidationException": (400, False),
    "AccessDeniedException": (403, False),
    "ResourceNotFoundException": (404, False),
    "UnrecognizedClientException": (403, False),
    "ExpiredTokenException": (403, False),
    "InvalidSignatureException": (403, False),
    "IncompleteSignatureException": (403, False),
    "MissingAuthenticationTokenException": (403, False),
    "ServiceQuotaExceededException": (400, True),
    "ConflictException": (409, False),
}
# 403s that say the credentials were refused (AuthenticationError), not the permission
_AUTHENTICATION = frozenset(
    {
        "UnrecognizedClientException",
        "ExpiredTokenException",
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "MissingAuthenticationTokenException",
    }
)
_CONTEXT_WINDOW_WORDS = ("input is too long", "too many input tokens", "prompt is too long")
_NOT_ENABLED_WORDS = "don't have access to the model"
_PROFILE_WORDS = "on-demand throughput isn"
_PROFILE_PREFIXES = (
    ("us-gov-", "us-gov"),
    ("us-", "us"),
    ("ca-", "us"),
    ("eu-", "eu"),
    ("ap-", "apac"),
)
_PROFILED = re.compile(r"^(us|eu|apac|global|us-gov|jp|au|ca)\.")


def error_type(headers: Mapping[str, str] | None, body: Any) -> str | None:
    """The error's type: the header's, else the body's `__type` (`ns#Type` or `Type`)."""
    raw = headers.get("x-amzn-errortype") if headers is not None else None
    if not raw and isinstance(body, dict):
        found = cast(dict[str, Any], body).get("__type")
        raw = found if isinstance(found, str) else None
    if not raw:
        return None
    return raw.split(":", 1)[0].rsplit("#", 1)[-1].strip() or None


def bedrock_error_facts(
    status: int,
    content: bytes,
    headers: Mapping[str, str] | None,
    model: str,
    region: str | None,
) -> StatusFacts:
    """What an error answer says (its status as sent when the type is unknown)."""
    body: Any
    try:
        body = json.loads(content)
    except ValueError:
        body = content.decode("utf-8", "replace")[:2000] or None
    kind = error_type(headers, body)
    message = None
    if isinstance(body, dict):
        fields = cast(dict[str, Any], body)
        message = fields.get("message") or fields.get("Message")
        nested = fields.get("error")  # not Bedrock's: a proxy's `{"error": {"message"}}`
        if not message and isinstance(nested, dict):
            message = cast(dict[str, Any], nested).get("message")
    text = message if isinstance(message, str) and message else f"HTTP {status}"
    return _facts(kind, status, text, body, headers, model, region)


def stream_error_facts(
    name: str, payload: Mapping[str, Any], model: str | None = None, region: str | None = None
) -> StatusFacts:
    """An exception that arrived inside a ConverseStream (`throttlingException`...),
    classified as the same error answered before the stream."""
    kind = name[:1].upper() + name[1:]
    message = payload.get("message") or payload.get("Message")
    text = message if isinstance(message, str) and message else kind
    return _facts(kind, 500, text, dict(payload), None, model, region)


def _facts(
    kind: str | None,
    status: int,
    text: str,
    body: Any,
    headers: Mapping[str, str] | None,
    model: str | None,
    region: str | None,
) -> StatusFacts:
    classified, quota = _TYPES.get(kind or "", (status, False))
    lowered = text.lower()
    if kind == "ValidationException" and _PROFILE_WORDS in lowered and model:
        text = f"{text} ({profile_hint(model, region)})"
    if kind == "AccessDeniedException" and _NOT_ENABLED_WORDS in lowered:
        text = (
            f"{text} (the model is not enabled for this account and region: request "
            "access to it in the Bedrock console's Model access page)"
        )
    words = f"{kind}: {text}" if kind else text
    return StatusFacts(
        status=classified,
        message=words,
        body=body,
        headers=headers,
        quota_exhausted=quota,
        context_window_exceeded=kind == "ValidationException"
        and any(w in lowered for w in _CONTEXT_WINDOW_WORDS),
        authentication_failed=kind in _AUTHENTICATION,
        # the account's request or token quota (capacity is ServiceUnavailableException)
        limit_named=kind == "ThrottlingException",
    )


def profile_hint(model: str, region: str | None) -> str:
    """The cross-region inference profile to use for an on-demand model id that needs one:
    its id with the region's geography prefix (`us.`, `eu.`, `apac.`), or `global.`."""
    if _PROFILED.match(model):
        return f"{model} is already an inference profile; check that it exists in {region}"
    geography = next(
        (prefix for start, prefix in _PROFILE_PREFIXES if region and region.startswith(start)),
        "global",
    )
    return (
        f"this model is served through an inference profile: use bedrock:{geography}.{model}, "
        f"or bedrock:global.{model} where offered"
    )
