"""THE evaluation loop, written once for every provider.

render -> request -> parse -> execute tool calls (failures included) -> repeat until a
final answer -> parse structured output (an answer that does not validate goes back to
the model: `wink.core.agent.answers`) -> `PromptResponse`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Generic, Protocol, cast

from ..foundation.content import Attachment, TextPart, UserPart
from ..foundation.cost import Cost, PriceTag
from ..foundation.errors import (
    DeadlineExceededError,
    EvaluationPhase,
    PromptEvaluationError,
    ThrottleError,
    WinkError,
)
from ..foundation.events import (
    ApprovalRequired,
    EventSink,
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    RoundFinished,
    RoundRestarted,
    ThinkingReceived,
    ToolInvoked,
)
from ..foundation.limits import Budget, BudgetTracker, Deadline
from ..foundation.messages import (
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from ..foundation.transcript import PendingToolCall, Transcript, TranscriptMessage, pending_call
from ..prompting.prompt import OutputT, Prompt
from ..prompting.session import Session
from ..prompting.sources import offered_tools
from ..telemetry.spans import Telemetry, current_trace, traced_evaluation
from ..throttling.retry import RetryPolicy
from .answers import DEFAULT_MAX_OUTPUT_RETRIES, Rejection, StructuredAnswers
from .conversation import ANSWER_HELD, ANSWER_TAKEN, Approvals, held_calls, in_call_order, resume
from .deferred import AnswerLater, LoopState
from .executor import ToolExecution, ToolExecutor
from .turns import check_finished, echo_turn, split_output_call

__all__ = [
    "DEFAULT_MAX_OUTPUT_RETRIES",
    "DEFAULT_MAX_ROUNDS",
    "LoopSettings",
    "ModelClient",
    "PromptResponse",
    "publish",
    "run_evaluation",
]

_ONE_REQUEST = Usage(requests=1)


class ModelClient(Protocol):
    """What the loop needs from an adapter: one request in, one parsed response out.

    `stream` is `request` with the answer fed to `sink` as it arrives. Both raise
    `ThrottleError` / `PromptEvaluationError`, never an SDK exception; `redact` cleans
    a provider payload of the adapter's secrets before it goes into an error. `name` is
    the serving adapter's ("provider:model"), `system` its provider's
    `gen_ai.provider.name` (for tracing).
    """

    @property
    def name(self) -> str: ...

    @property
    def system(self) -> str: ...

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse: ...

    def redact(self, payload: Mapping[str, Any]) -> dict[str, Any]: ...


DEFAULT_MAX_ROUNDS = 50  # a model that never stops calling tools must not run forever


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """How one evaluation behaves; adapters fill it from their options and the call's."""

    retry_policy: RetryPolicy
    graceful_tool_errors: bool = True
    max_failed_tool_rounds: int | None = 8
    max_rounds: int | None = DEFAULT_MAX_ROUNDS
    max_output_retries: int | None = DEFAULT_MAX_OUTPUT_RETRIES  # see wink.core.agent.answers
    telemetry: Telemetry | None = None  # spans (wink.core.telemetry.spans); None: no tracing


@dataclass(frozen=True, slots=True)
class PromptResponse(Generic[OutputT]):
    """The final answer: text, parsed structured output (if asked for), and what it cost.

    `transcript` is the whole conversation (the `history` given, then this evaluation's
    turns): pass it as `history=` to go on (docs/conversations.md). `pending` are the
    calls that stopped the evaluation to wait for a person (docs/approvals.md); then
    `text` is what the model said with them and `output` is None.

    `cost` is what the evaluation cost, every round's answer priced by the adapter that
    ran it (None when one cannot be priced; docs/cost.md); `model` the model that gave
    the last answer, as the provider named it (the adapter's `model` is the one asked for).
    """

    prompt_name: str
    text: str | None
    output: OutputT | None
    usage: Usage
    finish_reason: FinishReason
    rounds: int
    tool_invocations: tuple[ToolInvoked, ...] = ()
    thinking: str | None = None  # the readable thinking of every round, where shown
    transcript: Transcript = field(default_factory=Transcript)
    pending: tuple[PendingToolCall, ...] = ()
    model: str | None = None
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        tag = self.price_tag
        return tag.cost if tag is not None else None


