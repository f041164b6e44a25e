"""What OpenAI's two wire formats (Chat Completions, Responses) share: the SDK client,
its error map and rate-limit headers, strict schemas and the failure text
(docs/adapters/openai.md)."""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

# --- guarded SDK import

try:
    import openai
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the OpenAI adapter needs the openai SDK: pip install 'wink[openai]'"
    ) from _missing

from ...core.foundation.carriage import MB, Carriage, InToolResult
from ...core.foundation.content import Attachment
from ...core.foundation.messages import ToolResultMessage
from ...core.throttling.headers import RateLimitHeaders
from ...core.transport.errors import SdkErrors, StatusFacts, map_sdk_errors
from ..host import Endpoint

__all__ = [
    "FAILURE_PREFIX",
    "FILE_BYTES",
    "RATE_LIMIT_HEADERS",
    "failure_text",
    "file_name",
    "image_carriage",
    "load_openai_client",
    "map_openai_errors",
    "openai_error_facts",
    "strict_schema",
]

# OpenAI has no error flag on tool results: a failure is marked in its text.
FAILURE_PREFIX = "Error: "
# Local OpenAI-compatible servers (Ollama, vLLM) need no key, but the SDK insists on one.
_PLACEHOLDER_KEY = "not-needed"


# --- content parts (docs/adapters/openai.md: the documented limits)

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def image_carriage(in_tool_result: InToolResult) -> Carriage:
    """Images on either OpenAI API: PNG, JPEG, GIF (not animated), WebP, as bytes or by
    URL; at most 500 and 50 MB of image bytes a request."""
    return Carriage(
        _IMAGE_TYPES,
        frozenset({"data", "url"}),
        in_tool_result,
        max_total_bytes=50 * MB,
        max_count=500,
    )


FILE_BYTES = 32 * MB
"""File inputs (PDF): at most 32 MB of files (and 100 pages) a request."""
_DEFAULT_NAMES = {"application/pdf": "document.pdf", "text/plain": "document.txt"}


def file_name(part: Attachment) -> str:
    """The `filename` a file input needs: the part's name, else a neutral one."""
    return part.name or _DEFAULT_NAMES.get(part.media_type, "file")


def load_openai_client(endpoint: Endpoint, timeout: float) -> Any:
    """The async client (every entry point's) with the SDK's retries off, made as the
    host says (`endpoint`); a placeholder key for compatible servers that need none, and
    for hosts that sign requests themselves (the SDK's own auth header is then left out)."""
    api_key, base_url = endpoint.api_key, endpoint.base_url
    if api_key is None and base_url is not None and not os.environ.get("OPENAI_API_KEY"):
        api_key = _PLACEHOLDER_KEY
    headers: dict[str, Any] = dict(endpoint.headers)
    if not endpoint.sdk_auth:  # the calls leave its header out (`Omit`, per request)
        api_key = api_key or _PLACEHOLDER_KEY
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_retries=0,
        default_headers=headers or None,
        default_query=dict(endpoint.query) or None,
    )


def failure_text(message: ToolResultMessage) -> str:
    """What the model reads: failures unmistakably marked, successes never look like one."""
    if not message.success:
        return FAILURE_PREFIX + message.content
    if message.content.startswith(FAILURE_PREFIX):
        return " " + message.content
    return message.content


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema in OpenAI strict form, or None when strict mode cannot express it.

    Strict mode needs every object closed (`additionalProperties: false`) and every
    property required; a parameter with a default cannot be represented, so such tools
    are sent non-strict.
    """
    result = copy.deepcopy(dict(schema))

    def close(node: Any) -> bool:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            if item.get("type") == "object" or "properties" in item:
                properties = cast(dict[str, Any], item.get("properties", {}))
                if set(properties) != set(cast(list[str], item.get("required", []))):
                    return False
                if item.get("additionalProperties") not in (None, False):
                    return False
                item["additionalProperties"] = False
            return all(close(value) for value in item.values())
        if isinstance(node, list):
            return all(close(value) for value in cast(list[Any], node))
        return True

    return result if close(result) else None


# --- error mapping


# Error codes a content filter sends (Azure OpenAI: `content_filter`; image models:
# `content_policy_violation`); OpenAI's reasoning models flag a prompt as `invalid_prompt`.
_FILTER_CODES = frozenset({"content_filter", "content_policy_violation"})
_PAYMENT_REQUIRED = 402
_CONTEXT_WINDOW_WORDS = "maximum context length"  # OpenAI's and compatible servers' text
# A 429 of the account's own limit names it: `rate_limit_exceeded`, "... on requests per
# min (RPM): Limit 500, Used 500, Requested 1." (older: "Limit: 3 / min"). Other 429s
# ("That model is currently overloaded with other requests", a gateway's) name none.
_LIMIT_SIZE = re.compile(r"\bLimit:? ?\d")


def openai_error_facts(
    status: int, body: Any, default_message: str, headers: Mapping[str, str] | None = None
) -> StatusFacts:
    """What an OpenAI error object (`{"message", "type", "param", "code"}`) says, for an
    error answer and a stream's error event alike (docs/adapters/openai.md)."""
    detail = cast(dict[str, Any], body) if isinstance(body, dict) else {}
    code, kind, message = detail.get("code"), detail.get("type"), detail.get("message")
    text = message if isinstance(message, str) else default_message
    return StatusFacts(
        status=status,
        message=text,
        body=body,
        headers=headers,
        # OpenAI sends an exhausted quota as a 429 too; compatible hosts as a 402
        # Payment Required (OpenRouter's "insufficient credits").
        quota_exhausted="insufficient_quota" in (code, kind) or status == _PAYMENT_REQUIRED,
        limit_named=code == "rate_limit_exceeded" and _LIMIT_SIZE.search(text) is not None,
        context_window_exceeded=code == "context_length_exceeded"
        or _CONTEXT_WINDOW_WORDS in text.lower(),
        content_filtered=code in _FILTER_CODES
        or (code == "invalid_prompt" and "flagged" in text.lower()),
    )


def _status_facts(error: openai.APIStatusError) -> StatusFacts:
    # the body is unwrapped by the SDK: {"message", "type", "param", "code"}
    return openai_error_facts(error.status_code, error.body, str(error), error.response.headers)


# OpenAI's allowance headers; their resets are Go durations ("1.5s", "6m0s"). OpenAI-
# compatible servers that report an allowance use the same names.
RATE_LIMIT_HEADERS = RateLimitHeaders(
    requests=(
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    ),
    resets=(
        ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
        ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ),
    retry_after_ms="retry-after-ms",  # the wait in milliseconds, before retry-after
)

_ERRORS = SdkErrors(
    sdk="openai",
    status=(openai.APIStatusError,),
    facts=_status_facts,
    timeout=(openai.APITimeoutError,),
    connection=(openai.APIConnectionError,),
    unreadable=(openai.APIResponseValidationError, json.JSONDecodeError),
    other=(openai.OpenAIError,),
    rate_limit_headers=RATE_LIMIT_HEADERS,
)


def map_openai_errors(
    prompt_name: str, secrets: Iterable[str] = (), *, model: str | None = None
) -> AbstractContextManager[None]:
    """openai SDK exceptions -> the typed contract (shared by both OpenAI adapters)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets, model=model)
