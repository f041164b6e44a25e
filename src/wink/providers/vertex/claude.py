"""`vertex-anthropic:<claude model>`: Anthropic's Messages API on Vertex AI, by wink's
Anthropic translator (the package's docstring says where and how).

Vertex serves it as `:rawPredict` (`:streamRawPredict` when streamed) of the model's URL,
the model named there and not in the body, which carries `anthropic_version`. wink posts
the encoded body through the anthropic SDK's own client (one async client on wink's loop),
so the path and body are set here; the SDK's Vertex client rewrites only what its own
`messages.create()` builds, and refreshes tokens its own way.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...core.foundation.builtin import WebSearch, refuse_builtin
from ...core.foundation.errors import ConfigurationError
from ...core.foundation.messages import ModelRequest
from ...core.transport.http import WireRequest
from ..anthropic import AnthropicMessages
from ..host import Endpoint, Host, Signer
from .options import VertexOptions
from .place import NO_BATCHES, VertexPlace, located

if TYPE_CHECKING:
    from ...core.transport.decoding import Framing, Parse, StreamDecoder

__all__ = ["VERTEX_ANTHROPIC_VERSION", "VertexAnthropic", "VertexClaude"]

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
_PREDICT, _STREAM_PREDICT = ":rawPredict", ":streamRawPredict"


class _StreamRawPredict:
    """Anthropic's stream format at `:streamRawPredict`."""

    def stream_body(self, path: str, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
        streamed = AnthropicMessages.stream_format
        assert streamed is not None
        path, body = streamed.stream_body(path, body)
        if not path.endswith(_PREDICT):
            raise ValueError(f"not a rawPredict path: {path}")
        return path[: -len(_PREDICT)] + _STREAM_PREDICT, body

    def decoder(self, prompt_name: str, secrets: tuple[str, ...], parse: Parse) -> StreamDecoder:
        streamed = AnthropicMessages.stream_format
        assert streamed is not None
        return streamed.decoder(prompt_name, secrets, parse)

    def framing(self) -> Framing:
        streamed = AnthropicMessages.stream_format
        assert streamed is not None
        return streamed.framing()


class VertexClaude(AnthropicMessages):
    """Anthropic's wire on Vertex: streamed at `:streamRawPredict`, a 404 names the
    location asked. Vertex has no Anthropic batches (the host refuses them)."""

    stream_format = _StreamRawPredict()

    def translate(self, request: ModelRequest) -> WireRequest:
        # Vertex offers Claude's web search (Google's "Web search with Anthropic Claude
        # models" page), not its code execution or web fetch tools
        for tool in request.builtin_tools:
            if not isinstance(tool, WebSearch):
                raise refuse_builtin("Claude on Vertex AI", tool)
        return super().translate(request)

    def token_count_form(self, path: str, body: Mapping[str, Any]) -> WireRequest:
        # Vertex counts at `count-tokens:rawPredict`, the model named in the body as in
        # the URL of a generation request (`claude-sonnet-4-5@20250929`)
        counted = super().token_count_form(path, body)
        return WireRequest(counted.path, {"model": self.host.model_id(), **counted.body})

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        host = self.host
        errors = super().map_errors(prompt_name, secrets)
        if isinstance(host, VertexAnthropic):
            return located(errors, self.model_id, host.place, prompt_name)
        return errors


class VertexAnthropic(Host):
    """Vertex AI, Claude: `create_adapter("vertex-anthropic:claude-sonnet-4-5@20250929",
    project=..., location=...)`."""

    name = "vertex-anthropic"
    wire = VertexClaude
    system = "anthropic"
    telemetry_name = "gcp.vertex_ai"
    offers_batches = False
    no_batches_reason = NO_BATCHES
    options = VertexOptions

    def check_options(self) -> None:
        if self.connection.api_key:
            raise ConfigurationError(
                "vertex-anthropic takes no api_key: Claude on Vertex AI is signed with "
                "Google credentials (credentials=, GOOGLE_APPLICATION_CREDENTIALS or the "
                "application default ones)",
                provider=self.name,
                option="api_key",
            )
        self.place = VertexPlace.of(self.name, self.given, self.connection)

    def rules_model(self) -> str:
        """Vertex's `claude-sonnet-4-5@20250929` is Anthropic's `claude-sonnet-4-5-20250929`."""
        return self.model.replace("@", "-")

    def origin(self) -> str | None:
        """Anthropic's adapter for the same model: Anthropic documents its thinking
        signatures as valid across the platforms that serve Claude."""
        return f"anthropic:{self.rules_model()}"

    def endpoint(self) -> Endpoint:
        return Endpoint(self.place.root, None, sdk_auth=False)

    def signer(self) -> Signer | None:
        return self.place.signer

    def check_credentials(self) -> None:
        return  # found (or refused) when the place was made

    def path(self, path: str) -> str:
        if path.endswith("/count_tokens"):  # Anthropic's count path, as Vertex serves it
            return self.place.model_path("v1", "anthropic", "count-tokens", _PREDICT[1:])
        return self.place.model_path("v1", "anthropic", self.model_id(), _PREDICT[1:])

    def adjust_body(self, body: dict[str, Any]) -> dict[str, Any]:
        body.pop("model", None)  # named by the URL
        body["anthropic_version"] = VERTEX_ANTHROPIC_VERSION
        return body
