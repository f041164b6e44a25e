"""Anthropic's Message Batches in the emulator: one create request holding every item,
the `message_batch` object, and the results as JSON lines."""

from __future__ import annotations

import json
import re
from typing import Any, cast

from ..batch_formats import BatchItemRequest, EmulatedBatch
from ..formats import as_list, as_object, as_str, rfc3339
from ..records import Provider
from ..server import RawRequest
from .base import Rendered
from .batch import (
    BatchAction,
    BatchJobs,
    BatchRefused,
    EmulatedBatchApi,
    emulator_url,
    json_reply,
    parsed_body,
)

__all__ = ["ANTHROPIC_BATCHES", "AnthropicBatches"]

_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # Anthropic's custom_id rule
_ITEM_PATH = "/v1/messages"  # the online route an item stands for


class AnthropicBatches(EmulatedBatchApi):
    """`/v1/messages/batches`: a batch starts `in_progress`; its results are ready once
    it has ended."""

    wire: Provider = "anthropic"
    id_prefix = "msgbatch_01"
    first_state = "in_progress"

    @property
    def routes(self) -> tuple[tuple[str, re.Pattern[str], BatchAction], ...]:
        return (
            ("POST", re.compile(r"^/v1/messages/batches$"), self.create),
            ("GET", re.compile(r"^/v1/messages/batches/([^/]+)$"), "retrieve"),
            ("GET", re.compile(r"^/v1/messages/batches/([^/]+)/results$"), self.results),
            ("POST", re.compile(r"^/v1/messages/batches/([^/]+)/cancel$"), "cancel"),
        )

    def shown(self, batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
        return anthropic_batch(batch, base_url)

    def create(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        model, items, problem = anthropic_items(parsed_body(raw))
        if problem is not None:
            raise BatchRefused(400, problem)
        with jobs.lock:
            batch = jobs.new(self, self.wire, model, items)
            return json_reply(anthropic_batch(batch, emulator_url(raw)))

    def results(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        with jobs.lock:
            batch = jobs.find(target, self)
        if not batch.ended:
            raise BatchRefused(
                400, f"Batch {batch.id} has not ended yet: its results are not ready."
            )
        return Rendered(200, {"content-type": "application/binary"}, anthropic_results(batch))


def anthropic_items(body: Any) -> tuple[str, list[BatchItemRequest], str | None]:
    """(the model, the items, a 400's message) of a create request."""
    requests = as_list(as_object(body).get("requests"))
    if not requests:
        return "", [], "requests: the batch must contain at least one request"
    items: list[BatchItemRequest] = []
    models: set[str] = set()
    for index, value in enumerate(requests):
        request = as_object(value)
        key, params = as_str(request.get("custom_id")), request.get("params")
        if key is None or not _KEY.match(key):
            return "", [], f"requests.{index}.custom_id: String should match pattern"
        if not isinstance(params, dict):
            return "", [], f"requests.{index}.params: Field required"
        if any(item.key == key for item in items):
            return "", [], f"requests.{index}.custom_id: duplicate custom_id {key!r}"
        fields = cast(dict[str, Any], params)
        models.add(str(fields.get("model", "")))
        raw = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
        items.append(BatchItemRequest(key, _ITEM_PATH, raw))
    return next(iter(models), ""), items, None


def anthropic_batch(batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
    """The `message_batch` object."""
    times = batch.times
    processing = "canceling" if batch.state == "cancelling" else "in_progress"
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": "ended" if batch.ended else processing,
        "request_counts": {
            "processing": len(batch.items) - len(batch.results),
            "succeeded": batch.count("succeeded"),
            "errored": batch.count("failed"),
            "canceled": batch.count("cancelled"),
            "expired": batch.count("expired"),
        },
        "ended_at": _rfc(times, "ended"),
        "created_at": rfc3339(times["created"]),
        "expires_at": rfc3339(times["created"] + 86_400),
        "archived_at": None,
        "cancel_initiated_at": _rfc(times, "cancelling"),
        "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results"
        if batch.ended
        else None,
    }


def anthropic_results(batch: EmulatedBatch) -> bytes:
    """The results, one JSON line per item."""
    lines: list[bytes] = []
    for key, result in batch.results.items():
        if result.not_run is not None:
            outcome: dict[str, Any] = {
                "type": "canceled" if result.not_run == "cancelled" else "expired"
            }
        elif result.succeeded:
            outcome = {"type": "succeeded", "message": result.json()}
        else:
            outcome = {"type": "errored", "error": result.json()}
        line = {"custom_id": key, "result": outcome}
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode())
    return b"\n".join(lines) + b"\n"


def _rfc(times: dict[str, float], state: str) -> str | None:
    moment = times.get(state)
    return rfc3339(moment) if moment is not None else None


ANTHROPIC_BATCHES = AnthropicBatches()
