"""`Evaluator`: the public entry points every adapter shares, written once.

`evaluate`, `evaluate_async`, `stream` and `stream_async` all run one coroutine
(`_evaluation`, which runs `wink.core.agent.loop.run_evaluation`): the async forms on the
caller's loop, `evaluate` through `run_sync`, a stream as a task feeding its queue. An
adapter says only what serves its rounds and with which loop settings (`_plan`), and how
it closes. `ProviderAdapter` serves them with its own runner, `FallbackAdapter` with a
chain of adapters.
"""

from __future__ import annotations

import importlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self, cast

from ..core.foundation.content import Attachment, attachments_of
from ..core.foundation.runtime import run_sync
from .options import check_arguments

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.agent.loop import LoopSettings, ModelClient, PromptResponse
    from ..core.agent.stream import AsyncPromptStream, EventQueue, PromptStream
    from ..core.foundation.limits import Budget, Deadline
    from ..core.foundation.results import ToolResult
    from ..core.foundation.transcript import Transcript
    from ..core.prompting.prompt import OutputT, Prompt
    from ..core.prompting.session import Session
    from ..core.prompting.sources import ToolSource

__all__ = ["Call", "Evaluator"]


@dataclass(frozen=True, slots=True)
class Call:
    """What one call of an entry point asked for, checked (`Call.of`). None: the
    adapter's own setting (a fresh `Session` for `session`)."""

    session: Session | None
    deadline: Deadline | None
    budget: Budget | None
    graceful_tool_errors: bool | None
    max_rounds: int | None
    max_output_retries: int | None
    attachments: tuple[Attachment, ...] = ()
    history: Transcript | None = None
    approvals: Mapping[str, bool | ToolResult[Any]] | None = None

    @classmethod
    def of(
        cls,
        prompt: object,
        session: object,
        deadline: object,
        budget: object,
        graceful_tool_errors: object,
        max_rounds: object,
        max_output_retries: object,
        attachments: object = None,
        history: object = None,
        approvals: object = None,
    ) -> Call:
        """Wrong types fail here, at the call, before anything is rendered or sent; so
        does a history that cannot go on as given (`check_continuation`)."""
        from ..core.foundation.transcript import check_continuation

        check_arguments(
            prompt, session, deadline, budget, graceful_tool_errors, max_rounds, max_output_retries
        )
        parts = attachments_of(attachments, "attachments", "attachments=")
        check_continuation(history, approvals, attachments=bool(parts))
        return cls(
            session,  # pyright: ignore[reportArgumentType]  (checked above)
            deadline,  # pyright: ignore[reportArgumentType]
            budget,  # pyright: ignore[reportArgumentType]
            graceful_tool_errors,  # pyright: ignore[reportArgumentType]
            max_rounds,  # pyright: ignore[reportArgumentType]
            max_output_retries,  # pyright: ignore[reportArgumentType]
            parts,
            history,  # pyright: ignore[reportArgumentType]
            dict(cast(Mapping[str, Any], approvals)) if approvals is not None else None,
        )

    def settings(self, adapters: LoopSettings) -> LoopSettings:
        """The adapter's loop settings with this call's overrides."""
        changes: dict[str, Any] = {
            name: value
            for name in ("graceful_tool_errors", "max_rounds", "max_output_retries")
            if (value := getattr(self, name)) is not None
        }
        return replace(adapters, **changes) if changes else adapters


