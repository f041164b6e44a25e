"""Where a request goes (each wire's own paths, then the hosts'), and what the emulator
reads off a request before it answers (its wire, model, whether it streams, and any 4xx
it deserves)."""

from __future__ import annotations

import json
from typing import Any, cast

from .faults import Fault
from .formats import as_object
from .hosts import HOSTS, EmulatedHost, HostRoute
from .parts import refusal
from .records import Provider
from .server import RawRequest
from .thinking import ReasoningLedger
from .vertex import VertexAI
from .wire import WIRES, wire_for
from .wire.anthropic import AnthropicWire
from .wire.bedrock import BedrockWire

__all__ = ["Route", "parse_body"]

_EMULATED_HOSTS = (*HOSTS, VertexAI())  # Vertex's module builds on hosts.py


class Route:
    """Where a request goes: its wire (None if unknown), model, and a 4xx reason if any."""

    __slots__ = ("host", "model", "not_found", "problem", "provider", "rejection", "stream")

    def __init__(self, raw: RawRequest, body: Any, ledger: ReasoningLedger) -> None:
        self.provider: Provider | None = None
        self.model = ""
        self.problem: str | None = None
        self.rejection: Fault | None = None
        self.stream = False
        self.host: EmulatedHost | None = None  # the host whose path it came on, if any
        self.not_found = raw.method != "POST"
        own = _own(raw)
        hosted = _hosted(raw) if own is None else None
        route = own or hosted
        if route is None:
            self.not_found = True
            return
        self.provider = route.wire
        self.host = route.host
        self.not_found = self.not_found or route.not_found
        self.problem = route.problem
        fields = as_object(body)
        self.model = str(fields.get("model", "")) if route.model is None else route.model
        self.stream = fields.get("stream") is True if route.stream is None else route.stream
        if hosted is not None and hosted.model is not None and "model" not in fields:
            fields = {**fields, "model": cast(object, hosted.model)}  # the path names it (Vertex)
        if route.rejection is not None:
            self.rejection = route.rejection  # the host refuses before it reads the body
            return
        if not isinstance(body, dict):
            self.problem = "We could not parse the JSON body of your request."
        elif self.problem is None:
            wire = wire_for(self.provider)
            self.problem = wire.validate(fields)
            if self.problem is None and isinstance(wire, BedrockWire):
                self.problem = wire.check_model(self.model, fields)
            if self.problem is None and isinstance(wire, AnthropicWire):
                self.problem = wire.check_headers(raw.headers, fields)
            if self.problem is None:
                # a part the API cannot read is refused as it parses the body, before it
                # looks at the conversation
                self.rejection = refusal(wire, fields) or wire.check_history(
                    fields, self.model, ledger
                )


def _own(raw: RawRequest) -> HostRoute | None:
    """The route of a request on a wire's own path (the provider's own API), if it is one."""
    for wire in WIRES.values():
        route = wire.own_route(raw)
        if route is not None:
            return route
    return None


def _hosted(raw: RawRequest) -> HostRoute | None:
    """The route of a request on a host's own path (`hosts.py`), if it is one."""
    for host in _EMULATED_HOSTS:
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
