"""The tool choice one request carries, decided once for every wire format.

A `tool_choice` that forces a call ("required", a tool's name) holds for an evaluation's
first round only: were it kept, the model could never answer after its tools ran, and the
loop would only end at `max_rounds` (the reset OpenAI's Agents SDK makes by default).
"auto" and "none" hold for every round. What no request could carry is refused before
sending, as an `InvalidArgumentError`.
"""

from __future__ import annotations

from .errors import InvalidArgumentError
from .messages import ModelRequest
from .settings import ModelSettings

__all__ = ["request_tool_choice"]


def request_tool_choice(request: ModelRequest, settings: ModelSettings) -> str | None:
    """The choice to send with `request` ("auto", "required", "none", a tool's name), or
    None for the provider's default. The choice is about the prompt's tools: where a
    wire format adds the structured output as one more tool, "required" lets the model
    call it to answer."""
    choice = settings.tool_choice
    if choice is None:
        return None
    if choice not in ("auto", "none") and not request.first_round:
        return None  # after the first round, the model decides
    names = [spec.name for spec in request.tools]
    if choice == "required" and not names:
        raise InvalidArgumentError(
            f'tool_choice="required" but prompt {request.prompt_name!r} offers no tools',
            argument="tool_choice",
        )
    if choice not in ("auto", "required", "none") and choice not in names:
        offered = ", ".join(names) or "none"
        raise InvalidArgumentError(
            f"tool_choice={choice!r} names no tool of prompt {request.prompt_name!r} "
            f"(offered: {offered})",
            argument="tool_choice",
        )
    if not names:
        return None  # "auto" or "none" without tools: nothing to choose from
    return choice
