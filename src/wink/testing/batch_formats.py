"""A batch as the emulator holds it, in neutral form: its items, its state, each item's
answer. Each wire's batch API (`wire/<wire>_batch.py`) reads its create request into
items and writes the batch object and its results in that API's shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..core.foundation.batches import ENDED_STATES, BatchState
from .records import Provider

if TYPE_CHECKING:
    from .wire.batch import EmulatedBatchApi

__all__ = ["BatchItemRequest", "EmulatedBatch", "ItemResult"]


@dataclass(frozen=True, slots=True)
class BatchItemRequest:
    """One item: its key, the online route it stands for, and its body as sent."""

    key: str
    path: str
    body: bytes


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What became of an item: an answer (`status`, `body`, as the online route would
    have answered), or `not_run` ("expired", "cancelled")."""

    status: int | None
    body: bytes = b""
    not_run: Literal["expired", "cancelled"] | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        """The answer body as JSON (its text when it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return self.body.decode("utf-8", "replace")


@dataclass(eq=False, slots=True)
class EmulatedBatch:
    """One batch the emulator holds."""

    id: str
    api: EmulatedBatchApi  # the batch API it was created on
    provider: Provider  # the wire its items speak
    model: str
    items: list[BatchItemRequest]
    state: BatchState
    times: dict[str, float]
    results: dict[str, ItemResult] = field(default_factory=dict[str, ItemResult])
    errors: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    input_file_id: str = ""
    endpoint: str = ""  # the online route its items stand for (OpenAI's batch names it)
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES

    def count(self, kind: Literal["succeeded", "failed", "expired", "cancelled"]) -> int:
        results = self.results.values()
        if kind == "succeeded":
            return sum(result.succeeded for result in results)
        if kind == "failed":
            return sum(result.status is not None and not result.succeeded for result in results)
        return sum(result.not_run == kind for result in results)
