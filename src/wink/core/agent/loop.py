"""THE evaluation loop, written once for every provider.

render -> request -> parse -> execute tool calls (failures included) -> repeat until a
final answer -> parse structured output (an answer that does not validate goes back to
the model: `wink.core.agent.answers`) -> `PromptResponse`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, cast

from ..foundation.builtin import BuiltinTool, Citation, merge_builtin_tools
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
    RoundFinished,
    ThinkingReceived,
    ToolInvoked,
)
from ..foundation.limits import (
    DEFAULT_MAX_OUTPUT_RETRIES,
    DEFAULT_MAX_ROUNDS,
    Budget,
    BudgetTracker,
    Deadline,
)
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
    output_tool_spec,
)
from ..foundation.transcript import PendingToolCall, Transcript, TranscriptMessage, pending_call
from ..prompting.prompt import OutputT, Prompt, RenderedPrompt
from ..prompting.session import Session
from ..prompting.sources import offered_tools
from ..prompting.tools import Tool
from ..telemetry.spans import Telemetry, current_trace, traced_evaluation
from ..throttling.retry import RetryPolicy
from .answers import Rejection, StructuredAnswers
from .conversation import ANSWER_HELD, ANSWER_TAKEN, Approvals, held_calls, in_call_order, resume
from .deferred import AnswerLater, LoopState
from .executor import ToolExecution, ToolExecutor
from .partials import PartialOutputs
from .rounds import NULL_SINK, NullSink, RoundAttempts, publish, record_retry
from .turns import check_finished, check_not_empty, echo_turn, split_output_call

__all__ = [
    "DEFAULT_MAX_OUTPUT_RETRIES",
    "DEFAULT_MAX_ROUNDS",
    "LoopSettings",
    "ModelClient",
    "PromptResponse",
    "first_request",
    "publish",
    "record_retry",
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


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """How one evaluation behaves; adapters fill it from their options and the call's."""

    retry_policy: RetryPolicy
    graceful_tool_errors: bool = True
    max_failed_tool_rounds: int | None = 8
    max_rounds: int | None = DEFAULT_MAX_ROUNDS
    max_output_retries: int | None = DEFAULT_MAX_OUTPUT_RETRIES  # see wink.core.agent.answers
    telemetry: Telemetry | None = None  # spans (wink.core.telemetry.spans); None: no tracing
    builtin_tools: tuple[BuiltinTool, ...] = ()  # the call's, over the prompt's of each kind


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

    `citations` are the sources the final answer relies on, where the provider gave them
    (docs/builtin-tools.md); their `span`s index `text`.
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
    citations: tuple[Citation, ...] = ()
    model: str | None = None
    price_tag: PriceTag | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> Cost | None:
        tag = self.price_tag
        return tag.cost if tag is not None else None


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
    tracker = BudgetTracker(budget, prompt_name=prompt.name)
    shown = sink if sink is not None else NULL_SINK
    evaluation = _Evaluation(client, prompt, session, settings, deadline, tracker, shown)
    with traced_evaluation(settings.telemetry, prompt.name, client):
        try:
            return await evaluation.run(attachments, history, approvals or {}, resume)
        except AnswerLater:  # stopped to wait for the answer: not a failure
            raise
        except WinkError as error:
            evaluation.record_failure(error)
            raise
        except Exception as error:
            phase = evaluation.phase
            failure = PromptEvaluationError(
                f"unexpected {type(error).__name__} during the {phase} phase: {error}",
                prompt_name=prompt.name,
                phase=phase,
            )
            evaluation.record_failure(failure)
            raise failure from error


