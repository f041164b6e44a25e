"""The emulator's token bucket, and the snapshot its headers are rendered from."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .faults import RateLimit
from .formats import ceil_ms

__all__ = ["RateSnapshot", "TokenBucket"]


@dataclass(frozen=True, slots=True)
class RateSnapshot:
    """The bucket right after one request: what the rate-limit headers report.

    `retry_after` is set only when the request was refused: the exact time (rounded up to
    the millisecond) until the next token exists.
    """

    limit: int
    remaining: int
    reset_after: float
    retry_after: float | None = None


class TokenBucket:
    """Starts full; a request takes one token or is refused with an honest wait."""

    def __init__(self, limit: RateLimit, now: float) -> None:
        self.limit = limit
        self._tokens = float(limit.burst)
        self._updated = now

    def take(self, now: float) -> RateSnapshot:
        """Refill for the time elapsed, then take a token if there is a whole one."""
        rate = self.limit.requests_per_second
        burst = self.limit.burst
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(float(burst), self._tokens + elapsed * rate)
        self._updated = now
        retry_after: float | None = None
        if self._tokens >= 1.0 - 1e-9:
            self._tokens = max(0.0, self._tokens - 1.0)
        else:
            retry_after = max(1, ceil_ms((1.0 - self._tokens) / rate)) / 1000.0
        return RateSnapshot(
            limit=burst,
            remaining=math.floor(self._tokens + 1e-9),
            reset_after=(burst - self._tokens) / rate,
            retry_after=retry_after,
        )
