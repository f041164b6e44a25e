"""Vertex AI's own options (no SDK imported: `create_adapter`'s signature names them)."""

from __future__ import annotations

import os
from typing import Any, TypedDict

__all__ = ["VertexOptions"]


class VertexOptions(TypedDict, total=False):
    """Vertex AI's own options: `project` (the Google Cloud project; else
    `GOOGLE_CLOUD_PROJECT`, else the credentials' own), `location` (`global` by default;
    else `GOOGLE_CLOUD_LOCATION`), `credentials` (a service-account key file's path, or a
    google-auth `Credentials` object; else `GOOGLE_APPLICATION_CREDENTIALS` or the
    application default credentials)."""

    project: str | None
    location: str | None
    credentials: str | os.PathLike[str] | Any | None
