"""Anthropic's Messages API through the anthropic SDK: `messages` translates,
`stream` decodes streams, `thinking` maps `thinking=`; docs/adapters/anthropic.md has the
wire facts."""

from __future__ import annotations

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

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.http import HttpCalls, StainlessCalls, WireRequest
from ..base import LazyStreamFormat, Provider
from . import messages
from .thinking import anthropic_thinking

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["Anthropic"]

_CALLS = StainlessCalls(httpx2.Response)


class Anthropic(Provider):
    """The Messages API (`POST /v1/messages`)."""

    name = "anthropic"
    api_key_variables = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    unsupported_settings = frozenset({"seed", "prompt_cache_key", "prompt_cache_retention"})
    rate_limit_headers = messages.RATE_LIMIT_HEADERS
    telemetry_name = "anthropic"
    price_provider_id = "anthropic"  # genai-prices' id
    stream_format = LazyStreamFormat(f"{__name__}.stream", "AnthropicStream")
    content_rules = messages.CONTENT_RULES

    def make_client(self, *, sync: bool) -> Any:
        # api_key None: the SDK reads ANTHROPIC_API_KEY. Retries off: RetryPolicy decides.
        kind = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
        connection = self.connection
        return kind(
            api_key=connection.api_key,
            base_url=connection.base_url,
            timeout=connection.timeout,
            max_retries=0,
        )

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, anthropic.AsyncAnthropic)

    @property
    def http_calls(self) -> HttpCalls:
        return _CALLS

    def check_settings(self) -> None:
        anthropic_thinking(self.model, self.settings)

    def build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest(
            "/v1/messages", messages.build_request(request, self.model, self.settings)
        )

    def parse_response(self, data: Any) -> ModelResponse:
        return messages.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import AnthropicBatches

        return AnthropicBatches()

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return messages.map_errors(prompt_name, secrets, self.model)
