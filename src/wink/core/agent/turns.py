"""What the loop reads from a model's turn: its echo into the transcript, the
structured-output call apart from the calls to run, and whether a final turn is an
answer at all (cut off, refused, blocked, empty: the same error on every wire format)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from ..foundation.content import Attachment, CachePoint, TextPart, UserPart
from ..foundation.errors import (
    ContentFilteredError,
    InvalidArgumentError,
    OutputTruncatedError,
    PromptEvaluationError,
    RefusalError,
)
from ..foundation.messages import (
    AssistantMessage,
    FinishReason,
    ModelResponse,
    OutputSpec,
    ToolCall,
    is_output_tool,
)
from .executor import wire_safe_call

__all__ = ["Redacting", "check_finished", "check_not_empty", "echo_turn", "split_output_call"]


class Redacting(Protocol):
    """The part of the loop's client an error needs: its secrets taken out."""

    def redact(self, payload: Mapping[str, Any]) -> dict[str, Any]: ...


_ANSWERED = 200  # the status of every answer the loop reads (an error status raised)
_REFUSAL_SHOWN = 300  # characters of a refusal quoted in the error's message
# An answer that ended without a usable final answer: the class it raises, and why.
_UNFINISHED: dict[FinishReason, tuple[type[PromptEvaluationError], str]] = {
    "length": (OutputTruncatedError, "the response was cut off at the output token limit"),
    "content_filter": (
        ContentFilteredError,
        "the response was blocked by the provider's content filter",
    ),
    "refusal": (RefusalError, "the model refused to answer"),
    "error": (PromptEvaluationError, "the provider reported an error instead of an answer"),
}


def check_not_empty(
    text: str, parts: tuple[UserPart, ...], attachments: tuple[Attachment, ...]
) -> None:
    """Refuse a first turn with nothing to read, before anything is sent: Anthropic and
    Gemini refuse an empty or blank user turn with a 400, and on the others the model would
    answer nothing asked, so it is the same error on every provider."""
    if text.strip() or attachments or any(not isinstance(p, TextPart | CachePoint) for p in parts):
        return
    raise InvalidArgumentError(
        f"the prompt renders to {'no text' if not text else 'only whitespace'} and the "
        "call has no attachments: a model turn needs something to answer (give a section "
        "some text, or pass attachments)",
        argument="prompt",
    )


def echo_turn(response: ModelResponse) -> AssistantMessage:
    """The model's turn as it goes back in the transcript. A call whose arguments JSON
    cannot carry (a lone surrogate, NaN) is refused by the executor; its echo is sent in a
    form the provider accepts, so the next request can say why."""
    message = response.to_message()
    calls = tuple(wire_safe_call(call) for call in message.tool_calls)
    if all(new is old for new, old in zip(calls, message.tool_calls, strict=True)):
        return message
    return replace(message, tool_calls=calls)


def split_output_call(
    response: ModelResponse, output: OutputSpec | None
) -> tuple[tuple[ToolCall, ...], ToolCall | None]:
    """(the calls to run, the structured-output call if the model made one).

    Providers that take structured output as a tool (see `output_tool_spec`) report the
    call like any other; which call is the answer is decided here, once for all of them.
    """
    if output is None or not response.tool_calls:
        return response.tool_calls, None
    answer: ToolCall | None = None
    calls: list[ToolCall] = []
    for call in response.tool_calls:
        if answer is None and is_output_tool(call.name, output):
            answer = call
        else:
            calls.append(call)
    return tuple(calls), answer


def check_finished(
    client: Redacting, response: ModelResponse, output_type: type[Any] | None, name: str
) -> None:
    """Raise when the final turn is no answer at all (cut off, refused, blocked, empty);
    a structured answer is then parsed by `StructuredAnswers`."""
    unfinished = _UNFINISHED.get(response.finish_reason)  # "error" too, even with calls
    if unfinished is not None:
        raise _unfinished(client, response, name, _payload(client, response), *unfinished)
    if output_type is None and not response.text:
        raise PromptEvaluationError(
            "the model returned neither text nor tool calls",
            prompt_name=name,
            phase="response",
            provider_payload=_payload(client, response),
            status_code=_ANSWERED,
            finish_reason=response.finish_reason,
        )


def _payload(client: Redacting, response: ModelResponse) -> dict[str, Any] | None:
    """The answer as an error shows it, cleaned of secrets (made only for an error)."""
    return client.redact(response.raw) if response.raw is not None else None


def _unfinished(
    client: Redacting,
    response: ModelResponse,
    name: str,
    raw: dict[str, Any] | None,
    kind: type[PromptEvaluationError],
    problem: str,
) -> PromptEvaluationError:
    """The error for an answer that ended without a usable final answer, with its words
    in neutral form (the same fields on every wire format), cleaned of secrets."""
    words = client.redact({"refusal": response.refusal, "partial": response.text or None})
    refusal, partial = words["refusal"], words["partial"]
    if refusal:
        quoted = refusal if len(refusal) <= _REFUSAL_SHOWN else refusal[:_REFUSAL_SHOWN] + "..."
        problem = f"{problem}: {quoted}"
    return kind(
        problem,
        prompt_name=name,
        phase="response",
        provider_payload=raw,
        status_code=_ANSWERED,
        finish_reason=response.finish_reason,
        refusal=refusal,
        partial_text=partial,
    )
