"""Where a request goes: the route table, and what the emulator reads off a request
before it answers (its wire, model, whether it streams, and any 4xx it deserves)."""

from __future__ import annotations

import json
import re
from typing import Any

from .faults import Fault
from .formats import as_object
from .hosts import HOSTS, HostRoute
from .parts import refusal
from .records import Provider
from .server import RawRequest
from .thinking import ReasoningLedger
from .wire import WIRES

__all__ = ["GOOGLE_ROUTE", "ROUTES", "Route", "parse_body"]

ROUTES: dict[str, Provider] = {
    "/v1/chat/completions": "openai",
    "/v1/responses": "openai-responses",
    "/v1/messages": "anthropic",
}
GOOGLE_ROUTE = re.compile(r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):([A-Za-z]+)$")


class Route:
    """Where a request goes: its wire (None if unknown), model, and a 4xx reason if any."""

    __slots__ = ("model", "not_found", "problem", "provider", "rejection", "stream")

    def __init__(self, raw: RawRequest, body: Any, ledger: ReasoningLedger) -> None:
        self.provider: Provider | None = ROUTES.get(raw.path)
        self.model = ""
        self.problem: str | None = None
        self.rejection: Fault | None = None
        self.stream = False
        self.not_found = raw.method != "POST"
        hosted = _hosted(raw) if self.provider is None else None
        if hosted is not None:
            self.provider = hosted.wire
            self.not_found = self.not_found or hosted.not_found
        if self.provider is None:
            match = GOOGLE_ROUTE.match(raw.path)
            if match is not None:
                self.provider, self.model = "google", match.group(1)
                if match.group(2) == "streamGenerateContent":
                    self.stream = True
                    if "alt=sse" not in raw.query.split("&"):
                        self.problem = (
                            "wink emulator: only the SSE form of streamGenerateContent "
                            "(?alt=sse) is emulated."
                        )
                elif match.group(2) != "generateContent":
                    self.not_found = True
        if self.provider is None:
            self.not_found = True
            return
        fields = as_object(body)
        if self.provider != "google":
            self.model = str(fields.get("model", ""))
        if self.provider != "google":
            self.stream = fields.get("stream") is True
        if hosted is not None and hosted.model is not None:
            self.model = hosted.model
        if hosted is not None and hosted.rejection is not None:
            self.rejection = hosted.rejection  # the host refuses before it reads the body
            return
        if not isinstance(body, dict):
            self.problem = "We could not parse the JSON body of your request."
        elif self.problem is None:
            wire = WIRES[self.provider]
            self.problem = wire.validate(fields)
            if self.problem is None:
                # a part the API cannot read is refused as it parses the body, before it
                # looks at the conversation
                self.rejection = refusal(wire, fields) or wire.check_history(
                    fields, self.model, ledger
                )


def _hosted(raw: RawRequest) -> HostRoute | None:
    """The route of a request on a host's own path (`hosts.py`), if it is one."""
    for host in HOSTS:
        route = host.route(raw)
        if route is not None:
            return route
    return None


def parse_body(raw: bytes) -> Any:
    """The request's JSON, or its text when it is not JSON (recorded as received)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")
