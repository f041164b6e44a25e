"""OpenAI's batch API in the emulator: a JSONL file uploaded to `/v1/files`, a batch
over it at `/v1/batches`, and its output and error files."""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
from typing import Any, cast

from ..batch_formats import BatchItemRequest, EmulatedBatch
from ..formats import as_object, as_str
from ..records import Provider
from ..server import RawRequest
from .base import Rendered
from .batch import (
    BatchAction,
    BatchJobs,
    BatchRefused,
    EmulatedBatchApi,
    json_reply,
    parsed_body,
)

__all__ = ["OPENAI_BATCHES", "OpenAIBatches"]

_TIMES = ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
_NOT_RUN = {
    "batch_expired": "This request could not be executed before the completion window expired.",
    "batch_cancelled": "This request was not executed because the batch was cancelled.",
}


class OpenAIBatches(EmulatedBatchApi):
    """`/v1/files` and `/v1/batches`; a batch's items are requests to one of the wires'
    own paths (`endpoints`: Chat Completions', Responses'), and an ended batch writes its
    output and error files."""

    wire: Provider = "openai"
    id_prefix = "batch_"
    first_state = "validating"
    finalizes = True

    def __init__(self, endpoints: dict[str, Provider]) -> None:
        self.endpoints = endpoints  # a batch's `endpoint` -> the wire its items speak

    @property
    def routes(self) -> tuple[tuple[str, re.Pattern[str], BatchAction], ...]:
        return (
            ("POST", re.compile(r"^/v1/files$"), self.upload),
            ("GET", re.compile(r"^/v1/files/([^/]+)/content$"), self.content),
            ("GET", re.compile(r"^/v1/files/([^/]+)$"), self.file),
            ("DELETE", re.compile(r"^/v1/files/([^/]+)$"), self.delete),
            ("POST", re.compile(r"^/v1/batches$"), self.create),
            ("GET", re.compile(r"^/v1/batches/([^/]+)$"), "retrieve"),
            ("POST", re.compile(r"^/v1/batches/([^/]+)/cancel$"), "cancel"),
        )

    def shown(self, batch: EmulatedBatch, base_url: str) -> dict[str, Any]:
        return openai_batch(batch)

    def ended(self, batch: EmulatedBatch, jobs: BatchJobs) -> None:
        if batch.results:
            output, errors = openai_files(batch, jobs.ids.openai_request())
            batch.output_file_id = jobs.add_file("batch_output.jsonl", output) if output else None
            batch.error_file_id = jobs.add_file("batch_errors.jsonl", errors) if errors else None

    def upload(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        fields = _form(raw)
        upload = fields.get("file")
        if fields.get("purpose", (None, b""))[1] != b"batch" or upload is None:
            raise BatchRefused(
                400, "A batch input file is uploaded with purpose 'batch' and a file."
            )
        name, content = upload
        with jobs.lock:
            file_id = jobs.add_file(name or "upload.jsonl", content)
            return json_reply(_file_object(jobs, file_id))

    def file(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        with jobs.lock:
            return json_reply(_file_object(jobs, target))

    def content(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        with jobs.lock:
            found = jobs.file(target)
        if found is None:
            raise BatchRefused(404, f"No such File object: {target}")
        return Rendered(200, {"content-type": "application/octet-stream"}, found[1])

    def delete(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        with jobs.lock:
            if not jobs.drop_file(target):
                raise BatchRefused(404, f"No such File object: {target}")
        return json_reply({"id": target, "object": "file", "deleted": True})

    def create(self, jobs: BatchJobs, target: str, raw: RawRequest) -> Rendered:
        body = as_object(parsed_body(raw))
        input_id, endpoint = as_str(body.get("input_file_id")), as_str(body.get("endpoint"))
        if body.get("completion_window") != "24h" or endpoint is None:
            raise BatchRefused(400, "completion_window must be '24h' and endpoint is required.")
        with jobs.lock:
            found = jobs.file(input_id or "")
            if found is None:
                raise BatchRefused(400, f"The input file {input_id!r} does not exist.")
            provider = self.endpoints.get(endpoint)
            if provider is None:
                raise BatchRefused(
                    400, f"The endpoint {endpoint!r} takes no batch in this emulator."
                )
            model, items, errors = openai_items(found[1], endpoint)
            batch = jobs.new(self, provider, model, items)
            batch.errors, batch.input_file_id = errors, input_id or ""
            batch.endpoint = endpoint
            return json_reply(openai_batch(batch))


def openai_items(
    content: bytes, endpoint: str
) -> tuple[str, list[BatchItemRequest], list[dict[str, Any]]]:
    """(the items' model, the items, the validation errors) of an input file, checked as
    OpenAI does: each line a request to `endpoint`, one model, unique ids."""
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
    return next(iter(models), ""), items, errors


def openai_batch(batch: EmulatedBatch) -> dict[str, Any]:
    """The `batch` object."""
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
        "endpoint": batch.endpoint,
        "model": batch.model,
        "errors": errors,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": batch.state,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": int(times["created"]),
        "expires_at": int(times["created"]) + 86_400,
        **{f"{state}_at": _at(times, state) for state in _TIMES},
        "request_counts": {
            "total": len(batch.items),
            "completed": batch.count("succeeded"),
            "failed": failed,
        },
        "metadata": None,
    }


def openai_files(batch: EmulatedBatch, request_id: str) -> tuple[bytes, bytes]:
    """(the output file, the error file) of an ended batch."""
    output: list[bytes] = []
    errors: list[bytes] = []
    for number, (key, result) in enumerate(batch.results.items(), start=1):
        line: dict[str, Any] = {"id": f"batch_req_{number:06d}", "custom_id": key}
        if result.not_run is not None:
            code = "batch_expired" if result.not_run == "expired" else "batch_cancelled"
            line.update(response=None, error={"code": code, "message": _NOT_RUN[code]})
        else:
            response = {"status_code": result.status, "request_id": request_id}
            line.update(response={**response, "body": result.json()}, error=None)
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        (output if result.succeeded else errors).append(text)
    return b"".join(output), b"".join(errors)


def _file_object(jobs: BatchJobs, file_id: str) -> dict[str, Any]:
    found = jobs.file(file_id)
    if found is None:
        raise BatchRefused(404, f"No such File object: {file_id}")
    name, content, created = found
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": int(created),
        "filename": name,
        "purpose": "batch",
        "status": "processed",
        "expires_at": None,
        "status_details": None,
    }


def _at(times: dict[str, float], state: str) -> int | None:
    moment = times.get(state)
    return int(moment) if moment is not None else None


def _form(raw: RawRequest) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name -> (file name, content)."""
    kind = raw.headers.get("content-type", "")
    if not kind.startswith("multipart/form-data"):
        raise BatchRefused(400, "A file is uploaded as multipart/form-data.")
    head = f"Content-Type: {kind}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw.body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields


OPENAI_BATCHES = OpenAIBatches(
    {"/v1/chat/completions": "openai", "/v1/responses": "openai-responses"}
)
"""The batch API both OpenAI wires name."""
