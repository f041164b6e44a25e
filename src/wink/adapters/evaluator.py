"""`Evaluator`: the public entry points every adapter shares, written once.

`evaluate`, `evaluate_async`, `stream` and `stream_async` all run one coroutine
(`_evaluation`, which runs `wink.core.agent.loop.run_evaluation`): the async forms on the
caller's loop, the sync forms on the portal (`wink.core.foundation.runtime`), a stream as
a task feeding its queue. An
adapter says only what serves its rounds and with which loop settings (`_plan`), and how
it closes. `ProviderAdapter` serves them with its own runner, `FallbackAdapter` with a
chain of adapters.
"""

from __future__ import annotations

import importlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self, TypedDict, cast, overload

from typing_extensions import Unpack

from ..core.foundation.content import Attachment, attachments_of
from ..core.foundation.errors import InvalidArgumentError
from ..core.foundation.runtime import portal
from .options import check_arguments

if TYPE_CHECKING:
    from ..core.agent.loop import LoopSettings, ModelClient, PromptResponse
    from ..core.agent.stream import AsyncPromptStream, PromptStream
    from ..core.foundation.builtin import BuiltinTool
    from ..core.foundation.events import EventSink
    from ..core.foundation.limits import Budget, Deadline
    from ..core.foundation.results import ToolResult
    from ..core.foundation.settings import ModelSettings, ToolChoice
    from ..core.foundation.transcript import Transcript
    from ..core.prompting.prompt import OutputT, Prompt
    from ..core.prompting.session import Session
    from ..core.prompting.sources import ToolSource
    from ..core.prompting.tools import Tool

__all__ = ["Call", "EvaluateOptions", "Evaluator", "TextOptions", "call_settings"]


class EvaluateOptions(TypedDict, total=False):
    """The keyword options every entry point takes (`evaluate`, `evaluate_async`,
    `stream`, `stream_async`; `FallbackAdapter`'s too). None keeps the adapter's.

    `session` records the run's events and holds the tools' state (a fresh `Session`
    without one). `deadline`, `budget`: limits of this evaluation. `max_rounds`,
    `graceful_tool_errors`, `max_output_retries` override the adapter's. `attachments`
    (images, documents, audio) follow the prompt in the user turn (docs/multimodal.md).
    `history` (a `Transcript`, such as `response.transcript`) is the conversation so far:
    the prompt is its next user turn (docs/conversations.md); when it ends in calls
    awaiting approval, `approvals` answers them (docs/approvals.md). `settings` (a
    `ModelSettings`) are merged over the adapter's for this call, and so are
    `tool_choice` and `parallel_tool_calls` (docs/tools.md#tool-choice). `builtin_tools`
    (`wink.WebSearch`, `wink.CodeExecution`, `wink.UrlContext`) are run by the provider,
    each over the prompt's of its kind (docs/builtin-tools.md).
    """

    session: Session | None
    deadline: Deadline | None
    budget: Budget | None
    graceful_tool_errors: bool | None
    max_rounds: int | None
    max_output_retries: int | None
    attachments: Sequence[Attachment] | None
    history: Transcript | None
    approvals: Mapping[str, bool | ToolResult[Any]] | None
    settings: ModelSettings | None
    tool_choice: ToolChoice | None
    parallel_tool_calls: bool | None
    builtin_tools: Sequence[BuiltinTool] | None


class TextOptions(EvaluateOptions, total=False):
    """A string prompt's options besides `EvaluateOptions` (and `output_type`): what a
    `Prompt` carries itself. `instructions` are the system instructions, as written;
    `tools` are `Tool`s or plain functions (docs/tools.md)."""

    instructions: str | None
    tools: Sequence[Tool[Any, Any] | Callable[..., Any]]


_CALL_OPTIONS = frozenset(EvaluateOptions.__annotations__)
_TEXT_OPTIONS = frozenset({"instructions", "tools", "output_type"})


