"""`Evaluator`: the public entry points every adapter shares, written once.

`evaluate`, `evaluate_async`, `stream`, `stream_async` and the context managers all run
the one loop (`wink.core.loop.run_evaluation`); an adapter says only what serves its
rounds and with which loop settings (`_plan`), and how it closes. `ProviderAdapter`
serves them with its own runner, `FallbackAdapter` with a chain of adapters.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self

from ..core.runtime import run_sync
from .options import check_arguments

if TYPE_CHECKING:
    from ..core.limits import Budget, Deadline
    from ..core.loop import LoopSettings, ModelClient, PromptResponse
    from ..core.prompt import OutputT, Prompt
    from ..core.session import Session
    from ..core.stream import AsyncPromptStream, EventChannel, PromptStream, StreamStart

__all__ = ["Evaluator"]


class Evaluator(ABC):
    """What every adapter offers: evaluate a prompt (sync, async, streamed) and close."""

    @abstractmethod
    def _plan(
        self, session: Session, graceful_tool_errors: bool | None, max_rounds: int | None
    ) -> tuple[ModelClient, LoopSettings]:
        """What serves this evaluation's rounds, and the loop's settings for it."""

    def _planned(
        self,
        session: Session,
        graceful_tool_errors: bool | None,
        max_rounds: int | None,
        max_output_retries: int | None,
    ) -> tuple[ModelClient, LoopSettings]:
        """`_plan`, with the call's `max_output_retries` (None: the adapter's)."""
        client, settings = self._plan(session, graceful_tool_errors, max_rounds)
        if max_output_retries is not None:
            settings = replace(settings, max_output_retries=max_output_retries)
        return client, settings

    async def evaluate_async(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session | None = None,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
        max_rounds: int | None = None,
        max_output_retries: int | None = None,
    ) -> PromptResponse[OutputT]:
        """Evaluate `prompt` to a final answer; raises only `WinkError`.

        Runs on the caller's event loop and never blocks it (sync clients and sync tools
        run on worker threads). `session` records the run's events and holds the tools'
        state; without one, the run gets a fresh `Session` of its own. `max_rounds`,
        `graceful_tool_errors` and `max_output_retries` override the adapter's for this call.
        """
        from ..core.loop import run_evaluation

        check_arguments(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        session = _session_or_new(session)
        client, settings = self._planned(
            session, graceful_tool_errors, max_rounds, max_output_retries
        )
        return await run_evaluation(
            client, prompt, session=session, settings=settings, deadline=deadline, budget=budget
        )

    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session | None = None,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
        max_rounds: int | None = None,
        max_output_retries: int | None = None,
    ) -> PromptResponse[OutputT]:
        """The sync form of `evaluate_async`; also safe inside a running event loop
        (Jupyter), where it runs on a worker thread."""
        check_arguments(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        return run_sync(
            self.evaluate_async(
                prompt,
                session=session,
                deadline=deadline,
                budget=budget,
                graceful_tool_errors=graceful_tool_errors,
                max_rounds=max_rounds,
                max_output_retries=max_output_retries,
            )
        )

    def stream(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session | None = None,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
        max_rounds: int | None = None,
        max_output_retries: int | None = None,
    ) -> PromptStream[OutputT]:
        """`evaluate`, streamed: `with adapter.stream(...) as stream: for event in stream`,
        then `stream.response`. Same arguments, same loop, same contract; the iteration
        raises only `WinkError` (docs/streaming.md)."""
        from ..core.stream import PromptStream

        start = self._start(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        return PromptStream(start)

    def stream_async(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session | None = None,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
        max_rounds: int | None = None,
        max_output_retries: int | None = None,
    ) -> AsyncPromptStream[OutputT]:
        """`evaluate_async`, streamed: `async with adapter.stream_async(...) as stream:
        async for event in stream`, then `stream.response`."""
        from ..core.stream import AsyncPromptStream

        start = self._start(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        return AsyncPromptStream(start)

    def _start(
        self,
        prompt: Prompt[OutputT],
        session: Session | None,
        deadline: Deadline | None,
        budget: Budget | None,
        graceful_tool_errors: bool | None,
        max_rounds: int | None,
        max_output_retries: int | None,
    ) -> StreamStart[OutputT]:
        """The evaluation a stream runs once it has its channel (the loop's sink)."""
        from ..core.loop import run_evaluation

        check_arguments(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        run_session = _session_or_new(session)
        client, settings = self._planned(
            run_session, graceful_tool_errors, max_rounds, max_output_retries
        )

        def start(channel: EventChannel) -> Any:
            return run_evaluation(
                client,
                prompt,
                session=run_session,
                settings=settings,
                deadline=deadline,
                budget=budget,
                sink=channel,
            )

        return start

    # ---- closing

    @abstractmethod
    async def aclose(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _prepare(self, *, sync: bool) -> None:
        """Make the SDK clients a `with` (`sync`) or an `async with` block will use."""

    async def __aenter__(self) -> Self:
        _load_the_loop()
        self._prepare(sync=False)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        _load_the_loop()
        self._prepare(sync=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _session_or_new(session: Session | None) -> Session:
    """The caller's session, or a fresh one when the caller keeps none."""
    if session is not None:
        return session
    from ..core.session import Session

    return Session()


def _load_the_loop() -> None:
    """Import the evaluation loop now: `import wink` leaves it to the first evaluation, and
    a block that enters an adapter wants that one to go out without the wait."""
    importlib.import_module("wink.core.loop")
