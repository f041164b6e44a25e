"""The hosts' URL shapes and auth, as the emulator serves them: each `EmulatedHost` says
which of its paths carry which wire format, and refuses a request its auth does not
cover with the host's own answer. A request on a wire's own path (`/v1/chat/completions`)
is the wire's own service (`routes.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .faults import Fault
from .records import Provider
from .server import RawRequest

__all__ = ["HOSTS", "EmulatedHost", "HostRoute"]


@dataclass(frozen=True, slots=True)
class HostRoute:
    """Where a request on a host's path goes: its wire, the model its path names (None:
    the body's), and the host's refusal, if any."""

    wire: Provider
    model: str | None = None
    rejection: Fault | None = None
    not_found: bool = False


class EmulatedHost:
    """One host's paths (`(pattern, wire)`, a pattern's first group the model if any) and
    its auth check."""

    paths: tuple[tuple[re.Pattern[str], Provider], ...] = ()

    def route(self, raw: RawRequest) -> HostRoute | None:
        for pattern, wire in self.paths:
            match = pattern.match(raw.path)
            if match is not None:
                model = match.group(1) if match.groups() else None
                return self.check(raw, HostRoute(wire, model))
        return None

    def check(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        """The route, or the host's refusal of this request (auth, a missing parameter)."""
        return route


_AZURE_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
    "provide a valid key for an active subscription and use a correct regional API "
    "endpoint for your resource."
)


class AzureOpenAI(EmulatedHost):
    """Azure OpenAI: the v1 paths (`/openai/v1/...`), the legacy ones (`/openai/deployments/
    <deployment>/chat/completions`, `/openai/responses`), which need `api-version`; an
    `api-key` header or an `Authorization: Bearer` token."""

    paths = (
        (re.compile(r"^/openai/v1/chat/completions$"), "openai"),
        (re.compile(r"^/openai/v1/responses$"), "openai-responses"),
        (re.compile(r"^/openai/deployments/([^/]+)/chat/completions$"), "openai"),
        (re.compile(r"^/openai/responses$"), "openai-responses"),
    )

    def check(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        legacy = not raw.path.startswith("/openai/v1/")
        if legacy and not any(item.startswith("api-version=") for item in raw.query.split("&")):
            return HostRoute(route.wire, route.model, not_found=True)
        bearer = raw.headers.get("authorization", "").startswith("Bearer ")
        if not raw.headers.get("api-key") and not bearer:
            body = {"error": {"code": "401", "message": _AZURE_DENIED}}
            return HostRoute(route.wire, route.model, Fault.http(401, body))
        return route


HOSTS: tuple[EmulatedHost, ...] = (AzureOpenAI(),)
