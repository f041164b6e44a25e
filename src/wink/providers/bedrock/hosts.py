"""`bedrock:`, the Bedrock Runtime host of the Converse wire: the region's endpoint, and
each request's auth (SigV4 over botocore's credential chain, or a Bedrock API key)."""

from __future__ import annotations

import os
from typing import Any

from ...core.foundation.errors import ConfigurationError
from ..host import Endpoint, Host, Signer
from .auth import BearerKey, SigV4Signer
from .http import default_base_url
from .options import BedrockOptions
from .wire import Converse

__all__ = ["Bedrock"]

_REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")
# credentials the SigV4 chain may read from the environment: masked like keys
_AWS_SECRET_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class Bedrock(Host):
    """AWS Bedrock Runtime: `create_adapter("bedrock:<model id or inference profile>")`,
    `region=` (else `AWS_REGION`, `AWS_DEFAULT_REGION`, the AWS config's)."""

    name = "bedrock"
    wire = Converse
    system = "aws"
    telemetry_name = "aws.bedrock"
    api_key_variables = ("AWS_BEARER_TOKEN_BEDROCK",)
    key_required = False  # no API key: SigV4 over the AWS credential chain
    offers_batches = False
    no_batches_reason = (
        "Bedrock's batch inference reads its input from S3 and writes its output there "
        "(CreateModelInvocationJob), which wink does not manage"
    )
    options = BedrockOptions

    region: str
    _signer: BearerKey | SigV4Signer

    def __repr__(self) -> str:
        return f"Bedrock(model={self.model!r}, region={self.region!r})"

    def check_options(self) -> None:
        self.region = _region(self.given.get("region"))
        key = self.api_key()
        self._signer = BearerKey(key) if key else SigV4Signer(self.region)

    def endpoint(self) -> Endpoint:
        base = self.connection.base_url or default_base_url(self.region)
        return Endpoint(base, None, sdk_auth=False)

    def signer(self) -> Signer:
        return self._signer

    def check_credentials(self) -> None:
        """No Bedrock API key: the AWS credential chain must find credentials, said when
        the adapter is made rather than at the first request."""
        if isinstance(self._signer, SigV4Signer):
            self._signer.resolve()

    def secrets(self) -> tuple[str, ...]:
        found = [os.environ.get(name, "").strip() for name in _AWS_SECRET_VARIABLES]
        extra = (*(value for value in found if value), *self._signer.secrets())
        return tuple(dict.fromkeys((*super().secrets(), *extra)))


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
