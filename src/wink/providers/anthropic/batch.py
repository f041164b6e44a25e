"""Anthropic's Message Batches API (docs/adapters/anthropic.md#batches).

One create request, `POST /v1/messages/batches`, carries every item as
`{"custom_id", "params"}`, the params exactly the body `evaluate` sends (so it is sent
raw, through the SDK's documented `client.post`, not rebuilt by `batches.create`). The
batch is polled with `client.messages.batches.retrieve`; once `processing_status` is
`ended`, its `results_url` streams one JSON line per item: `succeeded` (the message),
`errored` (an error body, its status told by its type), `canceled` or `expired`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import httpx2

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
    keyed_lines,
)
from ...core.transport.errors import MalformedResponse, read_count
from ...core.transport.http import EncodedRequest, Transport
from .messages import ERROR_STATUS, anthropic_error_facts

__all__ = ["AnthropicBatches"]

_PATH = "/v1/messages/batches"
_LIMITS = BatchLimits(max_items=100_000, max_bytes=256 * MB, what="the create request")
_RUNNING: dict[str, BatchState] = {"in_progress": "in_progress", "canceling": "cancelling"}


class AnthropicBatches:
    """The Message Batches API (one model's: the params name it)."""

    __slots__ = ()

    @property
    def limits(self) -> BatchLimits:
        return _LIMITS

    def size(self, lines: Sequence[BatchLine]) -> int:
        return len(_body(lines))

    async def submit(
        self, transport: Transport, lines: Sequence[BatchLine], time_limit: float
    ) -> str:
        wire = EncodedRequest(_PATH, _body(lines))
        return await created_id(transport, wire, time_limit, "id", "the created message batch")

    async def status(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        batch = await transport.call(
            lambda client: client.messages.batches.retrieve(batch_id, timeout=time_limit)
        )
        return _status(batch.to_dict(mode="json"))

    async def cancel(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        batch = await transport.call(
            lambda client: client.messages.batches.cancel(batch_id, timeout=time_limit)
        )
        return _status(batch.to_dict(mode="json"))

    async def answers(
        self, transport: Transport, ended: WireStatus, keys: Sequence[str], time_limit: float
    ) -> dict[str, ItemAnswer]:
        url = ended.raw.get("results_url")
        if not isinstance(url, str) or not url:
            return {}
        results = await transport.call(
            lambda client: client.get(url, cast_to=httpx2.Response, options={"timeout": time_limit})
        )
        return {
            key: _answer(an_object(line.get("result"), "a batch result"))
            for key, line in keyed_lines(results.content, "the batch's results")
        }


def _body(lines: Sequence[BatchLine]) -> bytes:
    items = b",".join(
        b'{"custom_id":%s,"params":%s}' % (json_text(line.key), line.request.content)
        for line in lines
    )
    return b'{"requests":[%s]}' % items


def _status(raw: dict[str, Any]) -> WireStatus:
    processing, batch_id = raw.get("processing_status"), raw.get("id")
    if processing not in ("in_progress", "canceling", "ended") or not isinstance(batch_id, str):
        raise MalformedResponse(f"not a message batch (processing_status {processing!r})")
    counts = raw.get("request_counts")
    pending, succeeded = read_count(counts, "processing"), read_count(counts, "succeeded")
    failed, cancelled = read_count(counts, "errored"), read_count(counts, "canceled")
    expired = read_count(counts, "expired")
    state: BatchState = _RUNNING.get(cast(str, processing), "completed")
    if processing == "ended" and raw.get("cancel_initiated_at"):
        state = "cancelled"
    elif processing == "ended" and expired:
        state = "expired"  # its 24 hours ran out with items left
    total = pending + succeeded + failed + cancelled + expired
    status = BatchStatus(batch_id, state, total, succeeded, failed, pending, expired, cancelled)
    return WireStatus(status, raw)


def _answer(result: Mapping[str, Any]) -> ItemAnswer:
    kind = result.get("type")
    if kind == "succeeded":
        return ItemAnswer(body=result.get("message"))
    if kind == "expired":
        return ItemAnswer(not_run="expired")  # no words of its own
    if kind == "canceled":
        return ItemAnswer(not_run="cancelled")
    if kind != "errored":
        raise MalformedResponse(f"a batch result of the unknown type {kind!r}")
    error = result.get("error")
    detail = cast(dict[str, Any], error).get("error") if isinstance(error, dict) else None
    error_type = cast(dict[str, Any], detail).get("type") if isinstance(detail, dict) else None
    status = ERROR_STATUS.get(error_type, 500) if isinstance(error_type, str) else 500
    return ItemAnswer(failure=anthropic_error_facts(status, error, "an errored batch request"))
