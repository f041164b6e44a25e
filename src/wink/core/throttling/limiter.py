"""The limiter: where what an adapter learns about a provider's limit lives.

The throttle window and the pacer's state live behind one interface: in-process by
default (`InProcessLimiter`), in Redis for a fleet of processes (`wink.RedisLimiter`).
The adapter, and the loop above it, do not know which.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from datetime import timedelta
from typing import Protocol

from ..foundation.errors import ConfigurationError
from ..foundation.messages import RateLimitInfo
from .pacing import RequestPacer
from .retry import HasRemaining

__all__ = ["InProcessLimiter", "Limiter", "Pacer", "check_key"]


class Pacer(Protocol):
    """One key's pacing, as an adapter uses it around each request.

    `if not pacer.idle: await pacer.acquire(deadline)` before sending (False: the wait
    would outlast the deadline, do not send); then, from the same task, `on_throttle`
    after a rate-limit 429 or `on_response` with the answer's rate-limit headers (None
    when it had none).
    """

    @property
    def idle(self) -> bool:
        """True when `acquire` would return at once; reading it costs next to nothing."""
        ...

    async def acquire(self, deadline: HasRemaining | None = None) -> bool: ...

    async def on_throttle(self, retry_after: float | timedelta | None) -> None: ...

    async def on_response(self, info: RateLimitInfo | None) -> None: ...


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
    """The default: pacing state in this process, one `RequestPacer` per key.

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
