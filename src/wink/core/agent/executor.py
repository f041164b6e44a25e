"""Runs the model's tool calls. A tool's failure becomes a `ToolResult`, never an exception.

What still raises, on purpose: a tool declared `graceful=False` (as
`PromptEvaluationError(phase="tool")`), the evaluation's deadline, a failed rollback, and
`VisibilityExpansionRequired` (a request to the caller, not a failure).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ..foundation.errors import (
    DeadlineExceededError,
    InvalidArgumentError,
    PromptEvaluationError,
    ToolValidationError,
    UnsendableValueError,
    VisibilityExpansionRequired,
)
from ..foundation.events import ToolInvoked
from ..foundation.limits import Deadline
from ..foundation.messages import ToolCall, ToolResultMessage
from ..foundation.results import ErrorCode, ToolResult
from ..foundation.runtime import run_in_thread
from ..prompting.resources import ResourceScope
from ..prompting.session import Session, Snapshot
from ..prompting.tools import Tool, ToolContext
from ..telemetry.spans import current_trace

__all__ = [
    "ToolExecution",
    "ToolExecutor",
    "format_validation_error",
    "render_tool_result",
    "wire_safe_call",
]

logger = logging.getLogger("wink.tools")

# Exceptions that are the caller's business, not the tool's: they leave the executor.
_PASS_THROUGH = (VisibilityExpansionRequired, DeadlineExceededError)


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """One executed call: what the model sent, what it gets back, and what went wrong.

    `content` is the rendered text when the executor already produced it (so a large
    value is serialised once); otherwise `to_message` renders `result`.
    """

    call: ToolCall
    result: ToolResult[Any]
    params: Any
    error: BaseException | None
    duration: float
    content: str | None = field(default=None, repr=False)

    def to_message(self) -> ToolResultMessage:
        return ToolResultMessage(
            call_id=self.call.id,
            name=self.call.name,
            content=self.content if self.content is not None else render_tool_result(self.result),
            success=self.result.success,
            attachments=self.result.parts(),
        )


def render_tool_result(result: ToolResult[Any]) -> str:
    """The text the model reads: the message, plus the value as JSON unless excluded (a
    value that is an image, a document or an audio, or a list of them, goes as parts:
    `ToolResult.parts`).

    A pydantic `BaseModel` value is sent as its own JSON (`model_dump(mode="json")`: its
    serializers, excluded fields and alias settings apply). Raises `UnsendableValueError`
    for a value pydantic cannot serialise (an `object()`, a socket, a set of such):
    sending its `repr` would hand the model a meaningless `<object at 0x...>`; the
    executor turns that into a failed result instead. Lone surrogates, which no provider
    can receive, become U+FFFD.
    """
    if not result.success or result.value is None or result.exclude_value_from_context:
        return _scrub_surrogates(result.message)
    value = result.value
    if len(result.parts()) > len(result.attachments):  # the value is sent as parts
        return _scrub_surrogates(result.message)
    try:
        plain = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        payload = json.dumps(to_jsonable_python(plain), ensure_ascii=False)
    except (ValueError, TypeError, RecursionError) as error:
        raise UnsendableValueError(
            f"{type(value).__name__} is not JSON-serialisable ({error})"
        ) from error
    text = f"{result.message}\n{payload}" if result.message else payload
    return _scrub_surrogates(text)


def format_validation_error(error: ValidationError, *, whole: str = "arguments") -> str:
    """One part per failing field: `field: why`, so the model can fix exactly that.

    `whole` names what failed when the failure is not one field's (JSON that does not
    parse, a value of the wrong type altogether).
    """
    parts: list[str] = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"]) or whole
        parts.append(f"{location}: {item['msg']}")
    return "; ".join(parts)


class ToolExecutor:
    """Executes the calls of one model turn against the prompt's tools."""

    def __init__(
        self,
        tools: Mapping[str, Tool[Any, Any]],
        *,
        session: Session,
        resources: ResourceScope,
        prompt_name: str,
        adapter: str = "",
        deadline: Deadline | None = None,
        graceful_default: bool = True,
    ) -> None:
        self.tools = tools
        self.session = session
        self.resources = resources
        self.prompt_name = prompt_name
        self.adapter = adapter
        self.deadline = deadline
        self.graceful_default = graceful_default
        self._transactions: list[tuple[Snapshot, object]] = []  # the current round's

    async def execute(
        self,
        calls: Sequence[ToolCall],
        on_finished: Callable[[ToolInvoked], None] | None = None,
    ) -> list[ToolExecution]:
        """Run `calls` (concurrently when there are several) and record a `ToolInvoked` each.

        The session gets the `ToolInvoked` events in call order once all calls are done;
        `on_finished` gets each as its call finishes (a stream shows it at once). A round
        cut short (an exception or a cancellation leaves this method) leaves no trace:
        what every tool of the round changed in the session is rolled back.
        """
        self._transactions = []
        try:
            if len(calls) == 1:
                done = [await self._run_reported(calls[0], on_finished)]
            else:
                gathered = await asyncio.gather(
                    *(self._run_reported(call, on_finished) for call in calls),
                    return_exceptions=True,
                )
                for outcome in gathered:
                    if isinstance(outcome, BaseException):
                        raise outcome
                done = cast(list[tuple[ToolExecution, ToolInvoked]], gathered)
        except BaseException:
            self._roll_back_round()
            raise
        for _, event in done:
            self.session.dispatch(event)
        return [execution for execution, _ in done]

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether `call` must wait for a person (its tool asks, for these arguments). A
        call that cannot run (an unknown tool, invalid arguments) never waits: it fails
        as any such call does, and the model reads why."""
        tool = self.tools.get(call.name)
        if tool is None or tool.requires_approval is False:
            return False
        parsed = self._parse(tool, call)
        return not isinstance(parsed, ToolValidationError) and tool.needs_approval(parsed)

    def settle(
        self,
        answers: Sequence[tuple[ToolCall, ToolResult[Any]]],
        on_finished: Callable[[ToolInvoked], None] | None = None,
    ) -> list[ToolExecution]:
        """Calls a person answered without running them (a denial, or a result of their
        own), recorded as ran calls are: a `ToolInvoked` each, in the session and (as each
        is ready) to `on_finished`. A result whose value cannot be sent is refused."""
        done: list[ToolExecution] = []
        for call, result in answers:
            try:
                content = render_tool_result(result)
            except UnsendableValueError as error:
                raise InvalidArgumentError(
                    f"the ToolResult given for call {call.id!r} cannot be sent to the model: "
                    f"{error}",
                    argument="approvals",
                ) from error
            tool = self.tools.get(call.name)
            parsed = self._parse(tool, call) if tool is not None else None
            params = call.arguments if parsed is None or isinstance(parsed, Exception) else parsed
            execution = ToolExecution(call, result, params, None, 0.0, content)
            event = ToolInvoked(
                prompt_name=self.prompt_name,
                adapter=self.adapter,
                name=call.name,
                call_id=call.id,
                params=params,
                result=result,
            )
            self.session.dispatch(event)
            if on_finished is not None:
                on_finished(event)
            done.append(execution)
        return done

    async def _run_reported(
        self, call: ToolCall, on_finished: Callable[[ToolInvoked], None] | None
    ) -> tuple[ToolExecution, ToolInvoked]:
        tool = self.tools.get(call.name)
        source = tool.source if tool is not None else None
        trace = current_trace()
        if trace is None:
            execution = await self._run(call)
        else:  # one span per tool execution
            span = trace.start_tool(call, source=source)
            try:
                execution = await self._run(call)
            except BaseException as error:
                trace.failed(span, error)
                raise
            trace.tool_finished(span, execution)
        event = ToolInvoked(
            prompt_name=self.prompt_name,
            adapter=self.adapter,
            name=execution.call.name,
            call_id=execution.call.id,
            params=execution.params,
            result=execution.result,
            error=execution.error,
            duration=execution.duration,
            source=source,
        )
        if on_finished is not None:
            on_finished(event)
        return execution, event

    def _roll_back_round(self) -> None:
        """Undo every tool transaction of the round, latest first. A rollback that fails
        is logged, not raised: it must not replace the failure (or the cancellation)
        that cut the round short."""
        for snapshot, key in reversed(self._transactions):
            try:
                self.session.rollback(snapshot, key)
            except Exception:
                logger.exception("rolling back a tool of a round cut short failed")
        self._transactions = []

    async def _run(self, call: ToolCall) -> ToolExecution:
        started = time.perf_counter()
        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "none"
            return self._failed(
                call,
                call.arguments,
                f"Unknown tool '{call.name}'. Available tools: {available}.",
                "not_found",
                None,
                started,
            )
        parsed = self._parse(tool, call)
        if isinstance(parsed, ToolValidationError):
            return self._failed(call, call.arguments, str(parsed), "invalid_input", parsed, started)
        if self.deadline is not None:
            self.deadline.check(prompt_name=self.prompt_name, step=f"tool '{call.name}'")
        return await self._invoke(tool, call, parsed, started=started)

    def _parse(self, tool: Tool[Any, Any], call: ToolCall) -> Any:
        arguments: Any = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = _strict_loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as error:
                failure = ToolValidationError(
                    f"Arguments for '{call.name}' are not valid JSON ({error.msg} at "
                    f"position {error.pos}). Send a JSON object matching the tool's schema.",
                    tool_name=call.name,
                )
                failure.__cause__ = error
                return failure
            except _NonFiniteNumber as error:
                failure = ToolValidationError(
                    f"Arguments for '{call.name}' are not strict JSON: {error}. "
                    "Send finite numbers (or null).",
                    tool_name=call.name,
                )
                failure.__cause__ = error
                return failure
        problem = _wire_problem(arguments, "")
        if problem is not None:
            return ToolValidationError(
                f"Arguments for '{call.name}' cannot be sent back as JSON: {problem}.",
                tool_name=call.name,
            )
        if not isinstance(arguments, Mapping):
            return ToolValidationError(
                f"Arguments for '{call.name}' must be a JSON object, got "
                f"{type(arguments).__name__}.",
                tool_name=call.name,
            )
        try:
            return tool.params_adapter.validate_python(arguments)
        except ValidationError as error:
            failure = ToolValidationError(
                f"Invalid arguments for '{call.name}': {format_validation_error(error)}",
                tool_name=call.name,
            )
            failure.__cause__ = error
            return failure

    async def _invoke(
        self, tool: Tool[Any, Any], call: ToolCall, params: Any, *, started: float
    ) -> ToolExecution:
        graceful = tool.graceful if tool.graceful is not None else self.graceful_default
        key = object()
        with self.session.transaction(key) as snapshot, self.resources.child("tool_call") as scope:
            self._transactions.append((snapshot, key))
            context = ToolContext(
                session=self.session,
                resources=scope,
                prompt_name=self.prompt_name,
                call_id=call.id,
                tool_name=call.name,
                deadline=self.deadline,
                adapter=self.adapter,
            )
            try:
                result = await self._call_handler(tool, params, context)
            except _PASS_THROUGH:
                self.session.rollback(snapshot, key)
                raise
            except Exception as error:
                self.session.rollback(snapshot, key)
                if not graceful:
                    raise PromptEvaluationError(
                        f"tool '{call.name}' raised {type(error).__name__}: {error}",
                        prompt_name=self.prompt_name,
                        phase="tool",
                    ) from error
                message = f"{type(error).__name__}: {error}"
                return self._failed(
                    call, params, message, "internal_error", error, started, bug=tool
                )
        if not isinstance(result, ToolResult):
            self.session.rollback(snapshot, key)
            error = TypeError(
                f"tool '{call.name}' returned {type(result).__name__}, not a ToolResult"
            )
            return self._failed(
                call, params, str(error), "internal_error", error, started, bug=tool
            )
        tool_result = cast("ToolResult[Any]", result)
        if not tool_result.success:
            self.session.rollback(snapshot, key)
            return self._failed_on_purpose(call, tool_result, params, started)
        try:
            content = render_tool_result(tool_result)
        except UnsendableValueError as error:
            self.session.rollback(snapshot, key)
            message = (
                f"tool '{call.name}' returned a value that cannot be sent to the model: {error}"
            )
            return self._failed(call, params, message, "internal_error", error, started, bug=tool)
        return ToolExecution(
            call, tool_result, params, None, time.perf_counter() - started, content
        )

    async def _call_handler(
        self, tool: Tool[Any, Any], params: Any, context: ToolContext
    ) -> object:
        """Call the handler: an async one on the evaluation's loop, a sync one always on a
        wink worker thread (`run_in_thread`), whatever the entry point, the number of
        calls in the round or the deadline: never on an event loop others wait on, and
        not on the loop's default executor, where asyncio resolves host names (a stuck
        tool must not delay requests).

        Both kinds are cut at the deadline. A thread cannot be stopped: a sync handler
        still running at the deadline finishes in the background, after the evaluation
        has already raised `DeadlineExceededError` (its result is discarded).
        """
        if tool.is_async:
            return await self._within_deadline(tool.handler(params, context=context))
        outcome = await self._within_deadline(run_in_thread(tool.handler, params, context=context))
        if inspect.isawaitable(outcome):
            return await self._within_deadline(cast(Any, outcome))
        return outcome

    async def _within_deadline(self, awaitable: Any) -> object:
        if self.deadline is None:
            return await awaitable
        remaining = self.deadline.remaining()
        scope = asyncio.timeout(remaining)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                raise DeadlineExceededError(
                    "deadline passed while a tool was running", prompt_name=self.prompt_name
                ) from None
            raise

    def _failed_on_purpose(
        self, call: ToolCall, result: ToolResult[Any], params: Any, started: float
    ) -> ToolExecution:
        """A `ToolResult.error` the handler chose: an operational outcome, logged at INFO."""
        logger.info(
            "tool %r returned an error (prompt=%r call_id=%r): %s",
            call.name,
            self.prompt_name,
            call.id,
            result.message,
        )
        return ToolExecution(call, result, params, None, time.perf_counter() - started)

    def _failed(
        self,
        call: ToolCall,
        params: Any,
        message: str,
        code: ErrorCode,
        error: BaseException | None,
        started: float,
        *,
        bug: Tool[Any, Any] | None = None,
    ) -> ToolExecution:
        """A failure the model reads as a failed result.

        `bug` names the tool whose code is at fault (it raised, returned something that
        is not a `ToolResult`, or a value that cannot be sent): logged at WARNING with the
        traceback, since the developer must see it. The model's own mistakes (unknown
        tool, bad arguments) are logged at INFO.
        """
        if bug is not None:
            logger.warning(
                "tool %r (handler %s) is broken (prompt=%r call_id=%r): %s",
                call.name,
                _handler_name(bug),
                self.prompt_name,
                call.id,
                message,
                exc_info=error,
            )
        else:
            logger.info(
                "tool %r failed (prompt=%r call_id=%r): %s",
                call.name,
                self.prompt_name,
                call.id,
                message,
            )
        return ToolExecution(
            call,
            ToolResult[Any].error(message, code=code),
            params,
            error,
            time.perf_counter() - started,
        )


def _handler_name(tool: Tool[Any, Any]) -> str:
    handler = tool.handler
    module = getattr(handler, "__module__", None) or "?"
    name = getattr(handler, "__qualname__", None) or type(handler).__qualname__
    return f"{module}.{name}"


# --- arguments that strict JSON (and so the provider) cannot carry


class _NonFiniteNumber(ValueError):
    """`Infinity`, `-Infinity` or `NaN` in arguments: Python's json reads them, JSON has none."""


