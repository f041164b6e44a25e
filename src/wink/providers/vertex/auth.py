"""Google OAuth2 access tokens from google-auth credentials, for Vertex AI's bearer header.

The credentials are found when the adapter is made (so a machine without any is told then,
by a `ConfigurationError`), and asked for a token on the first request; the host's
`BearerToken` keeps it until five minutes before it expires and asks again on a worker
thread (a refresh is an HTTP call to Google's token endpoint: never on the event loop).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC
from typing import Any, cast

# --- guarded SDK import

try:
    import google.auth
    import google.auth.credentials
    import google.auth.exceptions
    import google.auth.transport.requests
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the Vertex AI adapters need google-auth: pip install 'wink[vertex]'"
    ) from _missing

from ...core.foundation.errors import ConfigurationError

__all__ = ["SCOPE", "AccessToken", "GoogleCredentials", "find_credentials"]

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_AUTH: Any = google.auth  # google-auth's functions are not fully typed
_SCOPING: Any = google.auth.credentials


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
        try:
            credentials.refresh(google.auth.transport.requests.Request())
        except google.auth.exceptions.GoogleAuthError as error:
            raise ConfigurationError(
                f"Google refused to give Vertex AI an access token: {error}",
                provider="vertex",
                option="credentials",
            ) from error
        token = credentials.token
        if not isinstance(token, str) or not token:
            raise ConfigurationError(
                "the Google credentials gave no access token", option="credentials"
            )
        expiry = credentials.expiry  # naive UTC, per google-auth
        expires = expiry.replace(tzinfo=UTC).timestamp() if expiry is not None else 0.0
        return AccessToken(token, expires)


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
            found = _AUTH.load_credentials_from_file(path, scopes=[SCOPE])
        elif given is None:
            found = _AUTH.default(scopes=[SCOPE])
        else:
            raise ConfigurationError(
                "credentials= must be a service-account key file's path or a google-auth "
                f"Credentials object, got {type(given).__name__}",
                provider=host,
                option="credentials",
            )
    except google.auth.exceptions.DefaultCredentialsError as error:
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
