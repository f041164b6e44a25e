"""The emulator's batches: where a batch request goes, and how a batch lives
(docs/testing.md#batches). Each wire names its batch API (`WireFormat.batches`, in
`wire/<wire>_batch.py`: OpenAI's files and `/v1/batches`, Anthropic's Message Batches,
Gemini's batch mode), which reads and shows its batches; this module is the neutral
part: the batches and files of one emulator, and their states.

A batch moves one step each time it is retrieved (polled), as a real one moves with
time: from its API's first state (`validating`, Gemini's `BATCH_STATE_PENDING`) to
`in_progress`; then the next retrieve answers its items (all of them, or
`batch_items_per_poll`), each exactly as the online route would answer the same request
(the same script of `Turn`s and `Fault`s, the same checks); then it ends (through
`finalizing` on an API that has it). A script's `Fault.batch_expired()` makes the batch
expire at that item; a cancel stops it at the next retrieve, its unanswered items
cancelled. The batch endpoints themselves take the emulator's injected and scheduled
faults and its rate limit, like every request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .batch_formats import BatchItemRequest, EmulatedBatch, ItemResult
from .faults import Fault
from .formats import IdSource
from .records import Provider
from .server import RawRequest
from .wire import WIRES, Rendered, WireContext
from .wire.batch import BatchAction, BatchRefused, EmulatedBatchApi, emulator_url, json_reply

__all__ = ["BATCH_APIS", "BatchEndpoint", "BatchStore", "batch_endpoint"]

AnswerItem = Callable[[EmulatedBatch, BatchItemRequest], ItemResult | None]
"""Answers one item as its online route would; None: the batch expires at it."""

BATCH_APIS: tuple[EmulatedBatchApi, ...] = tuple(
    dict.fromkeys(wire.batches for wire in WIRES.values() if wire.batches is not None)
)
"""The batch APIs the wires name (OpenAI's two wires share one)."""


@dataclass(frozen=True, slots=True)
class BatchEndpoint:
    """A request to a batch API: which, what it does, and what it names (an id, a
    model's route)."""

    api: EmulatedBatchApi
    action: BatchAction
    target: str

    @property
    def provider(self) -> Provider:
        """The wire whose error bodies it answers with."""
        return self.api.wire


def batch_endpoint(raw: RawRequest) -> BatchEndpoint | None:
    """The batch endpoint `raw` is for, if any."""
    for api in BATCH_APIS:
        for method, pattern, action in api.routes:
            match = pattern.match(raw.path)
            if match is not None and raw.method == method:
                return BatchEndpoint(api, action, match.group(1) if match.groups() else "")
    return None


class BatchStore:
    """The batches and batch files of one emulator, and how they move."""

    def __init__(self, ids: IdSource, answer: AnswerItem, items_per_poll: int | None) -> None:
        self.ids = ids
        self._answer = answer
        self.items_per_poll = items_per_poll
        self.lock = threading.RLock()  # held while a batch answers its items
        self._batches: dict[str, EmulatedBatch] = {}
        self._files: dict[str, tuple[str, bytes, float]] = {}  # id -> (name, content, created)

    def clear(self) -> None:
        with self.lock:
            self._batches.clear()
            self._files.clear()

    def handle(self, endpoint: BatchEndpoint, raw: RawRequest, ctx: WireContext) -> Rendered:
        """Answer one request to a batch endpoint (faults were applied before)."""
        wire = WIRES[endpoint.provider]
        action = endpoint.action
        try:
            if isinstance(action, str):  # retrieve or cancel: the store's own
                return self._look(endpoint.api, action, endpoint.target, raw)
            return action(self, endpoint.target, raw)
        except BatchRefused as refused:
            if refused.status == 404:
                return wire.render_not_found(refused.message, ctx)
            return wire.render_fault(Fault.bad_request(refused.message), ctx)

    # --- what the batch APIs' handlers use (`wire.batch.BatchJobs`)

    def new(
        self, api: EmulatedBatchApi, provider: Provider, model: str, items: list[BatchItemRequest]
    ) -> EmulatedBatch:
        with self.lock:
            batch = EmulatedBatch(
                api.id_prefix + self.ids.alnum(24),
                api,
                provider,
                model,
                items,
                api.first_state,
                {"created": time.time()},
            )
            self._batches[batch.id] = batch
            return batch

    def find(self, batch_id: str, api: EmulatedBatchApi) -> EmulatedBatch:
        with self.lock:
            batch = self._batches.get(batch_id)
        if batch is None or batch.api is not api:
            raise BatchRefused(404, f"No batch found with id '{batch_id}'.")
        return batch

    def add_file(self, name: str, content: bytes) -> str:
        file_id = "file-" + self.ids.alnum(22)
        with self.lock:
            self._files[file_id] = (name, content, time.time())
        return file_id

    def file(self, file_id: str) -> tuple[str, bytes, float] | None:
        with self.lock:
            return self._files.get(file_id)

    def drop_file(self, file_id: str) -> bool:
        with self.lock:
            return self._files.pop(file_id, None) is not None

    # --- the batches' lives

    def _look(self, api: EmulatedBatchApi, action: str, batch_id: str, raw: RawRequest) -> Rendered:
        """A retrieve (the batch moves one step) or a cancel, answered with the batch."""
        with self.lock:
            batch = self.find(batch_id, api)
            if action == "cancel":
                self._cancel(batch)
                answer = api.cancel_answer(batch)
                if answer is not None:
                    return json_reply(answer)
            else:
                self._step(batch)
            return json_reply(api.shown(batch, emulator_url(raw)))

    def _step(self, batch: EmulatedBatch) -> None:
        """One step of the batch's life (it is retrieved)."""
        state = batch.state
        if state == "validating":
            self._move(batch, "failed" if batch.errors else "in_progress")
        elif state == "cancelling":
            self._settle(batch, "cancelled")
            self._move(batch, "cancelled")
        elif state == "in_progress":
            self._work(batch)
        elif state == "finalizing":
            self._move(batch, "completed")

    def _work(self, batch: EmulatedBatch) -> None:
        waiting = [item for item in batch.items if item.key not in batch.results]
        for item in waiting[: self.items_per_poll]:
            result = self._answer(batch, item)
            if result is None:  # its 24 hours ran out here
                self._settle(batch, "expired")
                self._move(batch, "expired")
                return
            batch.results[item.key] = result
        if len(batch.results) == len(batch.items):
            self._move(batch, "finalizing" if batch.api.finalizes else "completed")

    def _settle(self, batch: EmulatedBatch, why: str) -> None:
        for item in batch.items:
            if item.key not in batch.results:
                batch.results[item.key] = ItemResult(
                    None, not_run="expired" if why == "expired" else "cancelled"
                )

    def _move(self, batch: EmulatedBatch, state: Any) -> None:
        now = time.time()
        batch.state = state
        batch.times[state] = now
        if batch.ended:
            batch.times["ended"] = now
            batch.api.ended(batch, self)

    def _cancel(self, batch: EmulatedBatch) -> None:
        if batch.ended or batch.state == "cancelling":
            raise BatchRefused(400, f"Cannot cancel a batch that is {batch.state}.")
        self._move(batch, "cancelling")