@dataclass(frozen=True, slots=True)
class Call:
    """What one call of an entry point asked for, checked (`Call.of`). None: the
    adapter's own setting (a fresh `Session` for `session`). `settings` are the call's
    `ModelSettings` (with its `tool_choice` and `parallel_tool_calls`), to merge over
    each adapter's."""

    session: Session | None
    deadline: Deadline | None
    budget: Budget | None
    graceful_tool_errors: bool | None
    max_rounds: int | None
    max_output_retries: int | None
    attachments: tuple[Attachment, ...] = ()
    history: Transcript | None = None
    approvals: Mapping[str, bool | ToolResult[Any]] | None = None
    settings: ModelSettings | None = None
    builtin_tools: tuple[BuiltinTool, ...] = ()

    @classmethod
    def of(cls, prompt: object, options: Mapping[str, Any]) -> tuple[Prompt[Any], Call]:
        """The prompt (a string made into one: `Prompt.from_text`) and the call's options.
        Wrong types and unknown options fail here, at the call, before anything is
        rendered or sent; so does a history that cannot go on as given
        (`check_continuation`)."""
        from ..core.foundation.builtin import builtin_tools_of
        from ..core.foundation.transcript import check_continuation
        from ..core.prompting.prompt import Prompt

        unknown = sorted(set(options) - _CALL_OPTIONS - _TEXT_OPTIONS)
        if unknown:
            raise InvalidArgumentError(
                f"unknown option(s) {', '.join(unknown)}; known: "
                f"{', '.join(sorted(_CALL_OPTIONS | _TEXT_OPTIONS))}",
                argument=unknown[0],
            )
        short = sorted(_TEXT_OPTIONS & set(options))
        if isinstance(prompt, str):
            prompt = Prompt[Any].from_text(
                prompt,
                instructions=options.get("instructions"),
                tools=options.get("tools") or (),
                output_type=options.get("output_type"),
            )
        elif short:
            raise InvalidArgumentError(
                f"{', '.join(short)} go with a string prompt; a Prompt carries its own "
                "(Prompt(..., instructions=, output_type=), MarkdownSection(tools=...))",
                argument=short[0],
            )
        get = options.get
        check_arguments(
            prompt,
            get("session"),
            get("deadline"),
            get("budget"),
            get("graceful_tool_errors"),
            get("max_rounds"),
            get("max_output_retries"),
        )
        parts = attachments_of(get("attachments"), "attachments", "attachments=")
        approvals = get("approvals")
        check_continuation(get("history"), approvals, attachments=bool(parts))
        call = cls(
            get("session"),
            get("deadline"),
            get("budget"),
            get("graceful_tool_errors"),
            get("max_rounds"),
            get("max_output_retries"),
            parts,
            get("history"),
            dict(cast(Mapping[str, Any], approvals)) if approvals is not None else None,
            call_settings(get("settings"), get("tool_choice"), get("parallel_tool_calls")),
            builtin_tools_of(get("builtin_tools")),
        )
        return cast("Prompt[Any]", prompt), call

    def loop_settings(self, adapters: LoopSettings) -> LoopSettings:
        """The adapter's loop settings with this call's overrides."""
        changes: dict[str, Any] = {
            name: value
            for name in ("graceful_tool_errors", "max_rounds", "max_output_retries")
            if (value := getattr(self, name)) is not None
        }
        if self.builtin_tools:
            changes["builtin_tools"] = self.builtin_tools
        return replace(adapters, **changes) if changes else adapters


def call_settings(settings: object, tool_choice: object, parallel: object) -> ModelSettings | None:
    """A call's `settings=`, with its `tool_choice=` and `parallel_tool_calls=` over them."""
    from ..core.foundation.settings import ModelSettings

    if settings is not None and not isinstance(settings, ModelSettings):
        raise InvalidArgumentError(
            f"settings must be a ModelSettings or None, got {type(settings).__name__}",
            argument="settings",
        )
    if tool_choice is None and parallel is None:
        return settings
    loose = ModelSettings(
        tool_choice=cast("ToolChoice | None", tool_choice),
        parallel_tool_calls=cast("bool | None", parallel),
    )
    return settings.merged(loose) if settings is not None else loose


