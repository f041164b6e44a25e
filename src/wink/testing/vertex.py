"""Vertex AI as the emulator serves it: Gemini and Claude under a project's location
(`/v1beta1/projects/<project>/locations/<location>/publishers/google/models/<model>:
generateContent`, `.../publishers/anthropic/models/<model>:rawPredict`), and express
mode's `/v1beta1/publishers/google/models/...`. A request without a bearer token (or, in
express mode, a key) gets Google's 401; a Claude body without Vertex's
`anthropic_version` gets a 400. Token counts: Gemini's `:countTokens` on the same model
path, which takes the generation request's fields unwrapped (`contents`,
`systemInstruction`, `tools`, `generationConfig`), and Claude's
`.../publishers/anthropic/models/count-tokens:rawPredict`, whose body names the model."""

from __future__ import annotations

import re
from typing import Any, cast

from .faults import Fault
from .formats import as_object
from .hosts import EmulatedHost, HostRoute, parse_json
from .server import RawRequest
from .wire import WIRES, WireFormat

__all__ = ["VertexAI", "vertex_token_count_route"]

# What Vertex's `CountTokensRequest` takes besides `endpoint` (in the path)
_COUNTED = frozenset(
    {"model", "instances", "contents", "systemInstruction", "tools", "generationConfig"}
)

_PROJECT = r"/(?:v1|v1beta1)/projects/[^/]+/locations/[^/]+/publishers/"
_GEMINI = re.compile(rf"^{_PROJECT}google/models/([^/:]+):([A-Za-z]+)$")
_CLAUDE = re.compile(rf"^{_PROJECT}anthropic/models/([^/:]+):([A-Za-z]+)$")
_EXPRESS = re.compile(r"^/(?:v1|v1beta1)/publishers/google/models/([^/:]+):([A-Za-z]+)$")
_GEMINI_METHODS = {"generateContent": False, "streamGenerateContent": True}
_CLAUDE_METHODS = frozenset({"rawPredict", "streamRawPredict"})
_CLAUDE_COUNT = "count-tokens"
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
            if method not in _GEMINI_METHODS:  # countTokens unsigned, or no such method
                return self._signed(raw, HostRoute("google", model, not_found=True))
            return self._signed(raw, HostRoute("google", model, stream=_GEMINI_METHODS[method]))
        match = _CLAUDE.match(raw.path)
        if match is None:
            return None
        model, method = match.groups()
        if method not in _CLAUDE_METHODS or model == _CLAUDE_COUNT:  # a count, unsigned
            return self._signed(raw, HostRoute("anthropic", model, not_found=True))
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
        """The route, or Google's 401 (`check_signed`)."""
        if self.check_signed(raw):
            return route
        return HostRoute(route.wire, route.model, Fault.http(401, _UNAUTHENTICATED))

    def check_signed(self, raw: RawRequest) -> bool:
        """A project's path needs a bearer token, express mode's a key (`x-goog-api-key`
        or `?key=`)."""
        headers = raw.headers
        if raw.path.split("/")[2] == "publishers":
            return bool(headers.get("x-goog-api-key")) or "key=" in raw.query
        return headers.get("authorization", "").startswith("Bearer ") and bool(
            headers["authorization"][len("Bearer ") :].strip()
        )


def vertex_token_count_route(raw: RawRequest) -> tuple[WireFormat, str] | None:
    """The count a signed request on a Vertex count path asks for: the wire that counts it
    and the model its path names ("" for Claude's, whose body names it)."""
    gemini = _GEMINI.match(raw.path) or _EXPRESS.match(raw.path)
    if gemini is not None and gemini.group(2) == "countTokens" and _signed(raw):
        # Gemini's wire in all but the count's body (`__getattr__` passes the rest on)
        return cast(WireFormat, _VertexGeminiCounts(WIRES["google"])), gemini.group(1)
    claude = _CLAUDE.match(raw.path)
    if claude is not None and claude.groups() == (_CLAUDE_COUNT, "rawPredict") and _signed(raw):
        return WIRES["anthropic"], ""
    return None


def _signed(raw: RawRequest) -> bool:
    return VertexAI().check_signed(raw)


class _VertexGeminiCounts:
    """Gemini's wire with Vertex's `countTokens` body: the generation fields themselves,
    not wrapped in `generateContentRequest`."""

    def __init__(self, wire: WireFormat) -> None:
        self._wire = wire

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wire, name)

    def token_count_problem(self, body: dict[str, Any]) -> Fault | None:
        for key in body:
            if key not in _COUNTED:
                return Fault.bad_request(
                    f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
                )
        return None

    def counted_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in body.items() if key not in ("model", "instances")}

    def token_count_body(self, count: int) -> dict[str, Any]:
        return {
            "totalTokens": count,
            "totalBillableCharacters": count * 4,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": count}],
        }
