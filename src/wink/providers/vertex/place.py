"""Where a Vertex AI request goes (the project, the location, its host name) and how it is
signed; and the 404 of a model the location does not serve, said with the location."""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from ...core.foundation.errors import ConfigurationError, NotFoundError
from ..base import Connection
from ..host import BearerToken

__all__ = ["MULTI_REGIONS", "NO_BATCHES", "VertexPlace", "located"]

NO_BATCHES = (
    "Vertex AI runs batches as batch prediction jobs, a separate API reading from Cloud "
    "Storage or BigQuery"
)
_LOCATION = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]")  # a host-name label
MULTI_REGIONS = frozenset({"us", "eu"})  # served at aiplatform.<region>.rep.googleapis.com


def service_root(location: str) -> str:
    """The service's URL for a location: `global` has no region in its host name."""
    if location == "global":
        return "https://aiplatform.googleapis.com"
    if location in MULTI_REGIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


@dataclass(frozen=True, slots=True)
class VertexPlace:
    """One project at one location (`project` None: express mode, an API key and no
    project), its service's `root` URL (the caller's `base_url` if given) and the
    `signer` of its requests (None: express mode's key header)."""

    project: str | None
    location: str
    root: str
    signer: BearerToken | None

    @classmethod
    def of(cls, host: str, given: Mapping[str, Any], connection: Connection) -> VertexPlace:
        """From a host's options (`VertexOptions`), its environment and credentials;
        anything missing or malformed is a `ConfigurationError` now."""
        for option in ("project", "location"):
            value = given.get(option)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigurationError(
                    f"{option} must be a non-empty string, got {value!r}",
                    provider=host,
                    option=option,
                )
        location = (
            given.get("location") or os.environ.get("GOOGLE_CLOUD_LOCATION", "").strip()
        ) or "global"
        location = location.strip()
        if not _LOCATION.fullmatch(location):
            raise ConfigurationError(
                f"location must be a Vertex AI location such as 'global', 'us-central1' or "
                f"'eu', got {location!r}",
                provider=host,
                option="location",
            )
        root = (connection.base_url or service_root(location)).rstrip("/")
        project = given.get("project") or os.environ.get("GOOGLE_CLOUD_PROJECT", "").strip()
        if connection.api_key:  # express mode: a key in place of a project's credentials
            if given.get("project") or given.get("credentials") is not None:
                raise ConfigurationError(
                    f"{host}: api_key= is Vertex AI's express mode, which names no project; "
                    "pass either api_key= or project= (and credentials), not both",
                    provider=host,
                    option="api_key",
                )
            if location != "global":
                raise ConfigurationError(
                    f"{host}: express mode (api_key=) is served at the global location "
                    f"only, not {location!r}",
                    provider=host,
                    option="location",
                )
            return cls(None, location, root, None)
        from .auth import GoogleCredentials, find_credentials

        credentials, own_project = find_credentials(given.get("credentials"), host)
        project = project.strip() if project else own_project
        if not project:
            raise ConfigurationError(
                f"{host} needs a Google Cloud project: pass project= or set "
                "GOOGLE_CLOUD_PROJECT (the credentials name none)",
                provider=host,
                option="project",
            )
        return cls(project, location, root, BearerToken(GoogleCredentials(credentials)))

    def model_path(self, version: str, publisher: str, model: str, method: str) -> str:
        """`/{version}/projects/{project}/locations/{location}/publishers/{publisher}/
        models/{model}:{method}` (express mode: from `publishers/`)."""
        where = f"projects/{self.project}/locations/{self.location}/" if self.project else ""
        return f"/{version}/{where}publishers/{publisher}/models/{model}:{method}"


@contextmanager
def located(
    errors: AbstractContextManager[None], model: str, place: VertexPlace, prompt_name: str
) -> Generator[None]:
    """The wire's error map, with a 404 saying which location was asked (on Vertex a model
    is served at some locations only: "not servable in region", "not found"), and the
    token's failures (`token_errors`)."""
    from .auth import token_errors

    try:
        with errors, token_errors(prompt_name):
            yield
    except NotFoundError as error:
        raise NotFoundError(
            f"{error.message} [Vertex AI: model {model!r} at "
            f"location {place.location!r}; a model is served at some locations only, "
            "and many at 'global' first]",
            prompt_name=error.prompt_name,
            phase=error.phase,
            provider_payload=error.provider_payload,
            status_code=error.status_code,
            model=model,
        ) from error.__cause__
