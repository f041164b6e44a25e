"""A provider's batch API, as wink drives it: what a provider's `batch.py` implements.

A batch goes out as lines (`BatchLine`: an item's key and its request exactly as
`evaluate` would send it, `Exchange.encode`); the provider's wire (`BatchWire`) submits
them, reports the batch's status (`WireStatus`), and reads each item's answer back in
neutral form (`ItemAnswer`): the body of a 2xx answer, for the provider's own
`parse_response`; an error answer's facts, for `error_from_facts`, so a refused item is
the error `evaluate` raises for the same answer; or why it never ran. Nothing here knows
a provider; each provider folder reaches its wire through its `Provider.batch_wire()`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from ..foundation.batches import BatchStatus
from .errors import MalformedResponse, StatusFacts
from .http import EncodedRequest, Transport

__all__ = [
    "BatchLimits",
    "BatchLine",
    "BatchWire",
    "ItemAnswer",
    "NotRun",
    "WireStatus",
    "an_object",
    "created_id",
    "json_text",
    "keyed_lines",
    "read_jsonl",
]

NotRun = Literal["expired", "cancelled"]
"""Why an item never ran: the batch's window ended, or it was cancelled, first."""


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One item of a batch: its key (`custom_id`) and its request, encoded once."""

    key: str
    request: EncodedRequest


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """A provider's documented limits on one batch: how many items, how many bytes (of
    the JSONL file, or of the create request), checked before anything is sent."""

    max_items: int | None
    max_bytes: int
    what: str  # what `max_bytes` measures, in the provider's words


@dataclass(frozen=True, slots=True)
class WireStatus:
    """A status, and the provider's batch object it was read from (where its results
    are: the output files, the results URL, the inlined answers)."""

    status: BatchStatus
    raw: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ItemAnswer:
    """What became of one item: `body`, the decoded 2xx answer (as `evaluate` reads
    it); or `failure`, the error answer it got instead; or `not_run` (`reason`: the
    provider's words)."""

    body: Any = None
    failure: StatusFacts | None = None
    not_run: NotRun | None = None
    reason: str = ""


class BatchWire(Protocol):
    """One provider's batch API for one model. Each call raises the SDK's (or HTTP's)
    own exceptions, mapped by the provider's `map_errors` around it; `time_limit` is the
    adapter's timeout for one HTTP call."""

    @property
    def limits(self) -> BatchLimits: ...

    def size(self, lines: Sequence[BatchLine]) -> int:
        """The bytes `limits.max_bytes` counts for these lines."""
        ...

    async def submit(
        self, transport: Transport, lines: Sequence[BatchLine], time_limit: float
    ) -> str:
        """Create the batch; its id. A refusal leaves nothing behind (an uploaded file
        is deleted)."""
        ...

    async def status(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        """Where the batch is."""
        ...

    async def answers(
        self, transport: Transport, ended: WireStatus, keys: Sequence[str], time_limit: float
    ) -> dict[str, ItemAnswer]:
        """Each item's answer by key, once the batch has ended; `keys` are the items' in
        the order submitted. An item left out was neither answered nor reported."""
        ...

    async def cancel(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        """Ask the provider to cancel the batch (it may still finish items)."""
        ...


def json_text(value: str) -> bytes:
    """A string as JSON, to put around bodies already encoded (a line, a request)."""
    return json.dumps(value, ensure_ascii=False).encode()


def read_jsonl(content: bytes | str, what: str) -> list[dict[str, Any]]:
    """The objects of a JSON Lines body (blank lines skipped); `MalformedResponse`
    naming `what` for a line that is not a JSON object."""
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    found: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as error:
            raise MalformedResponse(f"{what}, line {number}: not JSON ({error})") from error
        if not isinstance(value, dict):
            raise MalformedResponse(f"{what}, line {number}: not a JSON object")
        found.append(cast(dict[str, Any], value))
    return found


def keyed_lines(content: bytes | str, what: str) -> list[tuple[str, dict[str, Any]]]:
    """A results file's lines with their item's key (`custom_id`), in order;
    `MalformedResponse` naming `what` for a line without one."""
    found: list[tuple[str, dict[str, Any]]] = []
    for line in read_jsonl(content, what):
        key = line.get("custom_id")
        if not isinstance(key, str):
            raise MalformedResponse(f"a line of {what} has no custom_id")
        found.append((key, line))
    return found


def an_object(value: Any, what: str) -> dict[str, Any]:
    """`value` if it is a JSON object, else `MalformedResponse` naming `what`."""
    if not isinstance(value, dict):
        raise MalformedResponse(f"{what} is not a JSON object")
    return cast(dict[str, Any], value)


async def created_id(
    transport: Transport, wire: EncodedRequest, time_limit: float, field: str, what: str
) -> str:
    """POST a create request; the string `field` of the object it answers (`what`)."""
    content, _ = await transport.post(wire, time_limit)
    created = an_object(json.loads(content), what)
    value = created.get(field)
    if not isinstance(value, str) or not value:
        raise MalformedResponse(f"{what} has no {field}")
    return value
