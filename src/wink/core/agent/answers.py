"""Structured answers, checked once for every provider; one that does not validate goes
back to the model, which may correct it.

A structured answer arrives as the text of a final turn (the provider's JSON output:
OpenAI `json_schema`, Gemini `responseJsonSchema`) or as the arguments of the output tool
(`final_result_*`, see `output_tool_spec`). Either way the loop has it parsed here. One
that does not validate is answered in the form it came in (a user turn after the text, a
failed tool result for the call) saying what is wrong, and the model tries again, at most
`max_output_retries` times in one evaluation, both forms counted together. Past that the
evaluation fails with `PromptEvaluationError(phase="response")`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from ..foundation.errors import PromptEvaluationError
from ..foundation.limits import DEFAULT_MAX_OUTPUT_RETRIES
from ..foundation.messages import Message, ToolCall, ToolResultMessage, UserMessage
from ..prompting.prompt import parse_output
from .executor import format_validation_error

__all__ = ["DEFAULT_MAX_OUTPUT_RETRIES", "AnswerVia", "Rejection", "StructuredAnswers"]


AnswerVia = Literal["text", "tool"]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A structured answer that did not validate: the `attempt`-th of its evaluation.

    `problems` is pydantic's error as the model reads it (`field: why; ...`); `call` is
    the output-tool call the answer came in (None for a text answer).
    """

    via: AnswerVia
    answer: str
    problems: str
    error: ValidationError = field(repr=False)
    attempt: int
    call: ToolCall | None = None

    def payload(self) -> dict[str, Any]:
        """The answer as `PromptEvaluationError.provider_payload` shows it."""
        if self.call is None:
            return {"text": self.answer}
        return {"tool_call": {"name": self.call.name, "arguments": self.answer}}


class StructuredAnswers:
    """Parses the structured answers of one evaluation and counts the rejected ones.

    `limit` is `max_output_retries`: how many rejected answers the model may correct
    (0: the first one ends the evaluation; None: no limit of its own, `max_rounds`
    still applies).
    """

    def __init__(self, output_type: type[Any], limit: int | None, prompt_name: str) -> None:
        self.output_type = output_type
        self.limit = limit
        self.prompt_name = prompt_name
        self.rejected = 0

    def parse_text(self, text: str) -> tuple[Any, Rejection | None]:
        """(the output, None), or (None, why the final text is not one)."""
        return self._parse(text, None)

    def parse_call(self, call: ToolCall) -> tuple[Any, Rejection | None]:
        """(the output, None), or (None, why the output-tool call's arguments are not one)."""
        return self._parse(call.arguments_json(), call)

    def _parse(self, answer: str, call: ToolCall | None) -> tuple[Any, Rejection | None]:
        try:
            return parse_output(self.output_type, answer), None
        except ValidationError as error:
            self.rejected += 1
            problems = format_validation_error(error, whole="answer")
            via: AnswerVia = "text" if call is None else "tool"
            return None, Rejection(via, answer, problems, error, self.rejected, call)

    def exhausted(self, rejection: Rejection) -> bool:
        """True when `rejection` is one more than the model may correct."""
        return self.limit is not None and rejection.attempt > self.limit

    def reply(self, rejection: Rejection) -> Message:
        """What the model reads next: a user turn after a text answer (which stays in the
        transcript), a failed result for an output-tool call."""
        name = self.output_type.__name__
        call = rejection.call
        if call is None:
            return UserMessage(
                f"Your answer does not match {name}: {rejection.problems}. Answer again with "
                f"the corrected {name}: the JSON alone, matching the schema you were given."
            )
        return ToolResultMessage(
            call.id,
            call.name,
            f"The final answer does not match {name}: {rejection.problems}. "
            f"Call {call.name} again with arguments that match its schema.",
            success=False,
        )

    def failure(self, rejection: Rejection, payload: dict[str, Any]) -> PromptEvaluationError:
        """The error that ends the evaluation past the limit (raise it from
        `rejection.error`, pydantic's)."""
        count = rejection.attempt
        return PromptEvaluationError(
            f"structured output does not match {self.output_type.__name__} after {count} "
            f"answer{'s' if count > 1 else ''} (max_output_retries={self.limit}); last "
            f"error: {rejection.problems}",
            prompt_name=self.prompt_name,
            phase="response",
            provider_payload=payload,
            status_code=200,  # the provider answered; the answer is what failed
        )