class Evaluator(ABC):
    """What every adapter offers: evaluate a prompt (sync, async, streamed) and close.

    The MCP servers its evaluations used are remembered, and released when it closes
    (`ToolSource.release`: a server nobody entered with `with server:` is closed).
    """

    _tool_sources: dict[int, ToolSource] | None = None

    @abstractmethod
    def _plan(self, session: Session, *, blocking: bool) -> tuple[ModelClient, LoopSettings]:
        """What serves this evaluation's rounds, and the adapter's loop settings.
        `blocking`: it runs on a private loop of a sync entry point, which may block."""

    @abstractmethod
    def _check_priced(self) -> None:
        """Raise `ConfigurationError` unless every model that may answer has a price
        (a `Budget(max_cost=...)` needs one)."""

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
        attachments: Sequence[Attachment] | None = None,
        history: Transcript | None = None,
        approvals: Mapping[str, bool | ToolResult[Any]] | None = None,
    ) -> PromptResponse[OutputT]:
        """Evaluate `prompt` to a final answer; raises only `WinkError`.

        Runs on the caller's event loop and never blocks it (sync clients and sync tools
        run on worker threads). `session` records the run's events and holds the tools'
        state; without one, the run gets a fresh `Session` of its own. `max_rounds`,
        `graceful_tool_errors` and `max_output_retries` override the adapter's for this call.
        `attachments` (images, documents, audio) follow the rendered prompt in the user
        turn (docs/multimodal.md).
        `history` (a `Transcript`, such as `response.transcript`) is the conversation so
        far: the prompt is its next user turn (docs/conversations.md). When it ends in
        calls awaiting approval, `approvals` answers each of them instead
        (docs/approvals.md).
        """
        call = Call.of(
            prompt,
            session,
            deadline,
            budget,
            graceful_tool_errors,
            max_rounds,
            max_output_retries,
            attachments,
            history,
            approvals,
        )
        return await self._evaluation(prompt, call, blocking=False)

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
        attachments: Sequence[Attachment] | None = None,
        history: Transcript | None = None,
        approvals: Mapping[str, bool | ToolResult[Any]] | None = None,
    ) -> PromptResponse[OutputT]:
        """The sync form of `evaluate_async`, on a private event loop of its own; also safe
        inside a running event loop (Jupyter), where it runs on a worker thread."""
        call = Call.of(
            prompt,
            session,
            deadline,
            budget,
            graceful_tool_errors,
            max_rounds,
            max_output_retries,
            attachments,
            history,
            approvals,
        )
        return run_sync(self._evaluation(prompt, call, blocking=True))

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
        attachments: Sequence[Attachment] | None = None,
        history: Transcript | None = None,
        approvals: Mapping[str, bool | ToolResult[Any]] | None = None,
    ) -> PromptStream[OutputT]:
        """`evaluate`, streamed: `with adapter.stream(...) as stream: for event in stream`,
        then `stream.response`. Same arguments, same loop, same contract; the iteration
        raises only `WinkError` (docs/streaming.md)."""
        from ..core.agent.stream import PromptStream

        call = Call.of(
            prompt,
            session,
            deadline,
            budget,
            graceful_tool_errors,
            max_rounds,
            max_output_retries,
            attachments,
            history,
            approvals,
        )
        return PromptStream(lambda queue: self._evaluation(prompt, call, blocking=True, sink=queue))

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
        attachments: Sequence[Attachment] | None = None,
        history: Transcript | None = None,
        approvals: Mapping[str, bool | ToolResult[Any]] | None = None,
    ) -> AsyncPromptStream[OutputT]:
        """`evaluate_async`, streamed: `async with adapter.stream_async(...) as stream:
        async for event in stream`, then `stream.response`."""
        from ..core.agent.stream import AsyncPromptStream

        call = Call.of(
            prompt,
            session,
            deadline,
            budget,
            graceful_tool_errors,
            max_rounds,
            max_output_retries,
            attachments,
            history,
            approvals,
        )
        return AsyncPromptStream(
            lambda queue: self._evaluation(prompt, call, blocking=False, sink=queue)
        )

    def _evaluation(
        self,
        prompt: Prompt[OutputT],
        call: Call,
        *,
        blocking: bool,
        sink: EventQueue | None = None,
    ) -> Coroutine[Any, Any, PromptResponse[OutputT]]:
        """The one evaluation coroutine every entry point runs (the loop's own, so the
        adapter stays out of its frames)."""
        from ..core.agent.loop import run_evaluation
        from ..core.prompting.session import Session

        budget = call.budget
        if budget is not None and budget.max_cost is not None:
            self._check_priced()  # a limit in money that cannot trip is refused now
        session = call.session if call.session is not None else Session()
        sources = prompt.tool_sources
        if sources:
            self._remember(sources)
        client, settings = self._plan(session, blocking=blocking)
        return run_evaluation(
            client,
            prompt,
            session=session,
            settings=call.settings(settings),
            deadline=call.deadline,
            budget=call.budget,
            sink=sink,
            attachments=call.attachments,
            history=call.history,
            approvals=call.approvals,
        )

    # ---- closing

    def _remember(self, sources: tuple[ToolSource, ...]) -> None:
        with _sources_lock:
            known = self._tool_sources
            if known is None:
                known = self._tool_sources = {}
            for source in sources:
                known.setdefault(id(source), source)

    def _taken_sources(self) -> list[ToolSource]:
        with _sources_lock:
            sources = list((self._tool_sources or {}).values())
            self._tool_sources = None
        return sources

    def _release_sources(self) -> None:
        """Release the MCP servers this adapter's evaluations used (from `close()`)."""
        for source in self._taken_sources():
            source.release()

    async def _release_sources_async(self) -> None:
        """`_release_sources`, without blocking the caller's loop (from `aclose()`)."""
        for source in self._taken_sources():
            await source.release_async()

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


_sources_lock = threading.Lock()


def _load_the_loop() -> None:
    """Import the evaluation loop now: `import wink` leaves it to the first evaluation, and
    a block that enters an adapter wants that one to go out without the wait."""
    importlib.import_module("wink.core.agent.loop")
