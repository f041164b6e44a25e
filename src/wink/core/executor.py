"""Runs the model's tool calls. A tool's failure becomes a `ToolResult`, never an exception.

What still raises, on purpose: a tool declared `graceful=False` (as
`PromptEvaluationError(phase="tool")`), the evaluation's deadline, a failed rollback, and
`VisibilityExpansionRequired` (a request to the caller, not a failure).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from .errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    ToolValidationError,
    VisibilityExpansionRequired,
)
from .limits import Deadline
from .messages import ToolCall, ToolResultMessage
from .resources import ResourceScope
from .session import Session, ToolInvoked
from .tools import ErrorCode, Tool, ToolContext, ToolResult

__all__ = ["ToolExecution", "ToolExecutor", "format_validation_error", "render_tool_result"]

logger = logging.getLogger("wink.tools")

# Exceptions that are the caller's business, not the tool's: they leave the executor.
_PASS_THROUGH = (VisibilityExpansionRequired, DeadlineExceededError)


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """One executed call: what the model sent, what it gets back, and what went wrong."""

    call: ToolCall
    result: ToolResult[Any]
    params: Any
    error: BaseException | None
    duration: float

    def to_message(self) -> ToolResultMessage:
        return ToolResultMessage(
            call_id=self.call.id,
            name=self.call.name,
            content=render_tool_result(self.result),
            success=self.result.success,
        )


def render_tool_result(result: ToolResult[Any]) -> str:
    """The text the model reads: the message, plus the value as JSON unless excluded."""
    if not result.success or result.value is None or result.exclude_value_from_context:
        return result.message
    try:
        payload = json.dumps(to_jsonable_python(result.value), ensure_ascii=False)
    except Exception:  # an unserializable value still gets a readable form
        payload = str(result.value)
    return f"{result.message}\n{payload}" if result.message else payload


def format_validation_error(error: ValidationError) -> str:
    """One line per failing field: `field: why`, so the model can fix exactly that."""
    parts: list[str] = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"]) or "arguments"
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

    async def execute(self, calls: Sequence[ToolCall]) -> list[ToolExecution]:
        """Run `calls` (concurrently when there are several) and record a `ToolInvoked` each."""
        if len(calls) == 1:
            executions = [await self._run(calls[0], parallel=False)]
        else:
            gathered = await asyncio.gather(
                *(self._run(call, parallel=True) for call in calls), return_exceptions=True
            )
            for outcome in gathered:
                if isinstance(outcome, BaseException):
                    raise outcome
            executions = cast(list[ToolExecution], gathered)
        for execution in executions:
            self.session.dispatch(
                ToolInvoked(
                    prompt_name=self.prompt_name,
                    adapter=self.adapter,
                    name=execution.call.name,
                    call_id=execution.call.id,
                    params=execution.params,
                    result=execution.result,
                    error=execution.error,
                    duration=execution.duration,
                )
            )
        return executions

    async def _run(self, call: ToolCall, *, parallel: bool) -> ToolExecution:
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
        return await self._invoke(tool, call, parsed, parallel=parallel, started=started)

    def _parse(self, tool: Tool[Any, Any], call: ToolCall) -> Any:
        arguments: Any = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as error:
                failure = ToolValidationError(
                    f"Arguments for '{call.name}' are not valid JSON ({error.msg} at "
                    f"position {error.pos}). Send a JSON object matching the tool's schema.",
                    tool_name=call.name,
                )
                failure.__cause__ = error
                return failure
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
        self, tool: Tool[Any, Any], call: ToolCall, params: Any, *, parallel: bool, started: float
    ) -> ToolExecution:
        graceful = tool.graceful if tool.graceful is not None else self.graceful_default
        key = object()
        with self.session.transaction(key) as snapshot, self.resources.child("tool_call") as scope:
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
                result = await self._call_handler(tool, params, context, parallel=parallel)
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
                logger.info(
                    "tool %r failed (prompt=%r call_id=%r)",
                    call.name,
                    self.prompt_name,
                    call.id,
                    exc_info=error,
                )
                message = f"{type(error).__name__}: {error}"
                return self._failed(
                    call, params, message, "internal_error", error, started, logged=True
                )
        if not isinstance(result, ToolResult):
            self.session.rollback(snapshot, key)
            error = TypeError(
                f"tool '{call.name}' returned {type(result).__name__}, not a ToolResult"
            )
            return self._failed(call, params, str(error), "internal_error", error, started)
        tool_result = cast(ToolResult[Any], result)
        if not tool_result.success:
            self.session.rollback(snapshot, key)
            logger.info(
                "tool %r returned an error (prompt=%r call_id=%r): %s",
                call.name,
                self.prompt_name,
                call.id,
                tool_result.message,
            )
        return ToolExecution(call, tool_result, params, None, time.perf_counter() - started)

    async def _call_handler(
        self, tool: Tool[Any, Any], params: Any, context: ToolContext, *, parallel: bool
    ) -> object:
        if tool.is_async:
            return await self._within_deadline(tool.handler(params, context=context))
        if parallel:
            outcome = await asyncio.to_thread(tool.handler, params, context=context)
        else:
            outcome = tool.handler(params, context=context)
        if inspect.isawaitable(outcome):
            return await self._within_deadline(cast(Any, outcome))
        return cast(object, outcome)

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

    def _failed(
        self,
        call: ToolCall,
        params: Any,
        message: str,
        code: ErrorCode,
        error: BaseException | None,
        started: float,
        *,
        logged: bool = False,
    ) -> ToolExecution:
        if not logged:
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
