"""OpenAI through the openai SDK, on its two wire formats: Chat Completions (`chat`, also
any OpenAI-compatible server) and Responses (`responses`); `client` holds what both
share, `*_stream` decode their streams, `thinking` maps `thinking=`. The hosts here are
OpenAI's own API (`openai`, `openai-responses`); `ChatHost` is what a host of Chat
Completions may say besides (its reasoning field, its token limit's name). Wire facts are
in docs/adapters/openai.md."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

import httpx2
import openai

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.http import EncodedRequest, HttpCalls, WireRequest
from ..base import LazyStreamFormat, Provider, token_count, token_count_body
from ..host import Endpoint, Host
from ..stainless import StainlessCalls
from . import chat, responses
from .client import RATE_LIMIT_HEADERS, load_openai_client, map_openai_errors
from .settings import OpenAISettings
from .thinking import openai_reasoning_effort

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["ChatHost", "OpenAI", "OpenAIChat", "OpenAIResponses", "OpenAIResponsesHost"]

_CALLS = StainlessCalls(httpx2.Response)
# What `POST /responses/input_tokens` takes of a Responses body (the SDK's
# `responses.input_tokens.count` parameters); the output limit, sampling, `store`,
# `include`, `stream` are refused there
_COUNTED = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "truncation",
        "conversation",
        "previous_response_id",
    }
)


class _WithoutSdkAuth:
    """The SDK's calls with its own `Authorization` header left out, for a host whose key
    goes in another header or whose signer adds its own (the SDK wants that said per
    request, with `Omit`)."""

    __slots__ = ()

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return _CALLS.post(client, _omitted(wire), time_limit)

    async def post_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await _CALLS.post_async(client, _omitted(wire), time_limit)

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return _CALLS.open_stream(client, _omitted(wire), time_limit)

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await _CALLS.open_stream_async(client, _omitted(wire), time_limit)


def _omitted(wire: EncodedRequest) -> EncodedRequest:
    headers: dict[str, Any] = {"Authorization": openai.Omit(), **(wire.headers or {})}
    return EncodedRequest(wire.path, wire.content, headers)


_UNSIGNED_CALLS = _WithoutSdkAuth()


class _OpenAIWire(Provider):
    """What both wire formats share: the client, the error map."""

    rate_limit_headers = RATE_LIMIT_HEADERS
    settings_type = OpenAISettings  # its prompt-cache options on top of the shared ones

    def make_client(self) -> Any:
        return load_openai_client(self.host.endpoint(), self.connection.timeout)

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, openai.AsyncOpenAI)

    @property
    def http_calls(self) -> HttpCalls:
        return _CALLS if self.host.endpoint().sdk_auth else _UNSIGNED_CALLS

    def check_settings(self) -> None:
        openai_reasoning_effort(self.model, self.settings, self.name)

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_openai_errors(prompt_name, secrets, model=self.model_id)


class ChatHost(Host):
    """A host of Chat Completions. `reasoning_echo`: the assistant field its thinking must
    come back in on a tool-call turn (DeepSeek's `reasoning_content`; None: thinking is
    never sent back); `max_tokens_field`: the name its output limit takes."""

    reasoning_echo: ClassVar[str | None] = None
    max_tokens_field: ClassVar[str] = "max_completion_tokens"


class OpenAIChat(_OpenAIWire):
    """Chat Completions (`POST /chat/completions`), and OpenAI-compatible servers."""

    name = chat.PROVIDER
    stream_format = LazyStreamFormat(f"{__name__}.chat_stream", "ChatStream")
    content_rules = chat.CONTENT_RULES

    def translate(self, request: ModelRequest) -> WireRequest:
        host = self.host
        dialect = host if isinstance(host, ChatHost) else None
        return WireRequest(
            "/chat/completions",
            chat.build_request(
                request,
                self.model,
                self.settings,
                model_id=self.model_id,
                reasoning_echo=dialect.reasoning_echo if dialect else None,
                max_tokens_field=dialect.max_tokens_field if dialect else None,
            ),
        )

    def parse_response(self, data: Any) -> ModelResponse:
        return chat.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import OpenAIBatches

        return OpenAIBatches("/v1/chat/completions")  # the Batch API's endpoint names


class OpenAIResponses(_OpenAIWire):
    """The Responses API (`POST /responses`)."""

    name = responses.PROVIDER
    unsupported_settings = frozenset({"stop", "seed"})
    stream_format = LazyStreamFormat(f"{__name__}.responses_stream", "ResponsesStream")
    content_rules = responses.CONTENT_RULES
    counts_tokens = True

    def translate(self, request: ModelRequest) -> WireRequest:
        body = responses.build_request(request, self.model, self.settings)
        body["model"] = self.model_id
        return WireRequest("/responses", body)

    def parse_response(self, data: Any) -> ModelResponse:
        return responses.parse_response(data)

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        return WireRequest(f"{path}/input_tokens", token_count_body(body, _COUNTED))

    def parse_token_count(self, data: Any) -> int:
        return token_count(data, "input_tokens")

    def batch_wire(self) -> BatchWire:
        from .batch import OpenAIBatches

        return OpenAIBatches("/v1/responses")


class OpenAI(ChatHost):
    """OpenAI's API (api.openai.com), Chat Completions; and any OpenAI-compatible server
    through `base_url=` (which may need no key)."""

    name = "openai"
    wire = OpenAIChat
    system = "openai"
    telemetry_name = "openai"
    api_key_variables = ("OPENAI_API_KEY",)
    demo_model = "gpt-4.1-mini"

    def key_optional(self) -> bool:
        return self.connection.base_url is not None  # a compatible server may need none

    def endpoint(self) -> Endpoint:
        return self.sdk_endpoint()


class OpenAIResponsesHost(OpenAI):
    """OpenAI's API, the Responses wire."""

    name = "openai-responses"
    wire = OpenAIResponses