class _Evaluation(Generic[OutputT]):
    """One evaluation, step by step: `run` calls one method per step, and the attributes
    say where the evaluation is (`phase` and `rounds`: a failure is reported in the phase
    it happened in). The sink is `NULL_SINK` when nobody streams."""

    rendered: RenderedPrompt  # set by `_render`, with what it implies:
    specs: tuple[ToolSpec, ...]
    system: tuple[SystemMessage, ...]
    answers: StructuredAnswers | None  # None: the prompt asks for no structured output

    def __init__(
        self,
        client: ModelClient,
        prompt: Prompt[OutputT],
        session: Session,
        settings: LoopSettings,
        deadline: Deadline | None,
        tracker: BudgetTracker,
        sink: EventSink | NullSink,
    ) -> None:
        self.client = client
        self.prompt = prompt
        self.name = prompt.name
        self.session = session
        self.settings = settings
        self.deadline = deadline
        self.tracker = tracker
        self.sink = sink
        self.phase: EvaluationPhase = "request"
        self.rounds = 0
        self.failed_rounds = 0  # consecutive tool rounds whose every call failed
        self.messages: list[Message] = []
        self.invocations: list[ToolInvoked] = []
        self.thoughts: list[str] = []
        self.output: Any = None
        self.final_text: str | None = None
        self.pending: tuple[PendingToolCall, ...] = ()

    async def run(
        self,
        attachments: tuple[Attachment, ...],
        history: Transcript | None,
        approvals: Approvals,
        state: LoopState | None,
    ) -> PromptResponse[OutputT]:
        tools = await self._render(state)
        output = self.rendered.output
        if self.answers is not None and output is not None and not isinstance(self.sink, NullSink):
            tool = output_tool_spec(output).name  # a stream shows the answer as it grows
            self.sink = PartialOutputs(self.sink, self.answers.output_type, tool)
        resuming = history is not None and bool(history.pending)
        self._start(attachments, history, state, resuming)
        with self.prompt.resources.open_scope() as scope:
            executor = ToolExecutor(
                {tool.name: tool for tool in tools},
                session=self.session,
                resources=scope,
                prompt_name=self.name,
                adapter=self.client.name,
                deadline=self.deadline,
                graceful_default=self.settings.graceful_tool_errors,
            )
            if resuming and history is not None:
                await self._answer_approvals(executor, history, approvals)
            while True:
                response = await self._request_round()
                finished = await self._handle(response, executor)
                if finished is not None:
                    break
        return self._finish(finished)

    # ---- the steps

    async def _render(self, state: LoopState | None) -> tuple[Tool[Any, Any], ...]:
        """Render the prompt and list its tools (a resumed evaluation was rendered, and
        told the session so, when it started)."""
        rendered = self.rendered = self.prompt.render(session=self.session)
        tools = await offered_tools(
            rendered.tools, rendered.tool_sources, deadline=self.deadline, prompt_name=self.name
        )
        if state is None:
            self.session.dispatch(
                PromptRendered(
                    prompt_name=self.name,
                    adapter=self.client.name,
                    text=rendered.text,
                    tool_names=tuple(tool.name for tool in tools),
                )
            )
        self.specs = _specs(tools)
        self.system = _system(rendered)
        self.answers = (
            StructuredAnswers(rendered.output_type, self.settings.max_output_retries, self.name)
            if rendered.output_type is not None
            else None
        )
        return tools

    def _start(
        self,
        attachments: tuple[Attachment, ...],
        history: Transcript | None,
        state: LoopState | None,
        resuming: bool,
    ) -> None:
        """The conversation the first request sends: the history, then the rendered
        prompt (unless a person's answers are the next turn); or, resumed, where the
        evaluation stopped to wait for an answer, with its counters."""
        if state is not None:
            self.messages = list(state.messages)
            self.rounds = state.round - 1
            self.tracker.resume(state.usage, state.price_tag)
            self.invocations, self.thoughts = list(state.invocations), list(state.thoughts)
            self.failed_rounds = state.failed_rounds
            if self.answers is not None:
                self.answers.rejected = state.rejected
            return
        self.messages = list(history) if history is not None else []
        if not resuming:
            rendered = self.rendered
            self.messages.append(_first_turn(rendered.text, rendered.parts, attachments))

    async def _answer_approvals(
        self, executor: ToolExecutor, history: Transcript, approvals: Approvals
    ) -> None:
        """The person's answers to the calls the history waits on are the next turn."""
        self.phase = "tool"
        answered = await resume(executor, history, approvals, self._show)
        self.messages.extend(execution.to_message() for execution in answered)
        in_call_order(self.messages)
        self.invocations.extend(self.session[ToolInvoked][-len(answered) :] if answered else ())

    def _check_limits(self) -> None:
        """Before each request: the round limit, the deadline, the budget."""
        limit = self.settings.max_rounds
        if limit is not None and self.rounds > limit:
            raise PromptEvaluationError(
                f"no final answer after {limit} rounds (max_rounds={limit}); the model "
                "kept calling tools",
                prompt_name=self.name,
                phase="budget",
            )
        if self.deadline is not None:
            self.deadline.check(prompt_name=self.name, step="the provider request")
        self.tracker.before_request()

    async def _request_round(self) -> ModelResponse:
        """The next round's request, under the retry policy; its usage counted."""
        self.rounds += 1
        self.phase = "request"
        self._check_limits()
        request = ModelRequest(
            self.name,
            (*self.system, *self.messages),
            self.specs,
            self.rendered.output,
            deadline=self.deadline,
            first_round=self.rounds == 1,
            builtin_tools=merge_builtin_tools(
                self.rendered.builtin_tools, self.settings.builtin_tools
            ),
        )
        attempts = RoundAttempts(self.session, self.sink, self.rounds)
        client = self.client
        try:
            response = await attempts.send(client, request, self.settings.retry_policy, client.name)
        except AnswerLater as later:  # the answer comes later: say where to go on from
            later.state = self._state()
            raise
        except ThrottleError as error:
            # A request cut short by the deadline is the deadline's failure, not the provider's.
            if self.deadline is not None and self.deadline.expired():
                raise DeadlineExceededError(
                    f"deadline passed during the provider request ({error.details.kind})",
                    prompt_name=self.name,
                ) from error
            raise
        self.tracker.record(response.usage + _ONE_REQUEST, response.price_tag)
        return response

    async def _handle(
        self, response: ModelResponse, executor: ToolExecutor
    ) -> ModelResponse | None:
        """Take the model's answer; the final response when it ends the evaluation."""
        self.phase = "response"
        self._note_thinking(response)
        if response.finish_reason == "paused":  # a long turn, stopped part-way: it goes
            self.messages.append(echo_turn(response))  # back unchanged and the model goes on
            await self._round_finished(response, 0)
            return None
        calls, answer = split_output_call(response, self.rendered.output)
        if response.finish_reason == "error" or (not calls and answer is None):
            return await self._final_turn(response)
        return await self._tool_turn(response, calls, answer, executor)

    async def _final_turn(self, response: ModelResponse) -> ModelResponse | None:
        """A turn without calls: the answer, unless it is no answer at all (raised) or a
        structured answer that did not validate (the model reads why and goes on)."""
        check_finished(self.client, response, self.rendered.output_type, self.name)
        reply: Message | None = None
        answers = self.answers
        if answers is not None:
            self.output, rejected = answers.parse_text(response.text or "")
            if rejected is not None:
                reply = self._reject(answers, rejected)
        await self._round_finished(response, 0)
        if reply is None:
            self.final_text = response.text
            self.messages.append(echo_turn(response))  # the answer ends the transcript
            return response
        if response.text:  # the answer stays in the transcript, the reply follows
            self.messages.append(echo_turn(response))
        self.messages.append(reply)
        return None

    async def _tool_turn(
        self,
        response: ModelResponse,
        calls: tuple[ToolCall, ...],
        answer: ToolCall | None,
        executor: ToolExecutor,
    ) -> ModelResponse | None:
        """A turn with calls: the final response when it gave the structured answer or
        stops for approval; else the model reads the results and goes on."""
        reply: Message | None = None
        answers = self.answers
        if answer is not None and answers is not None:
            self.output, rejected = answers.parse_call(answer)
            if rejected is not None:  # past the limit, the turn's other calls do not run
                reply = self._reject(answers, rejected)
        self.messages.append(echo_turn(response))
        executions, held = await self._run_tools(response, calls, executor)
        if held:  # the evaluation waits for a person (docs/approvals.md)
            return self._stop_for_approval(response, held, answer, reply)
        if answer is not None and reply is None:
            # The structured answer, given through its tool: the evaluation ends here;
            # the calls beside it in the same turn have run (nothing is dropped).
            self.messages.append(ToolResultMessage(answer.id, answer.name, ANSWER_TAKEN))
            self.final_text = answer.arguments_json()
            return replace(response, finish_reason="stop")
        if reply is not None:
            self.messages.append(reply)
        self._count_failures(executions)
        return None

    async def _run_tools(
        self, response: ModelResponse, calls: tuple[ToolCall, ...], executor: ToolExecutor
    ) -> tuple[list[ToolExecution], list[ToolCall]]:
        """Run the turn's calls, but those that wait for a person (returned apart), and
        put their results in the conversation."""
        self.phase = "tool"
        executor.adapter = self.client.name  # the adapter that served this round (fallback)
        held = held_calls(executor, calls)
        if held:
            calls = tuple(call for call in calls if call not in held)
        executions = await executor.execute(calls, self._show) if calls else []
        await self._round_finished(response, len(response.tool_calls))
        self.messages.extend(execution.to_message() for execution in executions)
        self.invocations.extend(self.session[ToolInvoked][-len(executions) :] if executions else ())
        return executions, held

    def _count_failures(self, executions: Sequence[ToolExecution]) -> None:
        """Raise after `max_failed_tool_rounds` consecutive rounds whose every call failed."""
        if executions:  # a rejected answer alone is counted by max_output_retries
            failed = all(not execution.result.success for execution in executions)
            self.failed_rounds = self.failed_rounds + 1 if failed else 0
        limit = self.settings.max_failed_tool_rounds
        if limit is not None and self.failed_rounds >= limit:
            last = executions[-1].result.message
            raise PromptEvaluationError(
                f"{self.failed_rounds} consecutive tool rounds failed; last failure: {last}",
                prompt_name=self.name,
                phase="tool",
            )

    def _finish(self, response: ModelResponse) -> PromptResponse[OutputT]:
        """The final answer, told to the session."""
        thinking = "\n\n".join(self.thoughts) if self.thoughts else None
        result: PromptResponse[OutputT] = PromptResponse(
            prompt_name=self.name,
            text=self.final_text,
            output=self.output,
            usage=self.tracker.usage,
            finish_reason=response.finish_reason,
            rounds=self.rounds,
            tool_invocations=tuple(self.invocations),
            thinking=thinking,
            transcript=Transcript(cast(list[TranscriptMessage], self.messages)),
            pending=self.pending,
            model=response.model,
            price_tag=self.tracker.price_tag,
            citations=response.citations,
        )
        executed = PromptExecuted(
            prompt_name=self.name,
            adapter=self.client.name,
            text=self.final_text,
            output=self.output,
            usage=self.tracker.usage,
            rounds=self.rounds,
            thinking=thinking,
            price_tag=self.tracker.price_tag,
        )
        publish(self.session, executed)
        return result

    def record_failure(self, failure: WinkError) -> None:
        """Tell the session (and the trace) the evaluation failed."""
        phase = failure.phase if isinstance(failure, PromptEvaluationError) else None
        event = PromptFailed(
            prompt_name=self.name,
            adapter=self.client.name,
            phase=phase,
            error=failure,
            rounds=self.rounds,
            usage=self.tracker.usage,
            price_tag=self.tracker.price_tag,
        )
        trace = current_trace()
        if trace is not None:
            trace.record(event)
        with contextlib.suppress(Exception):  # a failing reducer must not mask the failure
            self.session.dispatch(event)

    # ---- what the steps tell the session and the stream

    def _state(self) -> LoopState:
        """Where the evaluation stopped, before the request whose answer comes later."""
        return LoopState(
            tuple(cast(list[TranscriptMessage], self.messages)),
            self.rounds,
            self.failed_rounds,
            self.tracker.usage,
            self.answers.rejected if self.answers is not None else 0,
            tuple(self.thoughts),
            tuple(self.invocations),
            self.tracker.price_tag,
        )

    def _show(self, event: ToolInvoked) -> None:
        """A tool's `ToolInvoked`, to the stream as the tool finishes."""
        self.sink.put([event])

    async def _round_finished(self, response: ModelResponse, tool_calls: int) -> None:
        finished = RoundFinished(
            self.rounds, response.finish_reason, response.usage, tool_calls, response.price_tag
        )
        await self.sink.send([finished])

    def _note_thinking(self, response: ModelResponse) -> None:
        """Readable thinking goes to the session as it arrives, and into the final answer."""
        text = response.thinking_text
        if text is None:
            return
        self.thoughts.append(text)
        event = ThinkingReceived(
            prompt_name=self.name, adapter=self.client.name, round=self.rounds, text=text
        )
        self.session.dispatch(event)

    def _stop_for_approval(
        self,
        response: ModelResponse,
        held: list[ToolCall],
        answer: ToolCall | None,
        reply: Message | None,
    ) -> ModelResponse:
        """Stop for a person: the calls that wait are recorded (session, trace, stream)
        and are the response's `pending`."""
        if answer is not None:  # not final before the held calls have results
            self.messages.append(reply or ToolResultMessage(answer.id, answer.name, ANSWER_HELD))
        self.pending = tuple(pending_call(call) for call in held)
        event = ApprovalRequired(
            prompt_name=self.name, adapter=self.client.name, round=self.rounds, calls=self.pending
        )
        publish(self.session, event)
        self.sink.put([event])
        self.final_text, self.output = response.text, None
        return response

    def _reject(self, answers: StructuredAnswers, rejected: Rejection) -> Message:
        """Record a structured answer that did not validate (session, trace, stream); raise
        past `max_output_retries`, else return what the model reads next."""
        event = OutputRejected(
            prompt_name=answers.prompt_name,
            adapter=self.client.name,
            round=self.rounds,
            attempt=rejected.attempt,
            via=rejected.via,
            answer=rejected.answer,
            problems=rejected.problems,
            error=rejected.error,
        )
        publish(self.session, event)
        self.sink.put([event])
        if answers.exhausted(rejected):
            payload = self.client.redact(rejected.payload())
            raise answers.failure(rejected, payload) from rejected.error
        return answers.reply(rejected)


