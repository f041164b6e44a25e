"""How a Bedrock request is authenticated: a Bedrock API key as a bearer, or SigV4 with
botocore's `SigV4Auth` over botocore's credential chain (environment, shared config and
profiles, SSO, container and instance roles, AssumeRole).

The chain is resolved once, when the adapter is made (as boto3 does for a client);
credentials that expire are refreshed by botocore, and whenever a refresh is due (which
may reach STS or the instance metadata service) the async path does it on a worker
thread, so the event loop never waits on it.
Nothing here puts a key, a secret, a token or a signature in a repr or a message.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from typing import Any

from ...core.foundation.errors import ConfigurationError
from ...core.foundation.runtime import run_in_thread
from ..host import OutgoingRequest

__all__ = ["BearerKey", "SigV4Signer"]

_SERVICE = "bedrock"


class BearerKey:
    """A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK` or `api_key=`), sent as a bearer (a
    `Signer`, `wink.providers.host`)."""

    __slots__ = ("_key",)

    def __init__(self, key: str) -> None:
        self._key = key

    def __repr__(self) -> str:
        return "BearerKey([redacted])"

    def sign(self, request: OutgoingRequest) -> Mapping[str, str]:
        return {"authorization": f"Bearer {self._key}"}

    async def sign_async(self, request: OutgoingRequest) -> Mapping[str, str]:
        return self.sign(request)

    def secrets(self) -> tuple[str, ...]:
        return (self._key,)


class SigV4Signer:
    """SigV4 for `bedrock` in `region`, over a botocore session's credentials (a `Signer`,
    `wink.providers.host`): the signature covers the time and the body, so it is made as
    each request leaves."""

    __slots__ = ("_credentials", "_last", "_lock", "_region", "_seen", "_session")

    def __init__(self, region: str, session: Any = None) -> None:
        self._region = region
        self._session = session  # a botocore Session (None: a new default one)
        self._credentials: Any = None
        self._lock = threading.Lock()
        self._seen: tuple[str, ...] = ()
        self._last: Any = None  # the credentials last signed with

    def __repr__(self) -> str:
        return f"SigV4Signer(region={self._region!r})"

    def sign(self, request: OutgoingRequest) -> Mapping[str, str]:
        return self._sign(request, self._frozen())

    async def sign_async(self, request: OutgoingRequest) -> Mapping[str, str]:
        credentials = self._credentials
        if credentials is None or _refresh_due(credentials):
            frozen = await run_in_thread(self._frozen)
        else:
            frozen = self._remember(credentials.get_frozen_credentials())  # no I/O
        return self._sign(request, frozen)

    def secrets(self) -> tuple[str, ...]:
        return self._seen

    def resolve(self) -> None:
        """Find the credentials now (blocking: the chain may read files or ask a metadata
        service); none anywhere is a `ConfigurationError` saying what to set."""
        self._chain()

    def _chain(self) -> Any:
        with self._lock:
            if self._credentials is None:
                import botocore.session

                session: Any = self._session or botocore.session.Session()
                credentials: Any = session.get_credentials()
                if credentials is None:
                    raise ConfigurationError(
                        "no AWS credentials for bedrock: set AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, run `aws sso login`, or use a "
                        "Bedrock API key (AWS_BEARER_TOKEN_BEDROCK or api_key=)",
                        provider="bedrock",
                        option="api_key",
                    )
                self._credentials = credentials
            found: Any = self._credentials
            return found

    def _frozen(self) -> Any:
        return self._remember(self._chain().get_frozen_credentials())

    def _remember(self, frozen: Any) -> Any:
        """Keep each set of credentials signed with for `secrets()`: a refresh brings new
        ones (compared as values, a few string comparisons, on every request)."""
        if frozen != self._last:
            found = (frozen.access_key, frozen.secret_key, frozen.token)
            with self._lock:
                self._seen = tuple(dict.fromkeys((*self._seen, *(v for v in found if v))))
                self._last = frozen
        return frozen

    def _sign(self, outgoing: OutgoingRequest, frozen: Any) -> Mapping[str, str]:
        _mask_signing_logs()
        sigv4_auth, aws_request = _botocore()
        request = aws_request(
            method=outgoing.method,
            url=outgoing.url,
            data=outgoing.body,
            headers=dict(outgoing.headers),
        )
        signer: Any = sigv4_auth(frozen, _SERVICE, self._region)
        signer.add_auth(request)
        return dict(request.headers.items())


@functools.cache
def _botocore() -> tuple[Any, Any]:
    """botocore's `SigV4Auth` and `AWSRequest` (botocore is an extra: imported on first use)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    return SigV4Auth, AWSRequest


def _refresh_due(credentials: Any) -> bool:
    """Whether botocore would refresh these credentials on the next read (only
    `RefreshableCredentials` ever do)."""
    refresh_needed = getattr(credentials, "refresh_needed", None)
    return bool(refresh_needed()) if callable(refresh_needed) else False


class _SigningLines(logging.Filter):
    """botocore logs each canonical request (the session token in it), string to sign
    and signature at DEBUG: the lines stay, their contents are masked."""

    _LINES = ("CanonicalRequest:", "StringToSign:", "Signature:")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(self._LINES):
            record.args = ("[redacted]",)
        return True


_MASK = _SigningLines()
_SIGNING_LOGGER = logging.getLogger("botocore.auth")


def _mask_signing_logs() -> None:
    """Checked as each request is signed (a list lookup), not once: the application may
    change the logger's filters after the adapter is made."""
    if _MASK not in _SIGNING_LOGGER.filters:
        _SIGNING_LOGGER.addFilter(_MASK)
