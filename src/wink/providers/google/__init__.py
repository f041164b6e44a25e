"""Google Gemini's `generateContent` REST API, spoken by wink itself over httpx2 (no SDK):
`generate` translates, `http` sends and reads failures, `errors` reads Gemini's error
bodies, `stream` decodes streams, `thinking` maps `thinking=`. Wire facts (v1beta, thought
signatures, RetryInfo, why no SDK) are in docs/adapters/google.md."""

from __future__ import annotations

from collections.abc import Mapping
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
from ..base import LazyStreamFormat, Provider, token_count
from ..host import Endpoint, Host
from . import generate
from .http import DEFAULT_BASE_URL, GeminiCalls, endpoint, map_errors, model_name
from .thinking import gemini_thinking_config

if TYPE_CHECKING:
    from ...core.transport.batches import BatchWire

__all__ = ["Gemini", "GeminiHost"]

# What Gemini documents for function calls it did not make itself (another provider's
# turns): without a signature Gemini 3 refuses the request.
_FOREIGN_SIGNATURE = "skip_thought_signature_validator"


class Gemini(Provider):
    """`POST /v1beta/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`)."""

    name = generate.PROVIDER
    unsupported_settings = frozenset({"parallel_tool_calls"})
    stream_format = LazyStreamFormat(f"{__name__}.stream", "GeminiStream")
    content_rules = generate.CONTENT_RULES
    counts_tokens = True
    call_ids = CallIdRules(foreign_call_data={"thought_signature": _FOREIGN_SIGNATURE})
    wire_name = "Gemini"  # in refusals of what this API lacks
    search_excludes_domains = False  # Google Search's `excludeDomains` (Vertex's alone)

    def key(self) -> str | None:
        """The key the host sends in `x-goog-api-key` (None: it signs requests instead)."""
        endpoint = self.host.endpoint()
        return endpoint.api_key if endpoint.sdk_auth else None

    def make_client(self) -> Any:
        endpoint = self.host.endpoint()
        headers = {"content-type": "application/json", **endpoint.headers}
        if endpoint.sdk_auth:
            if not endpoint.api_key:
                names = " or ".join(self.host.api_key_variables)
                raise ValueError(f"no Gemini API key: pass api_key= or set {names}")
            headers["x-goog-api-key"] = endpoint.api_key
        return httpx2.AsyncClient(
            headers=headers, params=dict(endpoint.query), timeout=self.connection.timeout
        )

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, httpx2.AsyncClient)

    @property
    def http_calls(self) -> HttpCalls:
        return GeminiCalls(self.key)

    def check_settings(self) -> None:
        gemini_thinking_config(self.model, self.settings)

    def translate(self, request: ModelRequest) -> WireRequest:
        body = generate.build_request(
            request,
            self.settings,
            self.model,
            wire=self.wire_name,
            exclude_domains=self.search_excludes_domains,
        )
        return WireRequest(self.model_url(), body)

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        # `models.countTokens` takes the whole generation request (system instruction,
        # tools, config included) as `generateContentRequest`, naming its model
        counted = {"model": model_name(self.model_id), **body}
        return WireRequest(self.model_url("countTokens"), {"generateContentRequest": counted})

    def parse_token_count(self, data: Any) -> int:
        return token_count(data, "totalTokens")

    def model_url(self, method: str = "generateContent") -> str:
        """The URL of a method of this model on its host."""
        host = self.host
        if isinstance(host, GeminiHost):
            return host.model_url(method)
        return endpoint(host.endpoint().base_url or DEFAULT_BASE_URL, self.model_id, method)

    def parse_response(self, data: Any) -> ModelResponse:
        return generate.parse_response(data)

    def batch_wire(self) -> BatchWire:
        from .batch import GeminiBatches

        base = self.host.endpoint().base_url or DEFAULT_BASE_URL
        return GeminiBatches(base, self.model_id, GeminiCalls(self.key))

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_errors(prompt_name, secrets, self.model_id)


class GeminiHost(Host):
    """Google's Gemini API (generativelanguage.googleapis.com), keyed by `x-goog-api-key`."""

    name = "google"
    wire = Gemini
    system = "google"
    telemetry_name = "gcp.gemini"
    api_key_variables = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    base_url = DEFAULT_BASE_URL
    demo_model = "gemini-2.5-flash"

    def endpoint(self) -> Endpoint:
        return Endpoint(self.connection.base_url or DEFAULT_BASE_URL, self.api_key())

    def model_url(self, method: str = "generateContent") -> str:
        """`{base}/v1beta/models/{model}:{method}`."""
        return endpoint(self.endpoint().base_url or DEFAULT_BASE_URL, self.model_id(), method)
