"""Anthropic's Messages API through the anthropic SDK: `messages` translates,
`stream` decodes streams, `thinking` maps `thinking=`; docs/adapters/anthropic.md has the
wire facts."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

# --- guarded SDK import

try:
    import anthropic
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the Anthropic adapter needs the anthropic SDK: pip install 'wink[anthropic]'"
    ) from _missing

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.http import HttpCalls, WireRequest
from ..base import LazyStreamFormat, Provider, token_count, token_count_body
from ..host import Endpoint, Host
from ..stainless import StainlessCalls
from . import messages
from .server_tools import BetaMergingCalls, beta_headers
from .thinking import anthropic_thinking

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["Anthropic", "AnthropicHost", "AnthropicMessages"]

_CALLS = BetaMergingCalls(StainlessCalls(httpx2.Response))
# What `POST /v1/messages/count_tokens` takes of a Messages body (the SDK's
# `messages.count_tokens` parameters); `max_tokens`, sampling, `stream`, `metadata`
# are refused there
_COUNTED = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "speed",
    }
)


class AnthropicMessages(Provider):
    """The Messages API (`POST /v1/messages`)."""

    name = "anthropic"
    unsupported_settings = frozenset({"seed"})
    rate_limit_headers = messages.RATE_LIMIT_HEADERS
    stream_format = LazyStreamFormat(f"{__name__}.stream", "AnthropicStream")
    content_rules = messages.CONTENT_RULES
    counts_tokens = True

    def make_client(self) -> Any:
        # api_key None: the SDK reads ANTHROPIC_API_KEY. Retries off: RetryPolicy decides.
        endpoint = self.host.endpoint()
        headers: dict[str, Any] = dict(endpoint.headers)
        api_key = endpoint.api_key
        if not endpoint.sdk_auth:  # the host signs: the SDK's key header is left out
            api_key = api_key or "not-needed"
            headers["x-api-key"] = anthropic.Omit()
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=endpoint.base_url,
            timeout=self.connection.timeout,
            max_retries=0,
            default_headers=headers or None,
            default_query=dict(endpoint.query) or None,
        )

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, anthropic.AsyncAnthropic)

    @property
    def http_calls(self) -> HttpCalls:
        return _CALLS

    def check_settings(self) -> None:
        thinking = anthropic_thinking(self.model, self.settings)
        if thinking and self.settings.tool_choice not in (None, "auto", "none"):
            raise ConfigurationError(
                f"Anthropic refuses tool_choice={self.settings.tool_choice!r} with thinking on "
                '("Thinking may not be enabled when tool_choice forces tool use."): use '
                '"auto" or turn thinking off',
                provider=self.name,
                option="tool_choice",
            )

    def translate(self, request: ModelRequest) -> WireRequest:
        body = messages.build_request(request, self.model, self.settings)
        body["model"] = self.model_id
        return WireRequest("/v1/messages", body, beta_headers(request.builtin_tools))

    def parse_response(self, data: Any) -> ModelResponse:
        return messages.parse_response(data)

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        return WireRequest(f"{path}/count_tokens", token_count_body(body, _COUNTED))

    def parse_token_count(self, data: Any) -> int:
        return token_count(data, "input_tokens")

    def batch_wire(self) -> BatchWire:
        from .batch import AnthropicBatches

        return AnthropicBatches()

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return messages.map_errors(prompt_name, secrets, self.model_id)


class AnthropicHost(Host):
    """Anthropic's API (api.anthropic.com)."""

    name = "anthropic"
    wire = AnthropicMessages
    system = "anthropic"
    telemetry_name = "anthropic"
    api_key_variables = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    demo_model = "claude-sonnet-4-6"

    def endpoint(self) -> Endpoint:
        return self.sdk_endpoint()


Anthropic = AnthropicMessages  # the wire's earlier name
