"""Azure OpenAI's own options (no SDK imported: `create_adapter`'s signature names them)."""

from __future__ import annotations

from typing import TypedDict

from ..host import TokenProvider

__all__ = ["AzureOptions"]


class AzureOptions(TypedDict, total=False):
    """Azure's own options: `endpoint` (the resource's URL; else `AZURE_OPENAI_ENDPOINT`),
    `api_version` (the legacy URLs; None: the v1 endpoint), `base_model` (the model the
    deployment serves, for wink's model rules; default: the deployment's name),
    `token_provider` (Entra ID: a callable returning a bearer token; else the key)."""

    endpoint: str | None
    api_version: str | None
    base_model: str | None
    token_provider: TokenProvider | None
