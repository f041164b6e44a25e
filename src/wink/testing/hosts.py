"""The hosts' URL shapes and auth, as the emulator serves them: each `EmulatedHost` says
which of its paths carry which wire format, refuses a request its auth does not cover
with the host's own answer, and says how its answers differ from the wire's own (where a
compatible host puts the model's thinking). A request on a wire's own path
(`/v1/chat/completions`) is the wire's own service (`routes.py`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, cast

from .faults import Fault
from .formats import as_object
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
    stream: bool | None = None  # None: the body says (a path that names it: Gemini's)
    problem: str | None = None  # a 400 the path itself earns (Gemini's stream without SSE)
    host: EmulatedHost | None = None  # the host whose path it came on (None: the wire's own)


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


class EmulatedHost:
    """One host's paths (`(pattern, wire)`, a pattern's first group the model if any), its
    auth check, and where its answers carry the model's thinking: `reasoning_field`, the
    assistant message's field (and a streamed delta's) that holds it on a Chat
    Completions host (None: the wire's own rule, OpenAI's, which shows none)."""

    paths: tuple[tuple[re.Pattern[str], Provider], ...] = ()
    reasoning_field: str | None = None

    def route(self, raw: RawRequest) -> HostRoute | None:
        for pattern, wire in self.paths:
            match = pattern.match(raw.path)
            if match is not None:
                model = match.group(1) if match.groups() else None
                return self.check(raw, HostRoute(wire, model, host=self))
        return None

    def check(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        """The route, or the host's refusal of this request (auth, a missing parameter)."""
        return route

    def reasoning(self, thoughts: list[str]) -> dict[str, Any]:
        """The fields an answer's message gets for the model's `thoughts` (none shown)."""
        if self.reasoning_field is None or not thoughts:
            return {}
        return {self.reasoning_field: "".join(thoughts)}

    def reasoning_delta(self, piece: str, index: int) -> dict[str, Any]:
        """A streamed delta carrying one piece of the model's `index`th thought."""
        return {self.reasoning_field: piece} if self.reasoning_field is not None else {}


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


_DEEPSEEK_ECHO = "The reasoning_content in the thinking mode must be passed back to the API."


class DeepSeek(EmulatedHost):
    """DeepSeek (`/chat/completions`, no `/v1`): a bearer key; thinking answered in
    `reasoning_content` (streamed as `delta.reasoning_content`); with thinking on (a
    `reasoning_effort`, `thinking: {type: enabled}`, or `deepseek-reasoner`), every
    assistant turn that called tools must carry its `reasoning_content` back, else 400."""

    paths = ((re.compile(r"^/chat/completions$"), "openai"),)
    reasoning_field = "reasoning_content"

    def check(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        if not raw.headers.get("authorization", "").startswith("Bearer "):
            body = {
                "error": {
                    "message": "Authentication Fails (no such user)",
                    "type": "authentication_error",
                }
            }
            return HostRoute(route.wire, route.model, Fault.http(401, body))
        fields = as_object(parse_json(raw.body))
        thinking = cast(dict[str, Any], fields.get("thinking") or {})
        on = (
            "reasoning_effort" in fields
            or thinking.get("type") == "enabled"
            or fields.get("model") == "deepseek-reasoner"
        )
        messages = fields.get("messages")
        if on and isinstance(messages, list):
            for entry in cast(list[Any], messages):
                message = cast(dict[str, Any], entry) if isinstance(entry, dict) else {}
                tool_turn = message.get("role") == "assistant" and message.get("tool_calls")
                if tool_turn and "reasoning_content" not in message:
                    error = {
                        "message": _DEEPSEEK_ECHO,
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_request_error",
                    }
                    return HostRoute(route.wire, route.model, Fault.http(400, {"error": error}))
        return route


class OpenRouter(EmulatedHost):
    """OpenRouter (`/api/v1/chat/completions`): a bearer key; thinking answered twice, as
    `reasoning` (text) and as `reasoning_details` (typed entries: `reasoning.text` with its
    text, signature and format, as OpenRouter sends a model's own thinking), both in each
    streamed delta that carries a piece of it."""

    paths = ((re.compile(r"^/api/v1/chat/completions$"), "openai"),)
    reasoning_field = "reasoning"

    def check(self, raw: RawRequest, route: HostRoute) -> HostRoute:
        if not raw.headers.get("authorization", "").startswith("Bearer "):
            body = {"error": {"message": "No auth credentials found", "code": 401}}
            return HostRoute(route.wire, route.model, Fault.http(401, body))
        return route

    def reasoning(self, thoughts: list[str]) -> dict[str, Any]:
        if not thoughts:
            return {}
        details = [_detail(text, index) for index, text in enumerate(thoughts)]
        return {"reasoning": "".join(thoughts), "reasoning_details": details}

    def reasoning_delta(self, piece: str, index: int) -> dict[str, Any]:
        return {"reasoning": piece, "reasoning_details": [_detail(piece, index)]}


def _detail(text: str, index: int) -> dict[str, Any]:
    """One `reasoning_details` entry: a model's thinking text (`format`: whose it is,
    `unknown` for the emulated model)."""
    return {
        "type": "reasoning.text",
        "text": text,
        "signature": None,
        "format": "unknown",
        "index": index,
    }


HOSTS: tuple[EmulatedHost, ...] = (AzureOpenAI(), DeepSeek(), OpenRouter())
