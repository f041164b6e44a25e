"""The three batch APIs' objects, as the emulator writes and reads them.

`EmulatedBatch` is one batch in neutral form (its items, its state, each item's answer);
each API's functions read its create request into items, and write the batch object and
the results in that API's shape: OpenAI's `batch` object and its output and error files,
Anthropic's `message_batch` and its results lines, Gemini's batch operation with its
inlined responses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..core.foundation.batches import ENDED_STATES, BatchState
from .formats import as_list, as_object, as_str, rfc3339
from .records import Provider

__all__ = [
    "BATCH_APIS",
    "BatchApi",
    "BatchApiShape",
    "BatchItemRequest",
    "EmulatedBatch",
    "ItemResult",
    "anthropic_batch",
    "anthropic_items",
    "anthropic_results",
    "google_items",
    "google_operation",
    "openai_batch",
    "openai_files",
    "openai_items",
    "shape_of",
]

BatchApi = Literal["openai", "anthropic", "google"]
_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # Anthropic's custom_id rule
_OPENAI_ENDPOINTS: dict[str, Provider] = {
    "/v1/chat/completions": "openai",
    "/v1/responses": "openai-responses",
}
_GEMINI_BATCH = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
_GEMINI_OUTPUT = (
    "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
)
_GEMINI_STATES: dict[BatchState, str] = {
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


@dataclass(frozen=True, slots=True)
class BatchItemRequest:
    """One item: its key, the online route it stands for, and its body as sent."""

    key: str
    path: str
    body: bytes


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What became of an item: an answer (`status`, `body`, as the online route would
    have answered), or `not_run` ("expired", "cancelled")."""

    status: int | None
    body: bytes = b""
    not_run: Literal["expired", "cancelled"] | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        """The answer body as JSON (its text when it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return self.body.decode("utf-8", "replace")


@dataclass(eq=False, slots=True)
class EmulatedBatch:
    """One batch the emulator holds."""

    id: str
    api: BatchApi
    provider: Provider  # the wire its items speak
    model: str
    items: list[BatchItemRequest]
    state: BatchState
    times: dict[str, float]
    results: dict[str, ItemResult] = field(default_factory=dict[str, ItemResult])
    errors: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    input_file_id: str = ""
    endpoint: str = ""  # the online route its items stand for (OpenAI's batch names it)
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES

    def count(self, kind: Literal["succeeded", "failed", "expired", "cancelled"]) -> int:
        results = self.results.values()
        if kind == "succeeded":
            return sum(result.succeeded for result in results)
        if kind == "failed":
            return sum(result.status is not None and not result.succeeded for result in results)
        return sum(result.not_run == kind for result in results)


# --- OpenAI: a JSONL file, a batch over it, its output and error files


def openai_items(
    content: bytes, endpoint: str
) -> tuple[Provider | None, str, list[BatchItemRequest], list[dict[str, Any]]]:
    """(the items' wire, their model, the items, the validation errors) of an input file,
    checked as OpenAI does: each line a request to `endpoint`, one model, unique ids."""
    provider = _OPENAI_ENDPOINTS.get(endpoint)
    items: list[BatchItemRequest] = []
    errors: list[dict[str, Any]] = []
    models: set[str] = set()
    for number, text in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        try:
            line = as_object(json.loads(text))
        except ValueError:
            line = {}
        body, key = line.get("body"), as_str(line.get("custom_id"))
        problem = None
        if not isinstance(body, dict) or key is None or line.get("method") != "POST":
            problem = "This line is not a valid batch request (custom_id, method, url, body)."
        elif line.get("url") != endpoint:
            problem = f"The url of this line does not match the batch's endpoint {endpoint}."
        elif any(item.key == key for item in items):
            problem = f"The custom_id {key!r} is used more than once."
        if problem is not None:
            errors.append({"code": "invalid_request", "message": problem, "line": number})
            continue
        fields = cast(dict[str, Any], body)
        models.add(str(fields.get("model", "")))
        raw = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
        items.append(BatchItemRequest(cast(str, key), endpoint, raw))
    if len(models) > 1:
        message = "Every request of a batch must use the same model."
        errors.append({"code": "mismatched_model", "message": message, "line": None})
    if not items and not errors:
        errors.append({"code": "empty_file", "message": "The input file is empty.", "line": None})
    return provider, next(iter(models), ""), items, errors


def openai_batch(batch: EmulatedBatch, endpoint: str) -> dict[str, Any]:
    times = batch.times
    failed = batch.count("failed") + batch.count("expired") + batch.count("cancelled")
    errors = (
        {"object": "list", "data": [{**error, "param": None} for error in batch.errors]}
        if batch.errors
        else None
    )
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": endpoint,
        "model": batch.model,
        "errors": errors,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": batch.state,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": int(times["created"]),
        "expires_at": int(times["created"]) + 86_400,
        **{f"{state}_at": _at(times, state) for state in _OPENAI_TIMES},
        "request_counts": {
            "total": len(batch.items),
            "completed": batch.count("succeeded"),
            "failed": failed,
        },
        "metadata": None,
    }


_OPENAI_TIMES = (
    "in_progress",
    "finalizing",
    "completed",
    "failed",
    "expired",
    "cancelling",
    "cancelled",
)


def openai_files(batch: EmulatedBatch, request_id: str) -> tuple[bytes, bytes]:
    """(the output file, the error file) of an ended batch."""
    output: list[bytes] = []
    errors: list[bytes] = []
    for number, (key, result) in enumerate(batch.results.items(), start=1):
        line: dict[str, Any] = {"id": f"batch_req_{number:06d}", "custom_id": key}
        if result.not_run is not None:
            code = "batch_expired" if result.not_run == "expired" else "batch_cancelled"
            words = {
                "batch_expired": "This request could not be executed before the completion "
                "window expired.",
                "batch_cancelled": "This request was not executed because the batch was cancelled.",
            }
            line.update(response=None, error={"code": code, "message": words[code]})
        else:
            response = {"status_code": result.status, "request_id": request_id}
            line.update(response={**response, "body": result.json()}, error=None)
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        (output if result.succeeded else errors).append(text)
    return b"".join(output), b"".join(errors)


# --- Anthropic: one create request, the results as JSON lines


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
        items.append(BatchItemRequest(key, "/v1/messages", raw))
    return next(iter(models), ""), items, None


def anthropic_batch(batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
    times = batch.times
    processing = {"cancelling": "canceling"}.get(batch.state, "in_progress")
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


# --- Gemini: inlined requests, a long-running operation


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
    times = batch.times
    stats = {
        "requestCount": str(len(batch.items)),
        "successfulRequestCount": str(batch.count("succeeded")),
        "failedRequestCount": str(batch.count("failed")),
        "pendingRequestCount": str(len(batch.items) - len(batch.results)),
    }
    metadata: dict[str, Any] = {
        "@type": _GEMINI_BATCH,
        "model": f"models/{batch.model}",
        "displayName": "wink emulator batch",
        "createTime": rfc3339(times["created"]),
        "updateTime": rfc3339(max(times.values())),
        "batchStats": stats,
        "state": _GEMINI_STATES[batch.state],
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
            operation["response"] = {"@type": _GEMINI_OUTPUT, **output}
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


def _at(times: dict[str, float], state: str) -> int | None:
    moment = times.get(state)
    return int(moment) if moment is not None else None


def _rfc(times: dict[str, float], state: str) -> str | None:
    moment = times.get(state)
    return rfc3339(moment) if moment is not None else None


# --- what differs between the three APIs beyond their bodies


@dataclass(frozen=True, slots=True)
class BatchApiShape:
    """One batch API: its paths, the wire whose error bodies it answers with, its batch
    ids, the state a batch starts in, and how its batch object is shown."""

    api: BatchApi
    wire: Provider
    routes: tuple[tuple[str, re.Pattern[str], str], ...]  # (method, path, action)
    id_prefix: str
    first_state: BatchState
    shown: Callable[[EmulatedBatch, str], dict[str, Any]]  # (batch, the emulator's URL)
    finalizes: bool = False  # `finalizing` between its last item and `completed`
    writes_files: bool = False  # its results are output and error files
    cancel_body: dict[str, Any] | None = None  # what a cancel answers instead of the batch


def _openai_shown(batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
    return openai_batch(batch, batch.endpoint)


def _google_shown(batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
    return google_operation(batch)


_GEMINI_VERSION = r"(?:v1|v1beta|v1alpha)"
_GEMINI_MODEL = rf"{_GEMINI_VERSION}/models/[^/:]+"
BATCH_APIS: tuple[BatchApiShape, ...] = (
    BatchApiShape(
        "openai",
        "openai",
        (
            ("POST", re.compile(r"^/v1/files$"), "upload"),
            ("GET", re.compile(r"^/v1/files/([^/]+)/content$"), "content"),
            ("GET", re.compile(r"^/v1/files/([^/]+)$"), "file"),
            ("DELETE", re.compile(r"^/v1/files/([^/]+)$"), "delete"),
            ("POST", re.compile(r"^/v1/batches$"), "create"),
            ("GET", re.compile(r"^/v1/batches/([^/]+)$"), "retrieve"),
            ("POST", re.compile(r"^/v1/batches/([^/]+)/cancel$"), "cancel"),
        ),
        "batch_",
        "validating",
        _openai_shown,
        finalizes=True,
        writes_files=True,
    ),
    BatchApiShape(
        "anthropic",
        "anthropic",
        (
            ("POST", re.compile(r"^/v1/messages/batches$"), "create"),
            ("GET", re.compile(r"^/v1/messages/batches/([^/]+)$"), "retrieve"),
            ("GET", re.compile(r"^/v1/messages/batches/([^/]+)/results$"), "results"),
            ("POST", re.compile(r"^/v1/messages/batches/([^/]+)/cancel$"), "cancel"),
        ),
        "msgbatch_01",
        "in_progress",
        anthropic_batch,
    ),
    BatchApiShape(
        "google",
        "google",
        (  # create's target: the model's `generateContent` route the items stand for
            (
                "POST",
                re.compile(rf"^(/{_GEMINI_VERSION}/models/[^/:]+):batchGenerateContent$"),
                "create",
            ),
            ("GET", re.compile(rf"^/{_GEMINI_VERSION}/(batches/[^/:]+)$"), "retrieve"),
            ("POST", re.compile(rf"^/{_GEMINI_VERSION}/(batches/[^/:]+):cancel$"), "cancel"),
        ),
        "batches/",
        "validating",
        _google_shown,
        cancel_body={},
    ),
)
_SHAPES: dict[BatchApi, BatchApiShape] = {shape.api: shape for shape in BATCH_APIS}


def shape_of(api: BatchApi) -> BatchApiShape:
    """The batch API `api`, as `BATCH_APIS` describes it."""
    return _SHAPES[api]
