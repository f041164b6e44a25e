"""The two Azure hosts, `azure:` (Chat Completions) and `azure-responses:` (Responses):
where their requests go and how they are signed (the package's docstring says how).
"""

from __future__ import annotations

import os

from ...core.foundation.errors import ConfigurationError
from ..host import BearerToken, Endpoint, Signer
from ..openai import ChatHost, OpenAIChat, OpenAIResponses
from .options import AzureOptions

__all__ = ["Azure", "AzureResponses"]


class Azure(ChatHost):
    """Azure OpenAI, Chat Completions: `create_adapter("azure:<deployment>")`."""

    name = "azure"
    wire = OpenAIChat
    system = "azure"
    telemetry_name = "azure.ai.openai"
    api_key_variables = ("AZURE_OPENAI_API_KEY",)
    offers_batches = False
    no_batches_reason = "Azure batches need a Global Batch deployment and their own files"
    options = AzureOptions

    def check_options(self) -> None:
        given = self.given
        for option in ("endpoint", "api_version", "base_model"):
            value = given.get(option)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigurationError(
                    f"{option} must be a non-empty string, got {value!r}",
                    provider=self.name,
                    option=option,
                )
        provider = given.get("token_provider")
        if provider is not None and not callable(provider):
            raise ConfigurationError(
                f"token_provider must be a callable returning a token, got {provider!r}",
                provider=self.name,
                option="token_provider",
            )
        self._signer = BearerToken(provider) if provider is not None else None
        self._resource()  # no resource anywhere: said now, not at the first request

    def _resource(self) -> str:
        resource = (
            self.given.get("endpoint")
            or self.connection.base_url
            or os.environ.get("AZURE_OPENAI_ENDPOINT", "").strip()
        )
        if not resource:
            raise ConfigurationError(
                f"{self.name} needs the resource's URL: pass endpoint= "
                "('https://<resource>.openai.azure.com') or set AZURE_OPENAI_ENDPOINT",
                provider=self.name,
                option="endpoint",
            )
        return str(resource).rstrip("/")

    def rules_model(self) -> str:
        return self.given.get("base_model") or self.model

    def base(self, resource: str, version: str) -> str:
        """The legacy base URL for this wire (Chat Completions: the deployment's)."""
        return f"{resource}/openai/deployments/{self.model}"

    def endpoint(self) -> Endpoint:
        resource, version = self._resource(), self.given.get("api_version")
        base = self.base(resource, version) if version else f"{resource}/openai/v1"
        query = {"api-version": version} if version else {}
        headers: dict[str, str] = {}
        if self._signer is None:
            key = self.api_key()
            if key:
                headers["api-key"] = key
        return Endpoint(base, None, headers, query, sdk_auth=False)

    def signer(self) -> Signer | None:
        return self._signer

    def key_optional(self) -> bool:
        return self._signer is not None


class AzureResponses(Azure):
    """Azure OpenAI, the Responses API: `create_adapter("azure-responses:<deployment>")`."""

    name = "azure-responses"
    wire = OpenAIResponses

    def base(self, resource: str, version: str) -> str:
        return f"{resource}/openai"  # the legacy Responses URL names no deployment
