"""Google Gemini's `generateContent` REST API, spoken by wink itself over httpx2 (no SDK):
`generate` translates, `http` sends and reads failures, `errors` reads Gemini's error
bodies, `stream` decodes streams, `thinking` maps `thinking=`. Wire facts (v1beta, thought
signatures, RetryInfo, why no SDK) are in docs/adapters/google.md."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

# --- guarded transport import

try:
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Google adapter needs httpx2: pip install 'wink[google]'") from _missing

from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.foundation.portable import CallIdRules
from ...core.transport.http import HttpCalls, WireRequest
from ..base import LazyStreamFormat, Provider
from . import generate
from .http import DEFAULT_BASE_URL, GeminiCalls, api_key_from_env, endpoint, map_errors
from .thinking import gemini_thinking_config

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["Gemini"]

# What Gemini documents for function calls it did not make itself (another provider's
# turns): without a signature Gemini 3 refuses the request.
_FOREIGN_SIGNATURE = "skip_thought_signature_validator"


class Gemini(Provider):
    """`POST /v1beta/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`)."""

    name = generate.PROVIDER
    api_key_variables = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    unsupported_settings = frozenset({"prompt_cache_key", "prompt_cache_retention"})
    telemetry_name = "gcp.gemini"
    price_provider_id = "google"  # genai-prices' id
    stream_format = LazyStreamFormat(f"{__name__}.stream", "GeminiStream")
    content_rules = generate.CONTENT_RULES
    call_ids = CallIdRules(foreign_call_data={"thought_signature": _FOREIGN_SIGNATURE})

    def key(self) -> str | None:
        """The key given, else GOOGLE_API_KEY, else GEMINI_API_KEY."""
        return self.connection.api_key or api_key_from_env()

    def make_client(self, *, sync: bool) -> Any:
        key = self.key()
        if not key:
            raise ValueError(
                "no Gemini API key: pass api_key= or set GOOGLE_API_KEY or GEMINI_API_KEY"
            )
        kind = httpx2.Client if sync else httpx2.AsyncClient
        headers = {"x-goog-api-key": key, "content-type": "application/json"}
        return kind(headers=headers, timeout=self.connection.timeout)

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, httpx2.AsyncClient)

    @property
    def http_calls(self) -> HttpCalls:
        return GeminiCalls(self.key)

    def check_settings(self) -> None:
        gemini_thinking_config(self.model, self.settings)

    def build_request(self, request: ModelRequest) -> WireRequest:
        url = endpoint(self.connection.base_url or DEFAULT_BASE_URL, self.model)
        return WireRequest(url, generate.build_request(request, self.settings, self.model))

    def parse_response(self, data: Any) -> ModelResponse:
        return generate.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import GeminiBatches

        base = self.connection.base_url or DEFAULT_BASE_URL
        return GeminiBatches(base, self.model, GeminiCalls(self.key))

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_errors(prompt_name, secrets, self.model)
