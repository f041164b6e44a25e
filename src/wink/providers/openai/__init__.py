"""OpenAI through the openai SDK, on its two wire formats: Chat Completions (`chat`, also
any OpenAI-compatible server) and Responses (`responses`); `client` holds what both
share, `*_stream` decode their streams, `thinking` maps `thinking=`. Wire facts are in
docs/adapters/openai.md."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import httpx2
import openai

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.http import HttpCalls, StainlessCalls, WireRequest
from ..base import LazyStreamFormat, Provider
from . import chat, responses
from .client import RATE_LIMIT_HEADERS, load_openai_client, map_openai_errors
from .thinking import openai_reasoning_effort

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["OpenAIChat", "OpenAIResponses"]

_CALLS = StainlessCalls(httpx2.Response)


class _OpenAI(Provider):
    """What both wire formats share: the client, the key rules, the error map."""

    api_key_variables = ("OPENAI_API_KEY",)
    rate_limit_headers = RATE_LIMIT_HEADERS
    telemetry_name = "openai"
    price_provider_id = "openai"  # genai-prices' id

    def make_client(self, *, sync: bool) -> Any:
        connection = self.connection
        return load_openai_client(
            connection.api_key, connection.base_url, connection.timeout, sync=sync
        )

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, openai.AsyncOpenAI)

    @property
    def http_calls(self) -> HttpCalls:
        return _CALLS

    def key_optional(self) -> bool:
        return self.connection.base_url is not None  # a compatible server may need none

    def check_settings(self) -> None:
        openai_reasoning_effort(self.model, self.settings, self.name)

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_openai_errors(prompt_name, secrets, model=self.model)


class OpenAIChat(_OpenAI):
    """Chat Completions (`POST /chat/completions`), and OpenAI-compatible servers."""

    name = chat.PROVIDER
    stream_format = LazyStreamFormat(f"{__name__}.chat_stream", "ChatStream")
    content_rules = chat.CONTENT_RULES

    def build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest(
            "/chat/completions", chat.build_request(request, self.model, self.settings)
        )

    def parse_response(self, data: Any) -> ModelResponse:
        return chat.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import OpenAIBatches

        return OpenAIBatches("/v1/chat/completions")  # the Batch API's endpoint names


class OpenAIResponses(_OpenAI):
    """The Responses API (`POST /responses`)."""

    name = responses.PROVIDER
    unsupported_settings = frozenset({"stop", "seed"})
    stream_format = LazyStreamFormat(f"{__name__}.responses_stream", "ResponsesStream")
    content_rules = responses.CONTENT_RULES

    def build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest(
            "/responses", responses.build_request(request, self.model, self.settings)
        )

    def parse_response(self, data: Any) -> ModelResponse:
        return responses.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import OpenAIBatches

        return OpenAIBatches("/v1/responses")
