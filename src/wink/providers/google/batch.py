"""Gemini's Batch API with inlined requests (docs/adapters/google.md#batches).

`POST /v1beta/models/{model}:batchGenerateContent` creates a batch from
`{"batch": {"displayName", "inputConfig": {"requests": {"requests": [...]}}}}`, each
item `{"request": <the body evaluate sends>, "metadata": {"key": ...}}`; it answers with
a long-running operation, `batches/{id}`, polled with `GET /v1beta/batches/{id}`
(`metadata.state`, `metadata.batchStats`). Once done, its output lists one
`inlinedResponses` entry per item, in the items' order: a `GenerateContentResponse`, or
an `error` (a `google.rpc.Status`, its gRPC code read as the HTTP status it stands for).
Spoken over httpx2, as the rest of the Gemini adapter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ...core.foundation.batches import BatchState, BatchStatus
from ...core.foundation.carriage import MB
from ...core.transport.batches import (
    BatchLimits,
    BatchLine,
    ItemAnswer,
    WireStatus,
    an_object,
    created_id,
    json_text,
)
from ...core.transport.errors import MalformedResponse, StatusFacts
from ...core.transport.http import EncodedRequest, Transport
from .errors import google_error_facts
from .http import GeminiCalls, content_of, endpoint, resource_url

__all__ = ["GeminiBatches"]

_LIMITS = BatchLimits(max_items=None, max_bytes=20 * MB, what="the inlined requests")
_STATES: dict[str, BatchState] = {
    "BATCH_STATE_PENDING": "validating",
    "BATCH_STATE_RUNNING": "in_progress",
    "BATCH_STATE_SUCCEEDED": "completed",
    "BATCH_STATE_FAILED": "failed",
    "BATCH_STATE_CANCELLED": "cancelled",
    "BATCH_STATE_EXPIRED": "expired",
}
# google.rpc.Code -> the HTTP status it maps to (the API design guide's table).
_HTTP_OF_CODE = {
    1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429,
    9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401,
}  # fmt: skip


class GeminiBatches:
    """Batch mode for one model, with the adapter's base URL and key rules."""

    __slots__ = ("_base", "_calls", "_model")

    def __init__(self, base_url: str, model: str, calls: GeminiCalls) -> None:
        self._base, self._model, self._calls = base_url, model, calls

    @property
    def limits(self) -> BatchLimits:
        return _LIMITS

    def size(self, lines: Sequence[BatchLine]) -> int:
        return len(_body(lines))

    async def submit(
        self, transport: Transport, lines: Sequence[BatchLine], time_limit: float
    ) -> str:
        url = endpoint(self._base, self._model, "batchGenerateContent")
        wire = EncodedRequest(url, _body(lines))
        return await created_id(transport, wire, time_limit, "name", "the batch operation")

    async def status(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        url = resource_url(self._base, batch_id)
        response = await transport.call(
            lambda client: client.get(
                url, headers=self._calls.headers_for(client), timeout=time_limit
            )
        )
        return _status(an_object(json.loads(content_of(response)), "the batch operation"))

    async def cancel(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        url = resource_url(self._base, f"{batch_id}:cancel")
        await transport.post(EncodedRequest(url, b"{}"), time_limit)
        return await self.status(transport, batch_id, time_limit)

    async def answers(
        self, transport: Transport, ended: WireStatus, keys: Sequence[str], time_limit: float
    ) -> dict[str, ItemAnswer]:
        raw = ended.raw
        error = raw.get("error")
        if ended.status.state == "failed" and isinstance(error, dict):
            failure = _failure(cast(dict[str, Any], error))
            return {key: ItemAnswer(failure=failure) for key in keys}
        found: dict[str, ItemAnswer] = {}
        for index, item in enumerate(_inlined(raw)):
            metadata = item.get("metadata")
            key = cast(dict[str, Any], metadata).get("key") if isinstance(metadata, dict) else None
            if not isinstance(key, str):  # the order is the items' order
                if index >= len(keys):
                    raise MalformedResponse("the batch has more answers than items")
                key = keys[index]
            error = item.get("error")
            if isinstance(error, dict):
                found[key] = ItemAnswer(failure=_failure(cast(dict[str, Any], error)))
            else:
                found[key] = ItemAnswer(body=item.get("response"))
        return found


def _body(lines: Sequence[BatchLine]) -> bytes:
    items = b",".join(
        b'{"request":%s,"metadata":{"key":%s}}' % (line.request.content, json_text(line.key))
        for line in lines
    )
    return (
        b'{"batch":{"displayName":"wink batch","inputConfig":{"requests":{"requests":[%s]}}}}'
        % (items)
    )


def _status(raw: dict[str, Any]) -> WireStatus:
    name, metadata = raw.get("name"), raw.get("metadata")
    fields = cast(dict[str, Any], metadata) if isinstance(metadata, dict) else {}
    state = _STATES.get(str(fields.get("state")))
    if not isinstance(name, str) or state is None:
        raise MalformedResponse(f"not a batch operation (state {fields.get('state')!r})")
    stats = fields.get("batchStats")
    counts = cast(dict[str, Any], stats) if isinstance(stats, dict) else {}
    total, succeeded, failed, pending = (
        _count(counts, field)
        for field in (
            "requestCount",
            "successfulRequestCount",
            "failedRequestCount",
            "pendingRequestCount",
        )
    )
    return WireStatus(BatchStatus(name, state, total, succeeded, failed, pending), raw)


def _count(counts: Mapping[str, Any], field: str) -> int:
    """A count of `batchStats`: an int64, written as a string."""
    value = counts.get(field, 0)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise MalformedResponse(f"batchStats.{field} is not a count") from None


def _inlined(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answers of a done operation: its batch's `output` (in the metadata), else
    its `response`."""
    metadata = raw.get("metadata")
    output = cast(dict[str, Any], metadata).get("output") if isinstance(metadata, dict) else None
    if not isinstance(output, dict):
        output = raw.get("response")
    if not isinstance(output, dict):
        return []
    inlined = cast(dict[str, Any], output).get("inlinedResponses")
    listed = (
        cast(dict[str, Any], inlined).get("inlinedResponses") if isinstance(inlined, dict) else None
    )
    if not isinstance(listed, list):
        return []
    return [an_object(item, "an inlined response") for item in cast(list[Any], listed)]


def _failure(status: dict[str, Any]) -> StatusFacts:
    """A `google.rpc.Status` read as the error answer it stands for."""
    code, message = status.get("code"), status.get("message")
    if isinstance(code, int) and 400 <= code <= 599:
        http = code  # already an HTTP status
    else:
        http = _HTTP_OF_CODE.get(code, 500) if isinstance(code, int) else 500
    text = message if isinstance(message, str) and message else "a batch request failed"
    return google_error_facts(http, {"error": status}, text)
