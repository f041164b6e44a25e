"""The contract every wire format implements, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..caching import CachePrefix
from ..faults import Fault
from ..formats import IdSource, seconds_text
from ..history import HistoryEntry
from ..hosts import EmulatedHost, HostRoute
from ..parts import FoundPart
from ..ratelimit import RateSnapshot
from ..records import Provider, ToolResultView
from ..server import RawRequest
from ..thinking import ReasoningLedger
from ..turns import Turn

if TYPE_CHECKING:
    from .batch import EmulatedBatchApi

__all__ = [
    "Headers",
    "Rendered",
    "WireContext",
    "WireFormat",
    "fault_message",
    "retry_headers",
]

Headers = dict[str, str]


@dataclass(frozen=True, slots=True)
class WireContext:
    """Everything a wire format needs to render one answer."""

    model: str
    body: dict[str, Any]
    now: float
    ids: IdSource
    rate: RateSnapshot | None = None
    google_call_ids: bool = False
    ledger: ReasoningLedger | None = None  # what a follow-up must carry back
    host: EmulatedHost | None = None  # the host whose path it came on (None: the wire's own)


@dataclass(frozen=True, slots=True)
class Rendered:
    """A complete HTTP answer before transport-level faults are applied."""

    status: int
    headers: Headers
    body: bytes


class WireFormat(Protocol):
    """One provider's wire: turns, faults and rate-limit state rendered as it sends them."""

    provider: Provider

    base_path: str  # what follows the emulator's URL in the SDK's `base_url`

    batches: EmulatedBatchApi | None  # the provider's batch API (`<wire>_batch.py`), if any

    def own_route(self, raw: RawRequest) -> HostRoute | None:
        """The route of a request on the provider's own path for this wire, else None."""
        ...

    def stray_not_found(self, raw: RawRequest, routed: bool, ctx: WireContext) -> Rendered | None:
        """The 404 for a request the emulator does not serve, when it is this wire's
        (`routed`: its path named this wire; else its headers or path say so), else None."""
        ...

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        """A 200 with the turn in the provider's response body."""
        ...

    def render_fault(self, fault: Fault, ctx: WireContext) -> Rendered:
        """A status fault (429, 4xx, 5xx) or `wrong_shape`, in the provider's error body."""
        ...

    def render_not_found(self, message: str, ctx: WireContext) -> Rendered:
        """404 in the provider's error body."""
        ...

    def stream_headers(self) -> Headers:
        """The content type (and caching) of a streamed answer's head."""
        ...

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        """The whole answer `body` (from `render_turn`) as the wire streams it, one
        framed event each, text, thinking and arguments in pieces of `size` characters."""
        ...

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        """The events the wire sends when it fails mid-stream (then the stream ends)."""
        ...

    def stream_event(self, value: Any) -> bytes:
        """`value` as one event in the wire's stream framing."""
        ...

    def malformed_event(self, event: bytes) -> bytes:
        """What a stream sends in place of `event` when it arrives broken."""
        ...

    def rate_headers(self, rate: RateSnapshot, now: float) -> Headers:
        """Rate-limit headers sent on every response while the rate limiter is on."""
        ...

    def validate(self, body: dict[str, Any]) -> str | None:
        """A 400 message when required fields are missing, else None."""
        ...

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        """The 400 the real API gives when the request's tool settings are ones it refuses
        (a `tool_choice` without tools or naming no tool, forced with thinking on), its
        conversation breaks its rules (a tool call with no result, a result with no call,
        a role it refuses) or it sends the model's earlier turns back wrong (thinking
        dropped or altered, a reasoning item without its item), else None."""
        ...

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        """The conversation the request carries, in neutral form (instructions apart)."""
        ...

    def instructions(self, body: dict[str, Any]) -> str | None:
        """The system instructions the request carries, wherever the wire puts them."""
        ...

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        """The tool results the request carries, in order."""
        ...

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        """Names of the tools the request declares."""
        ...

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        """The images, documents and audio the request carries, in order."""
        ...

    def refuse_part(self, part: FoundPart, data: bytes | None) -> Fault | None:
        """The 400 the real API gives `part` (`data`: its bytes, None when they are not
        valid base64), else None."""
        ...

    def cache_prefixes(self, body: dict[str, Any]) -> tuple[CachePrefix, ...]:
        """The prompt prefixes the provider caches for this request, shortest first."""
        ...


def fault_message(fault: Fault, default: str | Callable[[], str]) -> str:
    """The fault's own message if it has one, else the provider's default text."""
    if fault.message is not None:
        return fault.message
    return default if isinstance(default, str) else default()


def retry_headers(fault: Fault) -> Headers:
    """`retry-after` (seconds) and/or `retry-after-ms`, as the fault's header style asks."""
    wait, style = fault.retry_after, fault.header_style
    if wait is None or style is None:
        return {}
    headers: Headers = {}
    if style in ("seconds", "both"):
        headers["retry-after"] = seconds_text(wait)
    if style in ("ms", "both"):
        headers["retry-after-ms"] = seconds_text(wait * 1000.0)
    return headers