@dataclass(slots=True)
class _Progress:
    """Where an evaluation is, so a failure is reported in the phase it happened in."""

    phase: EvaluationPhase = "request"
    rounds: int = 0


async def run_evaluation(
    client: ModelClient,
    prompt: Prompt[OutputT],
    *,
    session: Session,
    settings: LoopSettings,
    deadline: Deadline | None = None,
    budget: Budget | None = None,
    sink: EventSink | None = None,
    attachments: tuple[Attachment, ...] = (),
    history: Transcript | None = None,
    approvals: Approvals | None = None,
    resume: LoopState | None = None,
) -> PromptResponse[OutputT]:
    """Drive `prompt` to a final answer through `client`; see the module docstring.

    `attachments` (the call's images, documents, audio) follow the rendered prompt in
    the first user turn. With a `history` (checked with `approvals` at the call:
    `check_continuation`), the conversation goes on from it
    (`wink.core.agent.conversation`). A client may answer a request later
    (`AnswerLater`, a batch): the evaluation stops there, and `resume` (the state it
    stopped in) goes on from that request (`wink.core.agent.deferred`).

    With a `sink`, every request is streamed into it and the loop adds its own events
    (`ToolInvoked` as each tool finishes, `RoundFinished`, `RoundRestarted`): the same
    loop, its progress made visible. Whatever fails, the caller gets a `WinkError` and
    the session a `PromptFailed` event; an exception that is not a `WinkError` (a bug,
    in wink or in user code such as a reducer) is wrapped, labelled with the phase it
    happened in.
    """
    progress = _Progress()
    tracker = BudgetTracker(budget, prompt_name=prompt.name)
    with traced_evaluation(settings.telemetry, prompt.name, client):
        try:
            return await _evaluate(
                client,
                prompt,
                session,
                settings,
                deadline,
                tracker,
                progress,
                sink,
                attachments,
                (history, approvals or {}, resume),
            )
        except AnswerLater:  # stopped to wait for the answer: not a failure
            raise
        except WinkError as error:
            _record_failure(session, client, prompt.name, error, progress, tracker)
            raise
        except Exception as error:
            failure = PromptEvaluationError(
                f"unexpected {type(error).__name__} during the {progress.phase} phase: {error}",
                prompt_name=prompt.name,
                phase=progress.phase,
            )
            _record_failure(session, client, prompt.name, failure, progress, tracker)
            raise failure from error


def _record_failure(
    session: Session,
    client: ModelClient,
    name: str,
    failure: WinkError,
    progress: _Progress,
    tracker: BudgetTracker,
) -> None:
    phase = failure.phase if isinstance(failure, PromptEvaluationError) else None
    event = PromptFailed(
        prompt_name=name,
        adapter=client.name,
        phase=phase,
        error=failure,
        rounds=progress.rounds,
        usage=tracker.usage,
        price_tag=tracker.price_tag,
    )
    trace = current_trace()
    if trace is not None:
        trace.record(event)
    with contextlib.suppress(Exception):  # a failing reducer must not mask the failure
        session.dispatch(event)


