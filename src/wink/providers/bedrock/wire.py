"""`Converse`: Bedrock's Converse wire format (`/model/{modelId}/converse`, and
`/converse-stream` for streams) for one model on one host."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

# --- guarded transport import

try:
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Bedrock adapter needs httpx2: pip install 'wink[bedrock]'") from _missing

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.http import HttpCalls, WireRequest
from ..base import LazyStreamFormat, Provider
from . import converse
from .http import BedrockCalls, endpoint, map_errors

__all__ = ["Converse"]

_CALLS = BedrockCalls()


class Converse(Provider):
    """The Converse API: one wire format for every model Bedrock serves."""

    name = converse.PROVIDER
    unsupported_settings = frozenset({"seed", "parallel_tool_calls"})
    stream_format = LazyStreamFormat(f"{__package__}.stream", "ConverseStream")
    content_rules = converse.CONTENT_RULES

    def make_client(self) -> Any:
        headers = dict(self.host.endpoint().headers)
        return httpx2.AsyncClient(headers=headers, timeout=self.connection.timeout)

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, httpx2.AsyncClient)

    @property
    def http_calls(self) -> HttpCalls:
        return _CALLS

    def check_settings(self) -> None:
        converse.thinking_fields(self.model, self.settings)

    def translate(self, request: ModelRequest) -> WireRequest:
        base = self.host.endpoint().base_url or ""
        body = converse.build_request(request, self.model, self.settings)
        return WireRequest(endpoint(base, self.model_id), body)

    def parse_response(self, data: Any) -> ModelResponse:
        return converse.parse_response(data)

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        region: object = getattr(self.host, "region", None)  # the profile hint's geography
        return map_errors(
            prompt_name,
            (*secrets, *self.host.secrets()),  # with what the signer has sent since
            self.model_id,
            region if isinstance(region, str) else None,
        )
