"""What a provider says of a batch, in neutral form (docs/batch.md).

`BatchStatus` is what `adapter.poll_batch(job)` returns: the batch's state, in the same
words for every provider, and its counts. `BATCH_KEY` is the one rule for an item's key
(its `custom_id`): the strictest provider's (Anthropic's), so a job moves between
providers' batch APIs unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["BATCH_KEY", "ENDED_STATES", "BatchState", "BatchStatus"]

BatchState = Literal[
    "validating",
    "in_progress",
    "finalizing",
    "cancelling",
    "completed",
    "failed",
    "expired",
    "cancelled",
]
"""Where a provider batch is. Running: `validating` (checked before it starts: OpenAI
`validating`, Gemini `BATCH_STATE_PENDING`), `in_progress`, `finalizing` (OpenAI writes
its result files), `cancelling`. Ended: `completed` (every item answered or refused),
`failed` (refused as a whole after it was accepted: OpenAI's input validation, Gemini
`BATCH_STATE_FAILED`), `expired` (its 24 hours ran out first), `cancelled`."""

ENDED_STATES: frozenset[BatchState] = frozenset({"completed", "failed", "expired", "cancelled"})
"""The states after which nothing changes: its results can be read."""

BATCH_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""An item's key: 1 to 64 letters, digits, `_` or `-` (Anthropic's `custom_id` rule)."""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """One look at a provider batch (`adapter.poll_batch(job)`).

    `state` in the same words for every provider (`BatchState`); `ended` once it can
    change no more. The counts are the provider's: `total` items, `succeeded` (answered),
    `failed` (refused: an error answer), `pending` (not done yet), and those that never
    ran, `expired` and `cancelled` (OpenAI counts these among `failed`).
    """

    id: str
    state: BatchState
    total: int
    succeeded: int = 0
    failed: int = 0
    pending: int = 0
    expired: int = 0
    cancelled: int = 0

    @property
    def ended(self) -> bool:
        """Whether the batch has ended (completed, failed, expired or cancelled)."""
        return self.state in ENDED_STATES