async def _evaluate(
    client: ModelClient,
    prompt: Prompt[OutputT],
    session: Session,
    settings: LoopSettings,
    deadline: Deadline | None,
    tracker: BudgetTracker,
    progress: _Progress,
    sink: EventSink | None,
    attachments: tuple[Attachment, ...],
    continued: tuple[Transcript | None, Approvals, LoopState | None],
) -> PromptResponse[OutputT]:
    name = prompt.name
    history, approvals, state = continued
    rendered = prompt.render(session=session)
    tools = await offered_tools(
        rendered.tools, rendered.tool_sources, deadline=deadline, prompt_name=name
    )
    if state is None:  # a resumed evaluation was rendered when it started
        session.dispatch(
            PromptRendered(
                prompt_name=name,
                adapter=client.name,
                text=rendered.text,
                tool_names=tuple(tool.name for tool in tools),
            )
        )
    specs = tuple(ToolSpec(tool.name, tool.description, tool.parameters_schema) for tool in tools)
    messages: list[Message] = list(history) if history is not None else []
    resuming = history is not None and bool(history.pending)
    if state is not None:  # where it stopped, waiting for an answer
        messages = list(state.messages)
        progress.rounds = state.round - 1
        tracker.resume(state.usage, state.price_tag)
    elif not resuming:  # else the person's answers are the next turn
        messages.append(_first_turn(rendered.text, rendered.parts, attachments))
    system = (SystemMessage(rendered.instructions),) if rendered.instructions else ()
    invocations: list[ToolInvoked] = list(state.invocations) if state is not None else []
    thoughts: list[str] = list(state.thoughts) if state is not None else []
    failed_rounds = state.failed_rounds if state is not None else 0
    output: Any = None
    pending: tuple[PendingToolCall, ...] = ()
    answers = (
        StructuredAnswers(rendered.output_type, settings.max_output_retries, name)
        if rendered.output_type is not None
        else None
    )
    if answers is not None and state is not None:
        answers.rejected = state.rejected
    with prompt.resources.open_scope() as scope:
        executor = ToolExecutor(
            {tool.name: tool for tool in tools},
            session=session,
            resources=scope,
            prompt_name=name,
            adapter=client.name,
            deadline=deadline,
            graceful_default=settings.graceful_tool_errors,
        )
        if resuming and history is not None:
            progress.phase = "tool"
            answered = await resume(executor, history, approvals, _shown(sink))
            messages.extend(execution.to_message() for execution in answered)
            in_call_order(messages)
            invocations.extend(session[ToolInvoked][-len(answered) :] if answered else ())
        while True:
            progress.rounds += 1
            limit = settings.max_rounds
            if limit is not None and progress.rounds > limit:
                raise PromptEvaluationError(
                    f"no final answer after {limit} rounds (max_rounds={limit}); the model "
                    "kept calling tools",
                    prompt_name=name,
                    phase="budget",
                )
            progress.phase = "request"
            request = ModelRequest(
                name, (*system, *messages), specs, rendered.output, deadline=deadline
            )
            try:
                response = await _request(
                    client, request, settings, tracker, deadline, session, sink, progress.rounds
                )
            except AnswerLater as later:  # the answer comes later: say where to go on from
                later.state = LoopState(
                    tuple(cast(list[TranscriptMessage], messages)),
                    progress.rounds,
                    failed_rounds,
                    tracker.usage,
                    answers.rejected if answers is not None else 0,
                    tuple(thoughts),
                    tuple(invocations),
                    tracker.price_tag,
                )
                raise
            progress.phase = "response"
            _note_thinking(session, client, name, progress.rounds, response, thoughts)
            if response.finish_reason == "paused":  # a long turn, stopped part-way: it goes
                messages.append(echo_turn(response))  # back unchanged and the model goes on
                if sink is not None:
                    await sink.send([_finished(progress.rounds, response, 0)])
                continue
            calls, answer = split_output_call(response, rendered.output)
            if response.finish_reason == "error" or (not calls and answer is None):
                check_finished(client, response, rendered.output_type, name)
                reply: Message | None = None
                if answers is not None:
                    output, rejected = answers.parse_text(response.text or "")
                    if rejected is not None:
                        reply = _reject(session, client, progress.rounds, answers, rejected, sink)
                if sink is not None:
                    await sink.send([_finished(progress.rounds, response, 0)])
                if reply is None:
                    final_text = response.text
                    messages.append(echo_turn(response))  # the answer ends the transcript
                    break
                if response.text:  # the answer stays in the transcript, the reply follows
                    messages.append(echo_turn(response))
                messages.append(reply)
                continue
            reply = None
            if answer is not None and answers is not None:
                output, rejected = answers.parse_call(answer)
                if rejected is not None:  # past the limit, the turn's other calls do not run
                    reply = _reject(session, client, progress.rounds, answers, rejected, sink)
            messages.append(echo_turn(response))
            progress.phase = "tool"
            executor.adapter = client.name  # the adapter that served this round (fallback)
            held = held_calls(executor, calls)
            if held:
                calls = tuple(call for call in calls if call not in held)
            if not calls:
                executions = []
            elif sink is None:
                executions = await executor.execute(calls)
            else:
                executions = await executor.execute(calls, lambda event: sink.put([event]))
            if sink is not None:
                await sink.send([_finished(progress.rounds, response, len(response.tool_calls))])
            messages.extend(execution.to_message() for execution in executions)
            invocations.extend(session[ToolInvoked][-len(executions) :] if executions else ())
            if held:  # the evaluation waits for a person (docs/approvals.md)
                if answer is not None:  # not final before the held calls have results
                    held_answer = ToolResultMessage(answer.id, answer.name, ANSWER_HELD)
                    messages.append(reply or held_answer)
                pending = _stop_for_approval(session, client, name, progress.rounds, held, sink)
                final_text, output = response.text, None
                break
            if answer is not None and reply is None:
                # The structured answer, given through its tool: the evaluation ends here;
                # the calls beside it in the same turn have run (nothing is dropped).
                messages.append(ToolResultMessage(answer.id, answer.name, ANSWER_TAKEN))
                final_text = answer.arguments_json()
                response = replace(response, finish_reason="stop")
                break
            if reply is not None:
                messages.append(reply)
            if executions:  # a rejected answer alone is counted by max_output_retries
                failed_rounds = failed_rounds + 1 if _all_failed(executions) else 0
            failed_limit = settings.max_failed_tool_rounds
            if failed_limit is not None and failed_rounds >= failed_limit:
                last = executions[-1].result.message
                raise PromptEvaluationError(
                    f"{failed_rounds} consecutive tool rounds failed; last failure: {last}",
                    prompt_name=name,
                    phase="tool",
                )
    result: PromptResponse[OutputT] = PromptResponse(
        prompt_name=name,
        text=final_text,
        output=output,
        usage=tracker.usage,
        finish_reason=response.finish_reason,
        rounds=progress.rounds,
        tool_invocations=tuple(invocations),
        thinking="\n\n".join(thoughts) if thoughts else None,
        transcript=Transcript(cast(list[TranscriptMessage], messages)),
        pending=pending,
        model=response.model,
        price_tag=tracker.price_tag,
    )
    executed = PromptExecuted(
        prompt_name=name,
        adapter=client.name,
        text=final_text,
        output=output,
        usage=tracker.usage,
        rounds=progress.rounds,
        thinking=result.thinking,
        price_tag=result.price_tag,
    )
    publish(session, executed)
    return result


