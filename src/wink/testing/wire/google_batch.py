"""Gemini's batch mode in the emulator: inlined requests posted to a model's
`batchGenerateContent`, a long-running operation, its inlined responses."""

from __future__ import annotations

import json
import re
from typing import Any

from ...core.foundation.batches import BatchState
from ..batch_formats import BatchItemRequest, EmulatedBatch, ItemResult
from ..formats import as_list, as_object, as_str, rfc3339
from ..records import Provider
from ..server import RawRequest
from .base import Rendered
from .batch import BatchAction, BatchJobs, BatchRefused, EmulatedBatchApi, json_reply, parsed_body

__all__ = ["GOOGLE_BATCHES", "GoogleBatches"]

_VERSION = r"(?:v1|v1beta|v1alpha)"
_BETA = r"(?:v1beta|v1alpha)"  # `/v1/batches/<id>` is OpenAI's (`openai_batch.py`)
_BATCH = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
_OUTPUT = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
_STATES: dict[BatchState, str] = {
    "validating": "BATCH_STATE_PENDING",
    "in_progress": "BATCH_STATE_RUNNING",
    "cancelling": "BATCH_STATE_RUNNING",
    "completed": "BATCH_STATE_SUCCEEDED",
    "failed": "BATCH_STATE_FAILED",
    "expired": "BATCH_STATE_EXPIRED",
    "cancelled": "BATCH_STATE_CANCELLED",
}
# A google.rpc status name -> its code (what a batch's inlined error carries).
_RPC_CODES = {
    "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
    "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}  # fmt: skip


class GoogleBatches(EmulatedBatchApi):
    """`<model>:batchGenerateContent` and `batches/<id>`: a batch starts pending; a
    cancel answers an empty object."""

    wire: Provider = "google"
    id_prefix = "batches/"
    first_state = "validating"

    @property
    def routes(self) -> tuple[tuple[str, re.Pattern[str], BatchAction], ...]:
        return (  # create's target: the model's route the items stand for
            (
                "POST",
                re.compile(rf"^(/{_VERSION}/models/[^/:]+):batchGenerateContent$"),
                self.create,
            ),
            ("GET", re.compile(rf"^/{_BETA}/(batches/[^/:]+)$"), "retrieve"),
            ("POST", re.compile(rf"^/{_BETA}/(batches/[^/:]+):cancel$"), "cancel"),
        )

    def shown(self, batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
        return google_operation(batch)

    def cancel_answer(self, batch: EmulatedBatch) -> dict[str, Any] | None:
        return {}

    def create(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        items, problem = google_items(parsed_body(raw), f"{target}:generateContent")
        if problem is not None:
            raise BatchRefused(400, problem)
        model = target.rpartition("/models/")[2]
        with jobs.lock:
            batch = jobs.new(self, self.wire, model, items)
            return json_reply(google_operation(batch))


def google_items(body: Any, path: str) -> tuple[list[BatchItemRequest], str | None]:
    """(the items, a 400's message) of a `batchGenerateContent` body; `path` is the
    model's `generateContent` route the items stand for."""
    batch = as_object(as_object(body).get("batch"))
    config = as_object(batch.get("inputConfig"))
    requests = as_list(as_object(config.get("requests")).get("requests"))
    if not requests:
        return [], "batch.inputConfig.requests.requests: the batch needs at least one request"
    items: list[BatchItemRequest] = []
    for index, value in enumerate(requests):
        entry = as_object(value)
        request = entry.get("request")
        if not isinstance(request, dict):
            return [], f"batch.inputConfig.requests.requests[{index}].request is required"
        key = as_str(as_object(entry.get("metadata")).get("key")) or str(index)
        raw = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()
        items.append(BatchItemRequest(key, path, raw))
    return items, None


def google_operation(batch: EmulatedBatch) -> dict[str, Any]:
    """The batch's long-running operation (its responses inlined once it has ended)."""
    times = batch.times
    stats = {
        "requestCount": str(len(batch.items)),
        "successfulRequestCount": str(batch.count("succeeded")),
        "failedRequestCount": str(batch.count("failed")),
        "pendingRequestCount": str(len(batch.items) - len(batch.results)),
    }
    metadata: dict[str, Any] = {
        "@type": _BATCH,
        "model": f"models/{batch.model}",
        "displayName": "wink emulator batch",
        "createTime": rfc3339(times["created"]),
        "updateTime": rfc3339(max(times.values())),
        "batchStats": stats,
        "state": _STATES[batch.state],
        "name": batch.id,
    }
    operation: dict[str, Any] = {"name": batch.id, "metadata": metadata}
    if batch.ended:
        metadata["endTime"] = rfc3339(times["ended"])
        inlined = [
            _inlined(key, result) for key, result in batch.results.items() if not result.not_run
        ]
        output = {"inlinedResponses": {"inlinedResponses": inlined}}
        metadata["output"] = output
        operation["done"] = True
        if batch.state == "failed":
            operation["error"] = {"code": 13, "message": "The batch failed."}
        else:
            operation["response"] = {"@type": _OUTPUT, **output}
    return operation


def _inlined(key: str, result: ItemResult) -> dict[str, Any]:
    answer = result.json()
    if result.succeeded:
        return {"response": answer, "metadata": {"key": key}}
    error = as_object(as_object(answer).get("error"))
    status = as_str(error.get("status")) or "INTERNAL"
    message = as_str(error.get("message")) or f"HTTP {result.status}"
    status_object: dict[str, Any] = {"code": _RPC_CODES.get(status, 13), "message": message}
    if "details" in error:
        status_object["details"] = error["details"]
    return {"error": status_object, "metadata": {"key": key}}


GOOGLE_BATCHES = GoogleBatches()