async def first_request(
    prompt: Prompt[Any],
    *,
    session: Session,
    attachments: tuple[Attachment, ...] = (),
    history: Transcript | None = None,
    builtin_tools: tuple[BuiltinTool, ...] = (),
) -> ModelRequest:
    """The first request `run_evaluation` sends for the same arguments (what a token count
    counts): rendered, its tools listed and its turn built as the evaluation does, without
    telling the session. `history` ends in no pending call (`check_continuation`);
    `builtin_tools` are the call's, over the prompt's."""
    rendered = prompt.render(session=session)
    tools = await offered_tools(
        rendered.tools, rendered.tool_sources, deadline=None, prompt_name=prompt.name
    )
    messages: list[Message] = list(history) if history is not None else []
    messages.append(_first_turn(rendered.text, rendered.parts, attachments))
    return ModelRequest(
        prompt.name,
        (*_system(rendered), *messages),
        _specs(tools),
        rendered.output,
        first_round=True,
        builtin_tools=merge_builtin_tools(rendered.builtin_tools, builtin_tools),
    )


def _specs(tools: Sequence[Tool[Any, Any]]) -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec(tool.name, tool.description, tool.parameters_schema) for tool in tools)


def _system(rendered: RenderedPrompt) -> tuple[SystemMessage, ...]:
    return (SystemMessage(rendered.instructions),) if rendered.instructions else ()


def _first_turn(
    text: str, parts: tuple[UserPart, ...], attachments: tuple[Attachment, ...]
) -> UserMessage:
    """The rendered prompt, then the call's attachments; a text turn when that is all."""
    check_not_empty(text, parts, attachments)
    if not attachments and all(isinstance(part, TextPart) for part in parts):
        return UserMessage(text)
    return UserMessage((*parts, *attachments))
