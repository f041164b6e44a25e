"""Gemini's REST calls over httpx2, and their failures: an error answer is classified by
its HTTP status and body (`errors`) through core's table, like every provider's."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

import httpx2

from ...core.foundation.errors import ConfigurationError
from ...core.transport.errors import SdkErrors, StatusFacts, map_sdk_errors
from ...core.transport.http import EncodedRequest
from .errors import google_error_facts

__all__ = [
    "DEFAULT_BASE_URL",
    "GeminiCalls",
    "GeminiErrorAnswer",
    "content_of",
    "endpoint",
    "map_errors",
    "resource_url",
]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_API_VERSION = "v1beta"  # v1 lacks parts of the API (parametersJsonSchema, thinking)
_MODEL_PREFIXES = ("models/", "tunedModels/")  # already a resource name


class GeminiErrorAnswer(Exception):
    """A non-2xx answer. Raised inside the error map, so the HTTP status decides what it
    becomes, by the same core table as every other provider."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code} {response.reason_phrase}".strip())
        self.response = response


_BODY_LIMIT = 2000  # characters of a non-JSON error page kept in the payload


def _status_facts(error: GeminiErrorAnswer) -> StatusFacts:
    """What an error answer says. Gemini's `{"error": {...}}` gives the message, RetryInfo
    and QuotaFailure; any other body (a proxy's HTML page) is kept as text, truncated."""
    response = error.response
    status = response.status_code
    reason = response.reason_phrase or "error"
    body = _error_body(response.content)
    if body is None:
        return StatusFacts(
            status=status,
            message=f"{reason} (not a Gemini error body)",
            body=response.text[:_BODY_LIMIT],  # decoded by its declared charset
            headers=response.headers,
        )
    message = body["error"].get("message")
    text = message if isinstance(message, str) and message else reason
    return google_error_facts(status, body, text, response.headers)


def _error_body(content: bytes) -> dict[str, Any] | None:
    """The documented `{"error": {...}}` object, or None for any other body."""
    try:
        data = json.loads(content)
    except ValueError:  # not JSON, or not UTF-8 (a latin-1 error page)
        return None
    if isinstance(data, dict) and isinstance(cast(dict[str, Any], data).get("error"), dict):
        return cast(dict[str, Any], data)
    return None


_ERRORS = SdkErrors(
    sdk="httpx2",
    status=(GeminiErrorAnswer,),
    facts=_status_facts,
    timeout=(httpx2.TimeoutException,),
    connection=(httpx2.TransportError,),
    unreadable=(httpx2.DecodingError,),
)


def map_errors(
    prompt_name: str, secrets: Iterable[str] = (), model: str | None = None
) -> AbstractContextManager[None]:
    """httpx2 exceptions and error answers -> the typed contract (shared logic in core)."""
    return map_sdk_errors(_ERRORS, prompt_name, secrets, model=model)


@functools.lru_cache(maxsize=64)
def endpoint(base_url: str, model: str, method: str = "generateContent") -> str:
    """`{base_url}/v1beta/models/{model}:generateContent` (the adapter checked base_url),
    or another method of the model (`batchGenerateContent`)."""
    name = model if model.startswith(_MODEL_PREFIXES) else f"models/{model}"
    return f"{base_url.rstrip('/')}/{_API_VERSION}/{name}:{method}"


def resource_url(base_url: str, name: str) -> str:
    """`{base_url}/v1beta/{name}`: a resource the API named (`batches/...`)."""
    return f"{base_url.rstrip('/')}/{_API_VERSION}/{name}"


class GeminiCalls:
    """Gemini's REST calls over httpx2 (wink's own clients carry the key; a caller's
    client gets it per request unless it carries one)."""

    __slots__ = ("_key",)

    def __init__(self, key: Callable[[], str | None]) -> None:
        self._key = key

    def headers_for(
        self, client: httpx2.Client | httpx2.AsyncClient, wire: EncodedRequest | None = None
    ) -> Mapping[str, str] | None:
        """What a request adds to the client's headers: the signer's (a bearer token), if
        any; on a caller's client, also the key (unless it carries one) and the content
        type."""
        present = client.headers
        signed = wire.headers if wire is not None else None
        if "content-type" in present and ("x-goog-api-key" in present or signed is not None):
            return signed
        headers = {"content-type": "application/json", **(signed or {})}
        key = self._key()
        if key and "x-goog-api-key" not in present:
            headers["x-goog-api-key"] = key
        return headers

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes, Any]:
        if not isinstance(client, httpx2.Client):
            raise _not_a_client(client)
        response = client.post(
            wire.path,
            content=wire.content,
            headers=self.headers_for(client, wire),
            timeout=time_limit,
        )
        return content_of(response), response.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes, Any]:
        if not isinstance(client, httpx2.AsyncClient):
            raise _not_a_client(client)
        response = await client.post(
            wire.path,
            content=wire.content,
            headers=self.headers_for(client, wire),
            timeout=time_limit,
        )
        return content_of(response), response.headers

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        if not isinstance(client, httpx2.Client):
            raise _not_a_client(client)
        request = client.build_request(
            "POST",
            wire.path,
            content=wire.content,
            headers=self.headers_for(client, wire),
            timeout=time_limit,
        )
        response = client.send(request, stream=True)
        if not response.is_success:
            response.read()  # the error body decides what the answer becomes
            raise GeminiErrorAnswer(response)
        return response

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        if not isinstance(client, httpx2.AsyncClient):
            raise _not_a_client(client)
        request = client.build_request(
            "POST",
            wire.path,
            content=wire.content,
            headers=self.headers_for(client, wire),
            timeout=time_limit,
        )
        response = await client.send(request, stream=True)
        if not response.is_success:
            await response.aread()
            raise GeminiErrorAnswer(response)
        return response


def content_of(response: httpx2.Response) -> bytes:
    """The body of a 2xx; any other status is an error answer, classified by status."""
    if not response.is_success:
        raise GeminiErrorAnswer(response)
    return response.content


def _not_a_client(client: object) -> ConfigurationError:
    kind = type(client)
    hint = (
        "; wink speaks the Gemini REST API itself: pass base_url= and api_key= instead"
        if kind.__module__.startswith("google.")
        else ""
    )
    return ConfigurationError(
        f"client= must be an httpx2.Client or httpx2.AsyncClient, not "
        f"{kind.__module__}.{kind.__qualname__}{hint}",
        provider="google",
        option="client",
    )
