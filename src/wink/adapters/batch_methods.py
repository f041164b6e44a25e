"""The batch methods of `ProviderAdapter` (docs/batch.md), each in a sync and an async
form like `evaluate`: the sync one runs the async one's coroutine on the portal.
What they run is `wink.adapters.batch.BatchRunner`'s."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.foundation.runtime import portal

if TYPE_CHECKING:
    from ..core.agent.batch_job import BatchItem, BatchJob
    from ..core.agent.loop import PromptResponse
    from ..core.foundation.batches import BatchStatus
    from ..core.foundation.errors import WinkError
    from ..core.prompting.prompt import Prompt
    from .batch import BatchRunner

__all__ = ["BatchMethods"]


class BatchMethods(ABC):
    """Submit evaluations as one provider batch, at about half the price, answered
    within 24 hours; advance them round by round; read their results."""

    @abstractmethod
    def _batch_runner(self, *, blocking: bool) -> BatchRunner:
        """What runs this adapter's batches, with the entry point's kind of client."""

    def submit_batch(
        self,
        items: Sequence[Prompt[Any] | BatchItem[Any]] | Mapping[str, Prompt[Any] | BatchItem[Any]],
    ) -> BatchJob:
        """Submit `items` (`Prompt`s, or `BatchItem`s with their own session, settings,
        limits) as one batch of the provider; the `BatchJob` to poll and advance.

        Each item's request is the one `evaluate` would send, byte for byte. An item that
        cannot be sent (a part the provider refuses, a prompt that does not render), or
        a batch over the provider's limits, raises before anything is submitted.
        """
        return portal().call(self._batch_runner(blocking=True).submit(items))

    async def submit_batch_async(
        self,
        items: Sequence[Prompt[Any] | BatchItem[Any]] | Mapping[str, Prompt[Any] | BatchItem[Any]],
    ) -> BatchJob:
        """`submit_batch` on the caller's event loop."""
        return await self._batch_runner(blocking=False).submit(items)

    def poll_batch(self, job: BatchJob) -> BatchStatus:
        """Where the job's provider batch is: its state and counts (`BatchStatus`)."""
        return portal().call(self._batch_runner(blocking=True).poll(job))

    async def poll_batch_async(self, job: BatchJob) -> BatchStatus:
        """`poll_batch` on the caller's event loop."""
        return await self._batch_runner(blocking=False).poll(job)

    def advance_batch(self, job: BatchJob) -> BatchJob:
        """Move the job on as far as its provider batch allows; the next job.

        While the batch runs, the job comes back as it is. Once it has ended, each
        waiting item takes its answer: a final answer or a failure settles it; an answer
        that calls tools runs them here, and the item's next round goes into a new
        batch, which the job returned holds (`job.id`). `job.finished` once every item
        has ended.
        """
        return portal().call(self._batch_runner(blocking=True).advance(job))

    async def advance_batch_async(self, job: BatchJob) -> BatchJob:
        """`advance_batch` on the caller's event loop."""
        return await self._batch_runner(blocking=False).advance(job)

    def cancel_batch(self, job: BatchJob) -> BatchStatus:
        """Ask the provider to cancel the job's batch: items it has not run end with
        `BatchCancelledError` once it has stopped (advance the job to read them)."""
        return portal().call(self._batch_runner(blocking=True).cancel(job))

    async def cancel_batch_async(self, job: BatchJob) -> BatchStatus:
        """`cancel_batch` on the caller's event loop."""
        return await self._batch_runner(blocking=False).cancel(job)

    def batch_results(self, job: BatchJob) -> list[PromptResponse[Any] | WinkError]:
        """Per item, in order: its `PromptResponse`, or the `WinkError` the same failure
        raises in `evaluate` (`BatchExpiredError`, `BatchCancelledError` for an item that
        never ran). The job must be finished; nothing is sent."""
        from .batch import BatchRunner

        return BatchRunner.results(job)
