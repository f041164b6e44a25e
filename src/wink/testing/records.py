"""What the emulator saw: recorded requests, the request view a script gets, counters."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..core.transport.errors import REDACTED
from .formats import as_list, as_object, as_str
from .history import HistoryEntry
from .parts import ReceivedPart

__all__ = [
    "REDACTED",
    "EmulatedRequest",
    "EmulatorStats",
    "Provider",
    "RecordedRequest",
    "ToolResultView",
    "redact_headers",
]

Provider = Literal["openai", "openai-responses", "anthropic", "google"]
"""A wire format the emulator speaks ("openai" is Chat Completions)."""

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"})


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-case names, secrets replaced, so recordings can be printed and compared."""
    return {
        name.lower(): REDACTED if name.lower() in _SECRET_HEADERS else value
        for name, value in headers.items()
    }


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as received: `body` is the parsed JSON, or the raw text if it was not JSON.

    `number` counts every request since the emulator started (1-based); `received_at` is
    `time.time()` on arrival. An item of a batch is recorded as the request it stands for
    (its route, its body), `batch` naming the batch (None for a request that came alone).
    """

    number: int
    provider: Provider | None
    method: str
    path: str
    query: str
    body: Any
    headers: Mapping[str, str]
    received_at: float
    batch: str | None = None

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        """The conversation the request carried, in neutral form (`HistoryEntry`)."""
        from .wire import WIRES  # the wire formats record what they read

        body: object = self.body
        if self.provider is None or not isinstance(body, dict):
            return ()
        return WIRES[self.provider].history(cast(dict[str, Any], body))

    @property
    def instructions(self) -> str | None:
        """The system instructions the request carried (None: none)."""
        from .wire import WIRES

        body: object = self.body
        if self.provider is None or not isinstance(body, dict):
            return None
        return WIRES[self.provider].instructions(cast(dict[str, Any], body))


@dataclass(frozen=True, slots=True)
class ToolResultView:
    """A tool result found in a request, in neutral form.

    `content` is what the provider carries (OpenAI text, Anthropic text or blocks, the
    Gemini `response` object). `is_error` is the provider's native failure mark (Anthropic
    `is_error`, Gemini `response.error`); it is None for OpenAI, which has no such flag.
    """

    call_id: str | None
    name: str | None
    content: Any
    is_error: bool | None

    @property
    def text(self) -> str:
        """The content flattened to text (text blocks joined; a Gemini error/output string)."""
        return _flatten(self.content)


@dataclass(frozen=True, slots=True)
class EmulatedRequest:
    """What a script callable sees: the parsed request plus a neutral view of it
    (`parts`: its images, documents and audio, in order; `history`: the conversation it
    carries; `instructions`: its system instructions)."""

    number: int
    provider: Provider
    path: str
    model: str
    body: Any
    headers: Mapping[str, str]
    tool_results: tuple[ToolResultView, ...]
    tools: tuple[str, ...]
    parts: tuple[ReceivedPart, ...] = ()
    history: tuple[HistoryEntry, ...] = ()
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class EmulatorStats:
    """Counters since start (or the last `clear()`).

    `responses` maps status to count for answered requests; `throttled` counts the 429s the
    rate limiter sent; `dropped` and `hung` count connections closed without an answer;
    `internal_errors` the requests the emulator failed to answer (a bug in it or in the
    script callable: `ProviderEmulator.check()`), answered with status 418.
    """

    requests: int
    responses: Mapping[int, int]
    throttled: int
    dropped: int
    hung: int
    internal_errors: int = 0


def _flatten(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for item in as_list(content):
            text = item if isinstance(item, str) else as_str(as_object(item).get("text"))
            parts.append(text or "")
        return "".join(parts)
    for key in ("error", "output"):
        text = as_str(as_object(content).get(key))
        if text is not None:
            return text
    return json.dumps(content, ensure_ascii=False)
