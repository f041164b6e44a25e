"""A batch run's state: what each item is (`BatchItem`) and where it is (`BatchJob`).

A job holds every item of a run, from its submission to its end, across its rounds: an
item waits for the answer of its current round in the provider batch `job.id` (its loop
stopped there: `wink.core.agent.deferred.LoopState`), or is settled, with its final
`PromptResponse` or the `WinkError` it failed with. `job.to_json()` saves it and
`BatchJob.from_json(text, items=...)` reads it back, in any process: the items give back
what JSON cannot carry (the prompts' tools and output types, sessions, settings), as the
prompt does when a conversation resumes (docs/batch.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, cast

from ..foundation.batches import BATCH_KEY
from ..foundation.checks import kind_of
from ..foundation.content import Attachment
from ..foundation.errors import InvalidArgumentError, WinkError
from ..foundation.limits import Budget
from ..foundation.messages import FinishReason, Usage
from ..foundation.results import ToolResult
from ..foundation.settings import ModelSettings
from ..foundation.transcript import Transcript
from ..prompting.prompt import OutputT, Prompt, parse_output
from ..prompting.session import Session
from .deferred import LoopState
from .loop import PromptResponse

__all__ = ["BatchEntry", "BatchItem", "BatchJob", "SavedAnswer", "batch_items"]


@dataclass(frozen=True, slots=True)
class BatchItem(Generic[OutputT]):
    """One item of a batch: its prompt, and what `evaluate` would be given with it.

    `key` names it in the provider's batch (its `custom_id`: 1 to 64 letters, digits,
    `_` or `-`; by default its index in the list, "0", "1"...). `settings` are its own
    sampling settings (the adapter's otherwise); `session` (a fresh one by default, the
    same for all its rounds), `budget`, `max_rounds`, `graceful_tool_errors`,
    `max_output_retries`, `attachments`, `history` and `approvals` mean what they mean to
    `evaluate`; `settings` are merged over the adapter's. A bare `Prompt` (or a string:
    `Prompt.from_text`) in the list is an item with nothing else.
    """

    prompt: Prompt[OutputT]
    key: str | None = None
    session: Session | None = None
    settings: ModelSettings | None = None
    budget: Budget | None = None
    max_rounds: int | None = None
    graceful_tool_errors: bool | None = None
    max_output_retries: int | None = None
    attachments: Sequence[Attachment] | None = None
    history: Transcript | None = None
    approvals: Mapping[str, bool | ToolResult[Any]] | None = None


def batch_items(given: object, argument: str = "items") -> dict[str, BatchItem[Any]]:
    """The items given (a list of `Prompt`s and `BatchItem`s, or a mapping key -> item),
    by key, in order; a wrong value or key is an `InvalidArgumentError`."""
    if isinstance(given, Mapping):
        pairs = [(key, item) for key, item in cast(Mapping[object, object], given).items()]
    elif isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise InvalidArgumentError(
            f"{argument} must be a list of Prompts and BatchItems, got {kind_of(given)}",
            argument=argument,
        )
    else:
        pairs = [(None, item) for item in cast(Iterable[object], given)]
    found: dict[str, BatchItem[Any]] = {}
    for index, (named, value) in enumerate(pairs):
        item = _item(value, f"{argument}[{index if named is None else repr(named)}]", argument)
        key = item.key if item.key is not None else (named if named is not None else str(index))
        if named is not None and named != key:
            raise InvalidArgumentError(
                f"{argument}[{named!r}] is keyed {named!r} but its BatchItem says key={key!r}",
                argument=argument,
            )
        if not isinstance(key, str) or not BATCH_KEY.match(key):
            raise InvalidArgumentError(
                f"the key of {argument}[{index}] must be 1 to 64 letters, digits, '_' or '-' "
                f"(the providers' custom_id rule), got {key!r}",
                argument=argument,
            )
        if key in found:
            raise InvalidArgumentError(
                f"two items have the key {key!r}: each item's key must be unique",
                argument=argument,
            )
        if item.session is None:  # one session for all its rounds
            item = replace(item, session=Session())
        found[key] = item
    if not found:
        raise InvalidArgumentError(f"{argument} is empty: a batch needs items", argument=argument)
    return found


def _item(value: object, where: str, argument: str) -> BatchItem[Any]:
    if isinstance(value, BatchItem):
        item = cast(BatchItem[Any], value)
        if not isinstance(cast(object, item.prompt), Prompt):
            raise InvalidArgumentError(
                f"{where}.prompt must be a Prompt (Prompt.from_text(...) for a string), got "
                f"{kind_of(item.prompt)}",
                argument=argument,
            )
        return item
    if isinstance(value, Prompt):
        return BatchItem(cast(Prompt[Any], value))
    if isinstance(value, str):
        return BatchItem(Prompt[Any].from_text(value))
    raise InvalidArgumentError(
        f"{where} must be a Prompt, a string or a BatchItem, got {kind_of(value)}",
        argument=argument,
    )


@dataclass(frozen=True, slots=True)
class SavedAnswer:
    """A final answer read back from JSON; `response(prompt)` is its `PromptResponse`
    (the prompt parses a structured output again: `structured`)."""

    prompt_name: str
    text: str | None
    finish_reason: FinishReason
    rounds: int
    usage: Usage
    thinking: str | None
    transcript: Transcript
    structured: bool

    def response(self, prompt: Prompt[Any] | None) -> PromptResponse[Any]:
        output: Any = None
        if self.structured:
            if prompt is None or prompt.output_type is None:
                raise InvalidArgumentError(
                    f"the answer of prompt {self.prompt_name!r} is structured: read the job "
                    "with its items (BatchJob.from_json(text, items=...)) to parse it",
                    argument="items",
                )
            output = parse_output(prompt.output_type, self.text or "")
        return PromptResponse(
            prompt_name=self.prompt_name,
            text=self.text,
            output=output,
            usage=self.usage,
            finish_reason=self.finish_reason,
            rounds=self.rounds,
            thinking=self.thinking,
            transcript=self.transcript,
            pending=self.transcript.pending,
        )


Outcome = PromptResponse[Any] | SavedAnswer | WinkError
"""How an item ended: its final answer (read from JSON: a `SavedAnswer`), or its error."""


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One item of a job: its key, its prompt's name, the item itself (None: read from
    JSON without it), where its loop is (`state`: waiting for round `state.round`, or
    the last round it reached), and how it ended (`outcome`; None while it waits)."""

    key: str
    prompt_name: str
    item: BatchItem[Any] | None
    state: LoopState
    outcome: Outcome | None = None

    @property
    def waiting(self) -> bool:
        return self.outcome is None

    @property
    def transcript(self) -> Transcript:
        outcome = self.outcome
        if isinstance(outcome, PromptResponse | SavedAnswer):
            return outcome.transcript
        return Transcript(self.state.messages)

    def result(self) -> PromptResponse[Any] | WinkError:
        """Its `PromptResponse` or its error (it must have ended)."""
        outcome = self.outcome
        if outcome is None:
            raise AssertionError("a waiting item has no result")  # pragma: no cover
        if isinstance(outcome, SavedAnswer):
            return outcome.response(self.item.prompt if self.item is not None else None)
        return outcome


