"""`Converse`: Bedrock's Converse wire format (`/model/{modelId}/converse`, and
`/converse-stream` for streams) for one model on one host."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from functools import cached_property
from typing import Any

# --- guarded transport import

try:
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Bedrock adapter needs httpx2: pip install 'wink[bedrock]'") from _missing

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.transport.errors import SdkErrors
from ...core.transport.http import HttpCalls, WireRequest
from ..base import LazyStreamFormat, Provider
from ..host import Host
from . import converse
from .http import BedrockCalls, endpoint, error_table, map_errors

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
        body = converse.build_request(request, self.model, self.settings)
        return WireRequest(self._url, body)

    @cached_property
    def _url(self) -> str:
        """The Converse URL: the host's endpoint and the model never change."""
        return endpoint(self.host.endpoint().base_url or "", self.model_id)

    @cached_property
    def _errors(self) -> SdkErrors:
        region: object = getattr(self.host, "region", None)  # the profile hint's geography
        return error_table(self.model_id, region if isinstance(region, str) else None)

    def parse_response(self, data: Any) -> ModelResponse:
        return converse.parse_response(data)

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_errors(self._errors, prompt_name, _with_host(secrets, self.host), self.model_id)


def _with_host(secrets: tuple[str, ...], host: Host) -> Iterator[str]:
    """The adapter's secrets, then the host's with what its signer has sent by then: read
    only when a request fails."""
    yield from secrets
    yield from host.secrets()
