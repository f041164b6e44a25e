"""THE evaluation loop, written once for every provider.

render -> request -> parse -> execute tool calls (failures included) -> repeat until a
final answer -> parse structured output -> `PromptResponse`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from .errors import DeadlineExceededError, PromptEvaluationError, ThrottleError
from .executor import ToolExecution, ToolExecutor
from .limits import Budget, BudgetTracker, Deadline
from .messages import (
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    ToolSpec,
    Usage,
    UserMessage,
)
from .prompt import Prompt, parse_output
from .retry import RetryPolicy
from .session import PromptExecuted, PromptRendered, Session, ToolInvoked

__all__ = ["LoopSettings", "ModelClient", "PromptResponse", "run_evaluation"]

_ONE_REQUEST = Usage(requests=1)
_UNFINISHED: dict[FinishReason, str] = {
    "length": "the response was cut off at the output token limit",
    "content_filter": "the response was blocked by the provider's content filter",
    "refusal": "the model refused to answer",
    "error": "the provider reported an error instead of an answer",
}


class ModelClient(Protocol):
    """What the loop needs from an adapter: one request in, one parsed response out.

    `request` raises `ThrottleError` / `PromptEvaluationError`, never an SDK exception.
    """

    @property
    def name(self) -> str: ...

    async def request(self, request: ModelRequest) -> ModelResponse: ...


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """How one evaluation behaves; adapters fill it from their options."""

    retry_policy: RetryPolicy
    graceful_tool_errors: bool = True
    max_failed_tool_rounds: int | None = 8
    max_rounds: int | None = None


@dataclass(frozen=True, slots=True)
class PromptResponse:
    """The final answer: text, parsed structured output (if asked for), and what it cost."""

    prompt_name: str
    text: str | None
    output: Any
    usage: Usage
    finish_reason: FinishReason
    rounds: int
    tool_invocations: tuple[ToolInvoked, ...] = ()


async def run_evaluation(
    client: ModelClient,
    prompt: Prompt,
    *,
    session: Session,
    settings: LoopSettings,
    deadline: Deadline | None = None,
    budget: Budget | None = None,
) -> PromptResponse:
    """Drive `prompt` to a final answer through `client`; see the module docstring."""
    name = prompt.name
    rendered = prompt.render(session=session)
    session.dispatch(
        PromptRendered(
            prompt_name=name,
            adapter=client.name,
            text=rendered.text,
            tool_names=tuple(tool.name for tool in rendered.tools),
        )
    )
    specs = tuple(
        ToolSpec(tool.name, tool.description, tool.parameters_schema) for tool in rendered.tools
    )
    messages: list[Message] = [UserMessage(rendered.text)]
    tracker = BudgetTracker(budget, prompt_name=name)
    invocations: list[ToolInvoked] = []
    failed_rounds = 0
    rounds = 0
    with prompt.resources.open_scope() as scope:
        executor = ToolExecutor(
            {tool.name: tool for tool in rendered.tools},
            session=session,
            resources=scope,
            prompt_name=name,
            adapter=client.name,
            deadline=deadline,
            graceful_default=settings.graceful_tool_errors,
        )
        while True:
            rounds += 1
            if settings.max_rounds is not None and rounds > settings.max_rounds:
                raise PromptEvaluationError(
                    f"no final answer after {settings.max_rounds} rounds",
                    prompt_name=name,
                    phase="tool",
                )
            request = ModelRequest(
                name,
                tuple(messages),
                specs,
                rendered.output,
                deadline=deadline,
            )
            response = await _request(client, request, settings, tracker, deadline)
            if not response.tool_calls:
                break
            messages.append(response.to_message())
            executions = await executor.execute(response.tool_calls)
            messages.extend(execution.to_message() for execution in executions)
            invocations.extend(session[ToolInvoked][-len(executions) :])
            failed_rounds = failed_rounds + 1 if _all_failed(executions) else 0
            limit = settings.max_failed_tool_rounds
            if limit is not None and failed_rounds >= limit:
                raise PromptEvaluationError(
                    f"{failed_rounds} consecutive tool rounds failed; last failure: "
                    f"{executions[-1].result.message}",
                    prompt_name=name,
                    phase="tool",
                )
    output = _finish(response, rendered.output_type, name)
    result = PromptResponse(
        prompt_name=name,
        text=response.text,
        output=output,
        usage=tracker.usage,
        finish_reason=response.finish_reason,
        rounds=rounds,
        tool_invocations=tuple(invocations),
    )
    session.dispatch(
        PromptExecuted(
            prompt_name=name,
            adapter=client.name,
            text=response.text,
            output=output,
            usage=tracker.usage,
            rounds=rounds,
        )
    )
    return result


async def _request(
    client: ModelClient,
    request: ModelRequest,
    settings: LoopSettings,
    tracker: BudgetTracker,
    deadline: Deadline | None,
) -> ModelResponse:
    if deadline is not None:
        deadline.check(prompt_name=request.prompt_name, step="the provider request")
    tracker.before_request()
    try:
        response = await settings.retry_policy.call(
            lambda: client.request(request), deadline=deadline
        )
    except ThrottleError as error:
        # A request cut short by the deadline is the deadline's failure, not the provider's.
        if deadline is not None and deadline.expired():
            raise DeadlineExceededError(
                f"deadline passed during the provider request ({error.details.kind})",
                prompt_name=request.prompt_name,
            ) from error
        raise
    tracker.record(response.usage + _ONE_REQUEST)
    return response


def _all_failed(executions: Sequence[ToolExecution]) -> bool:
    return all(not execution.result.success for execution in executions)


def _finish(response: ModelResponse, output_type: type[Any] | None, name: str) -> Any:
    problem = _UNFINISHED.get(response.finish_reason)
    if problem is not None:
        raise PromptEvaluationError(
            problem, prompt_name=name, phase="response", provider_payload=response.raw
        )
    if output_type is None:
        if not response.text:
            raise PromptEvaluationError(
                "the model returned neither text nor tool calls",
                prompt_name=name,
                phase="response",
                provider_payload=response.raw,
            )
        return None
    try:
        return parse_output(output_type, response.text or "")
    except (ValidationError, ValueError) as error:
        raise PromptEvaluationError(
            f"structured output does not match {output_type.__name__}: {error}",
            prompt_name=name,
            phase="response",
            provider_payload={"text": response.text},
        ) from error