class BatchJob:
    """A batch run: every item, answered, failed, or waiting for its next round in the
    provider batch `id` (docs/batch.md).

    `provider` is the adapter that submitted it ("anthropic:claude-sonnet-4-6"): only
    an adapter of that name polls and advances it. `keys` and `transcripts` are the
    items', in order; `waiting` the keys of the items whose answer is awaited; `finished`
    once none is. `to_json()` / `BatchJob.from_json(text, items=...)` carry it to
    another process. Immutable: `adapter.advance_batch(job)` returns the next one.
    """

    __slots__ = ("_entries", "_id", "_provider")

    def __init__(self, batch_id: str | None, provider: str, entries: Iterable[BatchEntry]) -> None:
        given = cast(object, entries)
        listed = tuple(cast(Iterable[object], given)) if isinstance(given, Iterable) else None
        if (
            not isinstance(cast(object, batch_id), str | None)
            or not isinstance(cast(object, provider), str)
            or listed is None
            or not all(isinstance(entry, BatchEntry) for entry in listed)
        ):
            raise InvalidArgumentError(
                "a BatchJob is made by adapter.submit_batch or BatchJob.from_json, not by hand",
                argument="entries",
            )
        self._id = batch_id
        self._provider = provider
        self._entries = cast(tuple[BatchEntry, ...], listed)

    @property
    def id(self) -> str | None:
        """The provider batch the waiting items are in (the last one once finished);
        None when their round is not submitted yet (`advance_batch` submits it)."""
        return self._id

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def entries(self) -> tuple[BatchEntry, ...]:
        """Each item's state, in order (what wink's batch code reads)."""
        return self._entries

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(entry.key for entry in self._entries)

    @property
    def transcripts(self) -> tuple[Transcript, ...]:
        """Each item's conversation so far (or its last, once it has ended)."""
        return tuple(entry.transcript for entry in self._entries)

    @property
    def waiting(self) -> tuple[str, ...]:
        """The keys of the items whose next answer is awaited."""
        return tuple(entry.key for entry in self._entries if entry.waiting)

    @property
    def finished(self) -> bool:
        """Whether every item has ended (answered or failed): `batch_results` then."""
        return not any(entry.waiting for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[BatchEntry]:
        return iter(self._entries)

    def __repr__(self) -> str:
        waiting = len(self.waiting)
        state = f"{waiting} waiting in {self._id!r}" if waiting else "finished"
        return f"BatchJob({self._provider}, {len(self._entries)} items, {state})"

    def to_json(self) -> str:
        """The job as JSON text (version 1, docs/batch.md); no key or setting in it."""
        from .batch_json import dump_job

        return dump_job(self)

    @classmethod
    def from_json(cls, text: str | bytes, items: object = None) -> BatchJob:
        """Read what `to_json` wrote. `items`, the list submitted (or a mapping key ->
        item), gives back the prompts, sessions and settings: needed to advance the job
        or read its structured answers, not to poll it. A text that is not a job is an
        `InvalidArgumentError` naming the place; so are items that are not its own."""
        from .batch_json import load_job

        return load_job(text, items)
