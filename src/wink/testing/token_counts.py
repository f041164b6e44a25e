"""The token-count endpoints, as the emulator serves them: Anthropic
`POST /v1/messages/count_tokens`, OpenAI `POST /v1/responses/input_tokens`, Gemini
`models/{model}:countTokens`. Each wire format that has one says, in its own module
(`wire/`), which path it is, what the endpoint refuses in its words, and the answer's
shape (`TokenCounter`); a wire without one (Chat Completions) has none, and a request
there is a 404 as on the real API. The request is refused as its generation request
would be (a part the API cannot read, a conversation that breaks its rules); the count is
derived from the request: one token per four characters of every string it carries,
rounded up, the model's name aside.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, cast, runtime_checkable

from .faults import Fault
from .parts import refusal
from .server import RawRequest
from .thinking import ReasoningLedger
from .wire import WIRES, WireFormat

__all__ = ["TokenCounter", "answer_token_count", "derived_count", "token_count_route"]


@runtime_checkable
class TokenCounter(Protocol):
    """A wire format's token-count endpoint."""

    def token_count_model(self, path: str) -> str | None:
        """The model a request on `path` counts for ("" when its body names it); None
        when `path` is not this endpoint."""
        ...

    def token_count_problem(self, body: dict[str, Any]) -> Fault | None:
        """The 400 the endpoint gives this body (a field it does not take), else None."""
        ...

    def counted_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """The generation request the body counts (Gemini wraps it)."""
        ...

    def token_count_body(self, count: int) -> dict[str, Any]:
        """The 200 answer for `count` tokens."""
        ...


def token_count_route(raw: RawRequest) -> tuple[WireFormat, str] | None:
    """The wire whose token-count endpoint `raw` is on, and the model its path names."""
    if raw.method != "POST":
        return None
    for wire in WIRES.values():
        if isinstance(wire, TokenCounter):
            model = wire.token_count_model(raw.path)
            if model is not None:
                return wire, model
    from .vertex import vertex_token_count_route  # a host's own count paths

    return vertex_token_count_route(raw)


def answer_token_count(
    wire: WireFormat, model: str, body: object, ledger: ReasoningLedger
) -> Fault | dict[str, Any]:
    """The endpoint's answer to `body`: its count, or the 400 the real endpoint gives."""
    counter = cast(TokenCounter, wire)
    if not isinstance(body, dict):
        return Fault.bad_request("We could not parse the JSON body of your request.")
    fields = cast(dict[str, Any], body)
    problem = counter.token_count_problem(fields)
    if problem is not None:
        return problem
    generation = counter.counted_request(fields)
    named = model or str(fields.get("model", ""))
    refused = refusal(wire, generation) or wire.check_history(generation, named, ledger)
    if refused is not None:
        return refused
    return counter.token_count_body(derived_count(generation))


def derived_count(body: object) -> int:
    """One token per four characters of every string in `body`, rounded up, its
    `model` aside: a count that moves with what the request carries."""
    if isinstance(body, str):
        return math.ceil(len(body) / 4)
    if isinstance(body, dict):
        items = cast(dict[str, Any], body).items()
        return sum(derived_count(value) for key, value in items if key != "model")
    if isinstance(body, list):
        return sum(derived_count(value) for value in cast(list[Any], body))
    return 0