class Evaluator(ABC):
    """What every adapter offers: evaluate a prompt (sync, async, streamed) and close.

    The MCP servers its evaluations used are remembered, and released when it closes
    (`ToolSource.release`: a server nobody entered with `with server:` is closed).
    """

    _tool_sources: dict[int, ToolSource] | None = None

    @abstractmethod
    def _plan(
        self, session: Session, *, blocking: bool, settings: ModelSettings | None = None
    ) -> tuple[ModelClient, LoopSettings]:
        """What serves this evaluation's rounds, and the adapter's loop settings.
        `blocking`: it comes from a sync entry point (it runs on the portal).
        `settings`: the call's model settings, merged over each adapter's."""

    @abstractmethod
    def check_priced(self) -> None:
        """Raise `ConfigurationError` unless every model that may answer has a price
        (a `Budget(max_cost=...)` needs one)."""

    @abstractmethod
    def check_call_settings(self, settings: ModelSettings) -> None:
        """Refuse (`ConfigurationError`) or warn about (`UnsupportedSettingWarning`) a
        call's settings as the adapter does its own: at the call, before sending."""

    def _call(self, prompt: object, options: Mapping[str, Any]) -> tuple[Prompt[Any], Call]:
        checked, call = Call.of(prompt, options)
        if call.settings is not None:
            self.check_call_settings(call.settings)
        return checked, call

    @overload
    async def evaluate_async(
        self, prompt: Prompt[OutputT], **options: Unpack[EvaluateOptions]
    ) -> PromptResponse[OutputT]: ...
    @overload
    async def evaluate_async(
        self,
        prompt: str,
        *,
        output_type: type[OutputT] | None = None,
        **options: Unpack[TextOptions],
    ) -> PromptResponse[OutputT]: ...
    async def evaluate_async(
        self, prompt: Prompt[Any] | str, **call_options: Any
    ) -> PromptResponse[Any]:
        """Evaluate `prompt` to a final answer; raises only `WinkError`.

        `prompt` is a `Prompt`, or a string: one user turn, exactly as written, with the
        `instructions`, `tools` (`Tool`s or functions) and `output_type` given here. Runs
        on the caller's event loop and never blocks it (sync clients and sync tools run
        on worker threads). The options are `EvaluateOptions`.
        """
        checked, call = self._call(prompt, call_options)
        return await self._evaluation(checked, call, blocking=False)

    @overload
    def evaluate(
        self, prompt: Prompt[OutputT], **options: Unpack[EvaluateOptions]
    ) -> PromptResponse[OutputT]: ...
    @overload
    def evaluate(
        self,
        prompt: str,
        *,
        output_type: type[OutputT] | None = None,
        **options: Unpack[TextOptions],
    ) -> PromptResponse[OutputT]: ...
    def evaluate(self, prompt: Prompt[Any] | str, **call_options: Any) -> PromptResponse[Any]:
        """The sync form of `evaluate_async`: the same coroutine, run on wink's event loop
        for sync calls (the portal, a thread of its own) while this thread waits; also
        inside a running event loop (Jupyter), which it blocks as any sync call does."""
        checked, call = self._call(prompt, call_options)
        return portal().call(self._evaluation(checked, call, blocking=True))

    @overload
    def stream(
        self, prompt: Prompt[OutputT], **options: Unpack[EvaluateOptions]
    ) -> PromptStream[OutputT]: ...
    @overload
    def stream(
        self,
        prompt: str,
        *,
        output_type: type[OutputT] | None = None,
        **options: Unpack[TextOptions],
    ) -> PromptStream[OutputT]: ...
    def stream(self, prompt: Prompt[Any] | str, **call_options: Any) -> PromptStream[Any]:
        """`evaluate`, streamed: `with adapter.stream(...) as stream: for event in stream`,
        then `stream.response`. Same arguments, same loop, same contract; the iteration
        raises only `WinkError` (docs/streaming.md)."""
        from ..core.agent.stream import PromptStream

        checked, call = self._call(prompt, call_options)
        return PromptStream(
            lambda queue: self._evaluation(checked, call, blocking=True, sink=queue)
        )

    @overload
    def stream_async(
        self, prompt: Prompt[OutputT], **options: Unpack[EvaluateOptions]
    ) -> AsyncPromptStream[OutputT]: ...
    @overload
    def stream_async(
        self,
        prompt: str,
        *,
        output_type: type[OutputT] | None = None,
        **options: Unpack[TextOptions],
    ) -> AsyncPromptStream[OutputT]: ...
    def stream_async(
        self, prompt: Prompt[Any] | str, **call_options: Any
    ) -> AsyncPromptStream[Any]:
        """`evaluate_async`, streamed: `async with adapter.stream_async(...) as stream:
        async for event in stream`, then `stream.response`."""
        from ..core.agent.stream import AsyncPromptStream

        checked, call = self._call(prompt, call_options)
        return AsyncPromptStream(
            lambda queue: self._evaluation(checked, call, blocking=False, sink=queue)
        )

    def _evaluation(
        self,
        prompt: Prompt[OutputT],
        call: Call,
        *,
        blocking: bool,
        sink: EventSink | None = None,
    ) -> Coroutine[Any, Any, PromptResponse[OutputT]]:
        """The one evaluation coroutine every entry point runs (the loop's own, so the
        adapter stays out of its frames)."""
        from ..core.agent.loop import run_evaluation
        from ..core.prompting.session import Session

        budget = call.budget
        if budget is not None and budget.max_cost is not None:
            self.check_priced()  # a limit in money that cannot trip is refused now
        session = call.session if call.session is not None else Session()
        sources = prompt.tool_sources
        if sources:
            self._remember(sources)
        client, settings = self._plan(session, blocking=blocking, settings=call.settings)
        return run_evaluation(
            client,
            prompt,
            session=session,
            settings=call.loop_settings(settings),
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
