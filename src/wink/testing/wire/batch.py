"""The contract of a wire's batch API in the emulator (`<wire>_batch.py`), and what the
batch APIs share: a wire names its batch API (`WireFormat.batches`), which says its
paths, its batch ids and first state, how its batch object is shown, and handles the
requests that are its own (a create, a results download, OpenAI's files); retrieving
and cancelling a batch, and its life, are the neutral store's (`testing/batches.py`)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any, Literal, Protocol

from ...core.foundation.batches import BatchState
from ..batch_formats import BatchItemRequest, EmulatedBatch
from ..formats import IdSource, dump
from ..records import Provider
from ..server import RawRequest
from .base import Rendered

__all__ = [
    "BatchAction",
    "BatchHandler",
    "BatchJobs",
    "BatchRefused",
    "EmulatedBatchApi",
    "emulator_url",
    "json_reply",
    "parsed_body",
]


class BatchJobs(Protocol):
    """The store a batch API's handlers work on: its batches and batch files."""

    lock: threading.RLock  # held while a batch answers its items
    ids: IdSource

    def new(
        self, api: EmulatedBatchApi, provider: Provider, model: str, items: list[BatchItemRequest]
    ) -> EmulatedBatch:
        """A new batch of `items`, on `api`, in its first state."""
        ...

    def find(self, batch_id: str, api: EmulatedBatchApi) -> EmulatedBatch:
        """The batch `batch_id` of `api` (`BatchRefused` 404 when there is none)."""
        ...

    def add_file(self, name: str, content: bytes) -> str:
        """A new file's id."""
        ...

    def file(self, file_id: str) -> tuple[str, bytes, float] | None:
        """(name, content, created) of a file, None when there is none."""
        ...

    def drop_file(self, file_id: str) -> bool:
        """Delete a file; False when there was none."""
        ...


BatchHandler = Callable[[BatchJobs, str, RawRequest], Rendered]
"""One of a batch API's own requests: (the store, the id or route its path names, the
request) -> the answer."""

BatchAction = Literal["retrieve", "cancel"] | BatchHandler
"""What a batch path does: retrieve or cancel a batch (the store's), or the API's own."""


class EmulatedBatchApi:
    """One provider's batch API: its paths (`(method, pattern, action)`, a pattern's
    group the id or route it names), the wire whose error bodies it answers with, its
    batch ids, the state a batch starts in, and how its batch object is shown."""

    wire: Provider
    id_prefix: str
    first_state: BatchState
    finalizes: bool = False  # `finalizing` between its last item and `completed`

    @property
    def routes(self) -> tuple[tuple[str, re.Pattern[str], BatchAction], ...]:
        return ()

    def shown(self, batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
        """The batch object, in the API's shape (`base_url`: the emulator's own URL)."""
        raise NotImplementedError

    def cancel_answer(self, batch: EmulatedBatch) -> dict[str, Any] | None:
        """What a cancel answers, if not the batch object."""
        return None

    def ended(self, batch: EmulatedBatch, jobs: BatchJobs) -> None:
        """What an ended batch leaves behind besides its object (OpenAI: its files)."""


class BatchRefused(Exception):
    """A batch request the API refuses: a 400, or a 404 for what does not exist."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def json_reply(value: Any) -> Rendered:
    return Rendered(200, {"content-type": "application/json"}, dump(value))


def parsed_body(raw: RawRequest) -> Any:
    try:
        return json.loads(raw.body) if raw.body else None
    except ValueError:
        raise BatchRefused(400, "We could not parse the JSON body of your request.") from None


def emulator_url(raw: RawRequest) -> str:
    """The emulator's own URL, as the client reached it (for `results_url`)."""
    return f"http://{raw.headers.get('host', '127.0.0.1')}"