def _finished(round_number: int, response: ModelResponse, calls: int) -> RoundFinished:
    return RoundFinished(
        round_number, response.finish_reason, response.usage, calls, response.price_tag
    )


def _shown(sink: EventSink | None) -> Callable[[ToolInvoked], None] | None:
    """What hands each tool's `ToolInvoked` to the stream as it finishes (None: no stream)."""
    if sink is None:
        return None
    return lambda event: sink.put([event])


def _stop_for_approval(
    session: Session,
    client: ModelClient,
    name: str,
    round_number: int,
    held: list[ToolCall],
    sink: EventSink | None,
) -> tuple[PendingToolCall, ...]:
    """Record that the evaluation stops for a person; the calls that wait."""
    waiting = tuple(pending_call(call) for call in held)
    event = ApprovalRequired(
        prompt_name=name, adapter=client.name, round=round_number, calls=waiting
    )
    publish(session, event)
    if sink is not None:
        sink.put([event])
    return waiting


def _first_turn(
    text: str, parts: tuple[UserPart, ...], attachments: tuple[Attachment, ...]
) -> UserMessage:
    """The rendered prompt, then the call's attachments; a text turn when that is all."""
    if not attachments and all(isinstance(part, TextPart) for part in parts):
        return UserMessage(text)
    return UserMessage((*parts, *attachments))


