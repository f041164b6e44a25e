"""The limiter: where what an adapter learns about a provider's limit lives.

Both limiters hand out the same pacer (`RequestPacer`, one algorithm) over a different
store of the pace: in-process by default (`InProcessLimiter`, a `MemoryStore`), in Redis
for a fleet of processes (`wink.RedisLimiter`). The adapter, and the loop above it, do
not know which.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from datetime import timedelta
from typing import Protocol

from ..foundation.errors import ConfigurationError
from ..foundation.messages import RateLimitInfo
from .pacing import Permit, RequestPacer
from .retry import HasRemaining

__all__ = ["InProcessLimiter", "Limiter", "Pacer", "check_key"]


class Pacer(Protocol):
    """One key's pacing, as the runner uses it around each request.

    `permit = await pacer.acquire(deadline)` before sending (None: the wait would
    outlast the deadline, do not send); then `on_response(permit, info)` when the
    provider answered (its rate-limit headers, None when it sent none; for a stream, at
    the response head), or `on_throttle(permit, retry_after, limit_reached=...)` after a
    rate-limit 429 (`limit_reached`: the answer says a limit was hit, see
    `ThrottleDetails`). The permit carries what the answer is judged against; no
    task-local state.
    """

    async def acquire(self, deadline: HasRemaining | None = None) -> Permit | None: ...

    async def on_response(self, permit: Permit, info: RateLimitInfo | None) -> None: ...

    async def on_throttle(
        self,
        permit: Permit,
        retry_after: float | timedelta | None,
        *,
        limit_reached: bool = False,
    ) -> None: ...


class Limiter(ABC):
    """Hands out one `Pacer` per key; adapters sharing a limiter and a key share a pace.

    An adapter's key is `"provider:model"` (`adapter.name`): OpenAI, Anthropic and
    Gemini all set their request limits per model.
    """

    @abstractmethod
    def pacer(self, key: str) -> Pacer:
        """The pacer for `key`, the same object for the same key."""


def check_key(key: object) -> None:
    """A limiter key is a non-empty string (`ConfigurationError`, a ValueError, if not)."""
    if not isinstance(key, str) or not key:
        raise ConfigurationError(
            f"a limiter key is a non-empty string such as 'openai:gpt-4.1', got {key!r}",
            option="key",
        )


class InProcessLimiter(Limiter):
    """The default: pacing state in this process, one `RequestPacer` per key (over a
    `MemoryStore`).

    Every adapter gets its own unless you pass one `InProcessLimiter` to several (for
    example two adapters on the same API key and model in one process).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pacers: dict[str, RequestPacer] = {}

    def __repr__(self) -> str:
        return f"InProcessLimiter(keys={sorted(self._pacers)!r})"

    def pacer(self, key: str) -> RequestPacer:
        check_key(key)
        with self._lock:
            pacer = self._pacers.get(key)
            if pacer is None:
                pacer = self._pacers[key] = RequestPacer()
            return pacer