def _reject_constant(name: str) -> Any:
    raise _NonFiniteNumber(f"{name} is not a JSON number")


def _strict_loads(text: str) -> Any:
    """`json.loads` without the `Infinity`/`NaN` extension."""
    return json.loads(text, parse_constant=_reject_constant)


def _scrub_surrogates(text: str) -> str:
    """`text` with lone UTF-16 surrogates replaced by U+FFFD (paired ones joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _wire_problem(value: Any, path: str) -> str | None:
    """The first string or number in `value` that strict JSON in UTF-8 cannot carry, as
    `where: why` (like `format_validation_error`), so the model can fix exactly that."""
    where = path or "arguments"
    if isinstance(value, str):
        if _scrub_surrogates(value) != value:
            return f"{where}: a lone UTF-16 surrogate, which is not valid Unicode"
        return None
    if isinstance(value, float) and not math.isfinite(value):
        shown = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return f"{where}: {shown} is not a JSON number"
    if isinstance(value, Mapping):
        for key, item in cast("Mapping[Any, Any]", value).items():
            if isinstance(key, str) and _scrub_surrogates(key) != key:
                return f"{where}: a key with a lone UTF-16 surrogate, which is not valid Unicode"
            problem = _wire_problem(item, f"{path}.{key}" if path else str(key))
            if problem is not None:
                return problem
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(cast("Sequence[Any]", value)):
            problem = _wire_problem(item, f"{path}[{index}]")
            if problem is not None:
                return problem
    return None


def _wire_safe(value: Any) -> Any:
    if isinstance(value, str):
        return _scrub_surrogates(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        items = cast("Mapping[Any, Any]", value).items()
        return {_wire_safe(key): _wire_safe(item) for key, item in items}
    if isinstance(value, list | tuple):
        return [_wire_safe(item) for item in cast("Sequence[Any]", value)]
    return value


def wire_safe_call(call: ToolCall) -> ToolCall:
    """`call` as it can be echoed back to the provider in the next request.

    Returned unchanged when its arguments are strict JSON in valid Unicode. Otherwise a
    copy: lone surrogates become U+FFFD and non-finite numbers null; arguments sent as a
    string that is not strict JSON stay that string, with surrogates replaced. The
    executor has already rejected such a call with a failed result the model reads; this
    only keeps the echo of the call from breaking the request that carries that result.
    """
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            decoded = _strict_loads(arguments)
        except ValueError:
            scrubbed = _scrub_surrogates(arguments)
            if scrubbed == arguments:
                return call
            return dataclasses.replace(call, arguments=scrubbed)
        if _wire_problem(decoded, "") is None:
            return call
        return dataclasses.replace(
            call, arguments=json.dumps(_wire_safe(decoded), ensure_ascii=False)
        )
    if _wire_problem(arguments, "") is None:
        return call
    return dataclasses.replace(call, arguments=cast(dict[str, Any], _wire_safe(arguments)))
