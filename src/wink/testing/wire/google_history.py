"""What Gemini refuses in a conversation, in its words: a `functionCallingConfig` it does
not take, a content with no parts, turns out of order, built-in tools it does not combine
(`google_builtin.py`), and on Gemini 3 a step whose first call lost its thought signature."""

from __future__ import annotations

from typing import Any

from ..faults import Fault
from ..formats import as_list, as_object, as_str
from .google_builtin import builtin_refusal

__all__ = ["either", "history_problem", "signs_every_step"]

_CALLING_MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")


def history_problem(body: dict[str, Any], names: tuple[str, ...], model: str) -> Fault | None:
    """Why Gemini refuses the conversation of `body` to `model` (its 400), or None:
    `functionCallingConfig` as the API takes it (`names`: the declared functions); the
    turns' order (`_turn_order`); Gemini 3 refuses a step of the current turn (the model
    contents since the last user text) whose first `functionCall` part lost its thought
    signature."""
    contents = [as_object(content) for content in as_list(body.get("contents"))]
    disorder = (
        _calling_config_refusal(body, names)
        or _empty_parts(contents)
        or _turn_order(contents)
        or builtin_refusal(body, model)
    )
    if disorder is not None:
        return Fault.bad_request(disorder)
    if not signs_every_step(model):
        return None
    start = max(
        (
            index
            for index, content in enumerate(contents)
            if content.get("role") == "user"
            and any("text" in as_object(part) for part in as_list(content.get("parts")))
        ),
        default=-1,
    )
    for index in range(start + 1, len(contents)):
        content = contents[index]
        if content.get("role") != "model":
            continue
        parts = [as_object(part) for part in as_list(content.get("parts"))]
        first = next((part for part in parts if "functionCall" in part), None)
        if first is not None and not first.get("thoughtSignature"):
            name = as_str(as_object(first["functionCall"]).get("name")) or ""
            return Fault.bad_request(
                "Function call is missing a thought_signature in functionCall parts. This "
                "is required for tools to work correctly, and missing thought_signature "
                "may lead to degraded model performance. Additional data, function call "
                f"`default_api:{name}` , position {index + 1}. Please refer to "
                "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
            )
    return None


def signs_every_step(model: str) -> bool:
    """Gemini 3 always thinks, signs every step and checks the signatures come back."""
    return model.removeprefix("models/").startswith("gemini-3")


def either(part: dict[str, Any], camel: str, snake: str) -> Any:
    """A field by its JSON name or its proto name (the API reads both)."""
    return part.get(camel, part.get(snake))


def _calling_config_refusal(body: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """Gemini's 400s for `toolConfig.functionCallingConfig`: a mode it does not know, the
    config without function declarations, `allowedFunctionNames` with a mode other than
    `ANY` or `VALIDATED` or naming a function not declared (for these last two the API
    answers with its generic words)."""
    tool_config = as_object(either(body, "toolConfig", "tool_config"))
    config = either(tool_config, "functionCallingConfig", "function_calling_config")
    if config is None:
        return None
    config = as_object(config)
    mode = config.get("mode", "MODE_UNSPECIFIED")
    if mode not in _CALLING_MODES:
        return (
            "Invalid value at 'tool_config.function_calling_config.mode' "
            "(type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig"
            f'.Mode), "{mode}"'
        )
    if not names:
        return "Function calling config is set without function_declarations."
    allowed = as_list(either(config, "allowedFunctionNames", "allowed_function_names"))
    if allowed and (mode not in ("ANY", "VALIDATED") or any(n not in names for n in allowed)):
        return "Request contains an invalid argument."
    return None


def _empty_parts(contents: list[dict[str, Any]]) -> str | None:
    """The 400 message for a content with no parts, or None. A part of empty text is
    taken: the real API answered one with a 200 (the recorded `gemini3_followup_echo`)."""
    for index, content in enumerate(contents):
        if not as_list(content.get("parts")):
            where = f"GenerateContentRequest.contents[{index}].parts"
            return f"* {where}: contents.parts must not be empty.\n"
    return None


def _turn_order(contents: list[dict[str, Any]]) -> str | None:
    """The 400 message for turns out of order, or None: a function call turn comes right
    after a user turn or a function response turn, and is answered by the next turn with
    as many function responses as it has calls."""
    calls_before = 0  # the functionCall parts of the content just before (a model turn's)
    role_before: object = None
    for content in contents:
        parts = [as_object(part) for part in as_list(content.get("parts"))]
        calls = sum("functionCall" in part for part in parts)
        responses = sum("functionResponse" in part for part in parts)
        role = content.get("role", "user")
        if role == "model" and calls and role_before != "user":
            return (
                "Please ensure that function call turn comes immediately after a user turn or "
                "after a function response turn."
            )
        if responses and not calls_before:
            return (
                "Please ensure that function response turn comes immediately after a "
                "function call turn."
            )
        if role != "model" and calls_before and responses != calls_before:
            return (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
        calls_before = calls if role == "model" else 0
        role_before = role
    return None
