"""Vertex AI as the emulator serves it: Gemini and Claude under a project's location
(`/v1beta1/projects/<project>/locations/<location>/publishers/google/models/<model>:
generateContent`, `.../publishers/anthropic/models/<model>:rawPredict`), and express
mode's `/v1beta1/publishers/google/models/...`. A request without a bearer token (or, in
express mode, a key) gets Google's 401; a Claude body without Vertex's
`anthropic_version` gets a 400."""

from __future__ import annotations

import re

from .faults import Fault
from .formats import as_object
from .hosts import EmulatedHost, HostRoute, parse_json
from .server import RawRequest

__all__ = ["VertexAI"]

_PROJECT = r"/(?:v1|v1beta1)/projects/[^/]+/locations/[^/]+/publishers/"
_GEMINI = re.compile(rf"^{_PROJECT}google/models/([^/:]+):([A-Za-z]+)$")
_CLAUDE = re.compile(rf"^{_PROJECT}anthropic/models/([^/:]+):([A-Za-z]+)$")
_EXPRESS = re.compile(r"^/(?:v1|v1beta1)/publishers/google/models/([^/:]+):([A-Za-z]+)$")
_GEMINI_METHODS = {"generateContent": False, "streamGenerateContent": True}
_CLAUDE_METHODS = frozenset({"rawPredict", "streamRawPredict"})
ANTHROPIC_VERSION = "vertex-2023-10-16"

_UNAUTHENTICATED = {
    "error": {
        "code": 401,
        "message": "Request is missing required authentication credential. Expected OAuth 2 "
        "access token, login cookie or other valid authentication credential. See "
        "https://developers.google.com/identity/sign-in/web/devconsole-project.",
        "status": "UNAUTHENTICATED",
    }
}


class VertexAI(EmulatedHost):
    """Vertex AI's paths for its two publishers, and its auth."""

    def route(self, raw: RawRequest) -> HostRoute | None:
        match = _GEMINI.match(raw.path) or _EXPRESS.match(raw.path)
        if match is not None:
            model, method = match.groups()
            if method not in _GEMINI_METHODS:
                return HostRoute("google", model, not_found=True)
            return self._signed(raw, HostRoute("google", model, stream=_GEMINI_METHODS[method]))
        match = _CLAUDE.match(raw.path)
        if match is None:
            return None
        model, method = match.groups()
        if method not in _CLAUDE_METHODS:
            return HostRoute("anthropic", model, not_found=True)
        route = self._signed(raw, HostRoute("anthropic", model))
        if route.rejection is not None:
            return route
        version = as_object(parse_json(raw.body)).get("anthropic_version")
        if version != ANTHROPIC_VERSION:
            problem = (
                "Field required" if version is None else f"Input should be {ANTHROPIC_VERSION!r}"
            )
            return HostRoute("anthropic", model, Fault.bad_request(f"anthropic_version: {problem}"))
        return route

    def _signed(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        """The route, or Google's 401: a project's path needs a bearer token, express
        mode's a key (`x-goog-api-key` or `?key=`)."""
        headers = raw.headers
        if raw.path.split("/")[2] == "publishers":
            signed = bool(headers.get("x-goog-api-key")) or "key=" in raw.query
        else:
            signed = headers.get("authorization", "").startswith("Bearer ") and bool(
                headers["authorization"][len("Bearer ") :].strip()
            )
        if signed:
            return route
        return HostRoute(route.wire, route.model, Fault.http(401, _UNAUTHENTICATED))
