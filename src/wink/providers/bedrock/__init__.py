"""AWS Bedrock's Converse API, spoken by wink itself over httpx2 (no boto3 in threads):
`converse` translates, `stream` decodes ConverseStream's event-stream frames, `errors`
reads Bedrock's error types, `auth` signs (SigV4 over botocore's credential chain, or a
Bedrock API key as a bearer), `http` sends. Wire facts are in docs/bedrock.md."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from typing import Any, ClassVar

# --- guarded transport import

try:
    import httpx2
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Bedrock adapter needs httpx2: pip install 'wink[bedrock]'") from _missing

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.messages import ModelRequest, ModelResponse
from ...core.foundation.settings import ModelSettings
from ...core.transport.http import HttpCalls, WireRequest
from ..base import Connection, LazyStreamFormat, Provider
from . import converse
from .auth import BearerKey, RequestAuth, SigV4Signer
from .http import BedrockCalls, default_base_url, endpoint, map_errors

__all__ = ["Bedrock"]

_KEY_VARIABLE = "AWS_BEARER_TOKEN_BEDROCK"
_REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")


class Bedrock(Provider):
    """`POST /model/{modelId}/converse` (`/converse-stream`) on Bedrock Runtime."""

    name = converse.PROVIDER
    api_key_variables = (_KEY_VARIABLE,)
    secret_variables = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    options: ClassVar[frozenset[str]] = frozenset({"region"})
    unsupported_settings = frozenset({"seed", "prompt_cache_key", "prompt_cache_retention"})
    telemetry_name = "aws.bedrock"
    stream_format = LazyStreamFormat(f"{__name__}.stream", "ConverseStream")
    content_rules = converse.CONTENT_RULES
    no_batch_reason = (
        "Bedrock's batch inference reads its input from S3 and writes its output there "
        "(CreateModelInvocationJob), which wink does not manage"
    )

    def __init__(self, model: str, settings: ModelSettings, connection: Connection) -> None:
        self.region = _region(connection.options.get("region"))
        super().__init__(model, settings, connection)
        key = connection.api_key or os.environ.get(_KEY_VARIABLE, "").strip()
        self.auth: RequestAuth = BearerKey(key) if key else SigV4Signer(self.region)
        self._calls = BedrockCalls(self.auth)
        base = connection.base_url or default_base_url(self.region)
        self._url = endpoint(base, model)

    def __repr__(self) -> str:
        return f"Bedrock(model={self.model!r}, region={self.region!r})"

    def key_optional(self) -> bool:
        return True  # no API key: SigV4 over the AWS credential chain

    def make_client(self, *, sync: bool) -> Any:
        kind = httpx2.Client if sync else httpx2.AsyncClient
        return kind(timeout=self.connection.timeout)

    def is_async_client(self, client: Any) -> bool:
        return isinstance(client, httpx2.AsyncClient)

    @property
    def http_calls(self) -> HttpCalls:
        return self._calls

    def check_settings(self) -> None:
        converse.thinking_fields(self.model, self.settings)

    def build_request(self, request: ModelRequest) -> WireRequest:
        return WireRequest(self._url, converse.build_request(request, self.model, self.settings))

    def parse_response(self, data: Any) -> ModelResponse:
        return converse.parse_response(data)

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return map_errors(prompt_name, (*secrets, *self.auth.secrets()), self.model, self.region)


def _region(given: object) -> str:
    """`region=`, else AWS_REGION, else AWS_DEFAULT_REGION, else the AWS config's."""
    if given is not None:
        if not isinstance(given, str) or not given.strip():
            raise ConfigurationError(
                f"region must be an AWS region name such as 'us-east-1', got {given!r}",
                provider="bedrock",
                option="region",
            )
        return given.strip()
    for variable in _REGION_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            return value
    try:
        import botocore.session
    except ImportError:
        configured = None
    else:
        session: Any = botocore.session.Session()
        configured = session.get_config_variable("region")
    if isinstance(configured, str) and configured:
        return configured
    raise ConfigurationError(
        "bedrock needs an AWS region: pass region='us-east-1' (or another) or set AWS_REGION",
        provider="bedrock",
        option="region",
    )