def publish(session: Session, event: object) -> None:
    """An event of this evaluation: on its trace (if traced), then in the session."""
    trace = current_trace()
    if trace is not None:
        trace.record(event)
    session.dispatch(event)


def _note_thinking(
    session: Session,
    client: ModelClient,
    name: str,
    round_number: int,
    response: ModelResponse,
    thoughts: list[str],
) -> None:
    """Readable thinking goes to the session as it arrives, and into the final answer."""
    text = response.thinking_text
    if text is None:
        return
    thoughts.append(text)
    session.dispatch(
        ThinkingReceived(prompt_name=name, adapter=client.name, round=round_number, text=text)
    )


def _reject(
    session: Session,
    client: ModelClient,
    round_number: int,
    answers: StructuredAnswers,
    rejected: Rejection,
    sink: EventSink | None,
) -> Message:
    """Record a structured answer that did not validate (session, trace, stream); raise
    past `max_output_retries`, else return what the model reads next."""
    event = OutputRejected(
        prompt_name=answers.prompt_name,
        adapter=client.name,
        round=round_number,
        attempt=rejected.attempt,
        via=rejected.via,
        answer=rejected.answer,
        problems=rejected.problems,
        error=rejected.error,
    )
    publish(session, event)
    if sink is not None:
        sink.put([event])
    if answers.exhausted(rejected):
        payload = client.redact(rejected.payload())
        raise answers.failure(rejected, payload) from rejected.error
    return answers.reply(rejected)


async def _request(
    client: ModelClient,
    request: ModelRequest,
    settings: LoopSettings,
    tracker: BudgetTracker,
    deadline: Deadline | None,
    session: Session,
    sink: EventSink | None,
    round_number: int,
) -> ModelResponse:
    if deadline is not None:
        deadline.check(prompt_name=request.prompt_name, step="the provider request")
    tracker.before_request()
    seen = sink.count if sink is not None else 0  # events yielded before this attempt

    def on_retry(error: ThrottleError, wait: float) -> None:
        nonlocal seen
        if sink is not None and sink.count != seen:
            # The failed attempt was partly yielded: the caller must drop it.
            sink.put([RoundRestarted(round_number, error.details.attempts + 1, error)])
            seen = sink.count
        record_retry(session, request.prompt_name, client.name, error, wait)

    try:
        if sink is None:
            response = await settings.retry_policy.call(
                lambda: client.request(request), deadline=deadline, on_retry=on_retry
            )
        else:
            response = await settings.retry_policy.call(
                lambda: client.stream(request, sink), deadline=deadline, on_retry=on_retry
            )
    except ThrottleError as error:
        # A request cut short by the deadline is the deadline's failure, not the provider's.
        if deadline is not None and deadline.expired():
            raise DeadlineExceededError(
                f"deadline passed during the provider request ({error.details.kind})",
                prompt_name=request.prompt_name,
            ) from error
        raise
    tracker.record(response.usage + _ONE_REQUEST, response.price_tag)
    return response


def record_retry(
    session: Session, prompt_name: str, adapter: str, error: ThrottleError, wait: float
) -> None:
    """Record that `adapter` will retry after `wait` seconds (session and trace)."""
    event = RequestRetried(
        prompt_name=prompt_name,
        adapter=adapter,
        kind=error.details.kind,
        attempt=error.details.attempts,
        wait=timedelta(seconds=wait),
        status_code=error.details.status_code,
    )
    publish(session, event)


def _all_failed(executions: Sequence[ToolExecution]) -> bool:
    return all(not execution.result.success for execution in executions)
