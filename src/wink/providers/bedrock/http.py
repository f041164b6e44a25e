"""Bedrock Runtime's Converse calls over httpx2 (the host's `Signer` adds the auth as each
request leaves: `wink.providers.host.SignedCalls`), and their failures: an error answer
is read into `StatusFacts` by its type (`errors`) and classified by core's table, like
every provider's."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import quote

import httpx2

from ...core.foundation.errors import ConfigurationError
from ...core.transport.errors import SdkErrors, StatusFacts, map_sdk_errors
from ...core.transport.http import EncodedRequest
from .errors import bedrock_error_facts

__all__ = [
    "BedrockCalls",
    "BedrockErrorAnswer",
    "default_base_url",
    "endpoint",
    "error_table",
    "map_errors",
]

_JSON = {"content-type": "application/json", "accept": "application/json"}
_EVENTS = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}


def default_base_url(region: str) -> str:
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def endpoint(base_url: str, model: str, operation: str = "converse") -> str:
    """`{base_url}/model/{modelId}/converse`; the id is escaped whole (an ARN's `:` and
    `/` too), as the AWS SDKs send it."""
    return f"{base_url.rstrip('/')}/model/{quote(model, safe='')}/{operation}"


class BedrockErrorAnswer(Exception):
    """A non-2xx answer, raised inside the error map and read there by its type."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code} {response.reason_phrase}".strip())
        self.status = response.status_code
        self.content = response.content
        self.headers = response.headers


def error_table(model: str, region: str | None) -> SdkErrors:
    """httpx2's exceptions and Bedrock's error answers, sorted into the contract's cases
    (made once per adapter: the model and region it names do not change)."""

    def facts(error: BedrockErrorAnswer) -> StatusFacts:
        return bedrock_error_facts(error.status, error.content, error.headers, model, region)

    return SdkErrors(
        sdk="httpx2",
        status=(BedrockErrorAnswer,),
        facts=facts,
        timeout=(httpx2.TimeoutException,),
        connection=(httpx2.TransportError,),
        unreadable=(httpx2.DecodingError,),
    )


def map_errors(
    errors: SdkErrors, prompt_name: str, secrets: Iterable[str], model: str
) -> AbstractContextManager[None]:
    """httpx2 exceptions and error answers -> the typed contract (shared logic in core);
    `secrets` is only read when something fails."""
    return map_sdk_errors(errors, prompt_name, secrets, model=model)


class BedrockCalls:
    """POSTs to Bedrock Runtime: JSON in, JSON or event-stream frames out; an error
    answer is raised as `BedrockErrorAnswer` for the error map to read."""

    __slots__ = ()

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes, Any]:
        sync = _sync_client(client)
        headers = {**_JSON, **(wire.headers or {})}
        response = sync.post(wire.path, content=wire.content, headers=headers, timeout=time_limit)
        return _content_of(response), response.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes, Any]:
        given = _async_client(client)
        headers = {**_JSON, **(wire.headers or {})}
        response = await given.post(
            wire.path, content=wire.content, headers=headers, timeout=time_limit
        )
        return _content_of(response), response.headers

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        sync = _sync_client(client)
        headers = {**_EVENTS, **(wire.headers or {})}
        request = sync.build_request(
            "POST", wire.path, content=wire.content, headers=headers, timeout=time_limit
        )
        response = sync.send(request, stream=True)
        if not response.is_success:
            response.read()  # the error body decides what the answer becomes
            raise BedrockErrorAnswer(response)
        return response

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        given = _async_client(client)
        headers = {**_EVENTS, **(wire.headers or {})}
        request = given.build_request(
            "POST", wire.path, content=wire.content, headers=headers, timeout=time_limit
        )
        response = await given.send(request, stream=True)
        if not response.is_success:
            await response.aread()
            raise BedrockErrorAnswer(response)
        return response


def _content_of(response: httpx2.Response) -> bytes:
    if not response.is_success:
        raise BedrockErrorAnswer(response)
    return response.content


def _sync_client(client: Any) -> httpx2.Client:
    if not isinstance(client, httpx2.Client):
        raise _not_a_client(client)
    return client


def _async_client(client: Any) -> httpx2.AsyncClient:
    if not isinstance(client, httpx2.AsyncClient):
        raise _not_a_client(client)
    return client


def _not_a_client(client: object) -> ConfigurationError:
    kind = type(client)
    hint = (
        "; wink speaks Bedrock's Converse API itself over async HTTP: pass region= "
        "(and base_url= for a proxy) instead of a boto3 client"
        if kind.__module__.startswith(("botocore", "boto3"))
        else ""
    )
    return ConfigurationError(
        f"client= must be an httpx2.Client or httpx2.AsyncClient, not "
        f"{kind.__module__}.{kind.__qualname__}{hint}",
        provider="bedrock",
        option="client",
    )
