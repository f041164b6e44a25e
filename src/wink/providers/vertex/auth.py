"""Google OAuth2 access tokens from google-auth credentials, for Vertex AI's bearer header.

The credentials are found when the adapter is made (so a machine without any is told then,
by a `ConfigurationError`), and asked for a token on the first request; the host's
`BearerToken` keeps it until five minutes before it expires and asks again on a worker
thread (a refresh is an HTTP call to Google's token endpoint: never on the event loop).
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from typing import Any, cast

# --- guarded SDK import

try:
    import google.auth
    import google.auth.credentials
    import google.auth.exceptions
    import google.auth.transport.requests
    import google.oauth2.service_account
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the Vertex AI adapters need google-auth: pip install 'wink[vertex]'"
    ) from _missing

from ...core.foundation.errors import AuthenticationError, ConfigurationError
from ...core.transport.errors import connection_error
from ..host import REFRESH_MARGIN

__all__ = ["SCOPE", "AccessToken", "GoogleCredentials", "find_credentials", "token_errors"]

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_AUTH: Any = google.auth  # google-auth's functions are not fully typed
_SCOPING: Any = google.auth.credentials
_SERVICE_ACCOUNT: Any = google.oauth2.service_account


@dataclass(frozen=True, slots=True)
class AccessToken:
    """What a token provider returns to `BearerToken`: the token and its expiry (epoch
    seconds; 0: unknown)."""

    token: str
    expires_on: float

    def __repr__(self) -> str:
        return "AccessToken(<token>)"  # never the token


class GoogleCredentials:
    """A token provider over google-auth credentials: each call refreshes them (blocking,
    an HTTP call to the token endpoint) and returns the new token with its expiry."""

    __slots__ = ("credentials",)

    def __init__(self, credentials: Any) -> None:
        self.credentials = credentials

    def __repr__(self) -> str:
        return f"GoogleCredentials({type(self.credentials).__name__})"

    def __call__(self) -> AccessToken:
        credentials = self.credentials
        token, expires = _current(credentials)
        if token is None or (expires and expires - time.time() < REFRESH_MARGIN):
            credentials.refresh(google.auth.transport.requests.Request())  # may raise: below
            token, expires = _current(credentials)
        if token is None:
            raise google.auth.exceptions.RefreshError("the credentials gave no access token")
        return AccessToken(token, expires)


def _current(credentials: Any) -> tuple[str | None, float]:
    """The credentials' token until it expires (None: none, or expired), and its expiry
    (epoch seconds; 0: none said, as for a bare access token)."""
    token = credentials.token
    if not isinstance(token, str) or not token.strip():
        return None, 0.0
    expiry = credentials.expiry  # naive UTC, per google-auth
    expires = expiry.replace(tzinfo=UTC).timestamp() if expiry is not None else 0.0
    if expires and expires <= time.time():
        return None, 0.0
    return token, expires


@contextmanager
def token_errors(prompt_name: str) -> Generator[None]:
    """A token Google would not give (`RefreshError`: a revoked key, a deleted service
    account) is an `AuthenticationError`; its endpoint out of reach, a connection error
    (retried, as any connection failure)."""
    try:
        yield
    except google.auth.exceptions.RefreshError as error:
        raise AuthenticationError(
            f"Google refused an access token for Vertex AI: {error}",
            prompt_name=prompt_name,
            phase="request",
        ) from error
    except google.auth.exceptions.TransportError as error:
        raise connection_error(prompt_name, error) from error


def find_credentials(given: object, host: str) -> tuple[Any, str | None]:
    """(credentials with the cloud-platform scope, the project they name, if any): from a
    `Credentials` object, a key file's path, else google-auth's application default ones
    (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's, the metadata server). None anywhere:
    `ConfigurationError` saying where to put some."""
    try:
        if isinstance(given, google.auth.credentials.Credentials):
            scoped = _SCOPING.with_scopes_if_required(given, [SCOPE])
            return scoped, cast(str | None, getattr(given, "project_id", None))
        if isinstance(given, str | os.PathLike):
            path = os.fspath(cast("str | os.PathLike[str]", given))
            made = _SERVICE_ACCOUNT.Credentials.from_service_account_file(path, scopes=[SCOPE])
            found = (made, made.project_id)
        elif given is None:
            found = _AUTH.default(scopes=[SCOPE])
        else:
            raise ConfigurationError(
                "credentials= must be a service-account key file's path or a google-auth "
                f"Credentials object, got {type(given).__name__}",
                provider=host,
                option="credentials",
            )
    except (google.auth.exceptions.DefaultCredentialsError, OSError, ValueError) as error:
        where = "the file given as credentials=" if given is not None else "anywhere"
        raise ConfigurationError(
            f"no Google credentials for {host} ({where}): {error} Run `gcloud auth "
            "application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a "
            "service-account key file, or pass credentials=",
            provider=host,
            option="credentials",
        ) from error
    credentials, project = cast(tuple[Any, Any], found)
    return credentials, project if isinstance(project, str) and project else None
