"""`vertex:<gemini model>`: Gemini's `generateContent` on Vertex AI, by wink's own Gemini
translator (the package's docstring says where and how)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from ...core.transport.http import WireRequest
from ..base import token_count_body
from ..google import Gemini, GeminiHost
from ..host import Endpoint, Signer
from .options import VertexOptions
from .place import NO_BATCHES, VertexPlace, located

__all__ = ["Vertex", "VertexGemini"]

_API_VERSION = "v1beta1"  # what google-genai speaks on Vertex: every field wink sends
# What Vertex's `countTokens` takes of a generation body, unwrapped (its
# `CountTokensRequest`): no `toolConfig`, `safetySettings` or `cachedContent`
_COUNTED = frozenset({"contents", "systemInstruction", "tools", "generationConfig"})


class VertexGemini(Gemini):
    """Gemini's wire on Vertex: a 404 names the location asked; Google Search takes
    `excludeDomains` (`WebSearch(blocked_domains=)`); a token count is `:countTokens` on the
    model's path, the generation fields it takes unwrapped."""

    wire_name = "Gemini on Vertex AI"
    search_excludes_domains = True

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        return WireRequest(self.model_url("countTokens"), token_count_body(body, _COUNTED))

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        host = self.host
        errors = super().map_errors(prompt_name, secrets)
        return (
            located(errors, self.model_id, host.place, prompt_name)
            if isinstance(host, Vertex)
            else errors
        )


class Vertex(GeminiHost):
    """Vertex AI, Gemini: `create_adapter("vertex:gemini-2.5-flash", project=...)`."""

    name = "vertex"
    wire = VertexGemini
    system = "google"
    telemetry_name = "gcp.vertex_ai"
    api_key_variables = ()
    base_url = None
    offers_batches = False
    no_batches_reason = NO_BATCHES
    options = VertexOptions

    def check_options(self) -> None:
        self.place = VertexPlace.of(self.name, self.given, self.connection)

    def api_key(self) -> str | None:
        return self.connection.api_key  # express mode's key: given, never read elsewhere

    def endpoint(self) -> Endpoint:
        place = self.place
        if place.signer is None:  # express mode: the key header
            return Endpoint(place.root, self.connection.api_key)
        return Endpoint(place.root, None, sdk_auth=False)

    def signer(self) -> Signer | None:
        return self.place.signer

    def check_credentials(self) -> None:
        return  # found (or refused) when the place was made

    def model_url(self, method: str = "generateContent") -> str:
        place = self.place
        return place.root + place.model_path(_API_VERSION, "google", self.model_id(), method)
