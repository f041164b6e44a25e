"""The emulator's batch APIs: OpenAI's (files and `/v1/batches`), Anthropic's Message
Batches and Gemini's batch mode (docs/testing.md#batches).

A batch moves one step each time it is retrieved (polled), as a real one moves with
time: OpenAI and Gemini from `validating` (Gemini `BATCH_STATE_PENDING`) to
`in_progress`; then the next retrieve answers its items (all of them, or
`batch_items_per_poll`), each exactly as the online route would answer the same request
(the same script of `Turn`s and `Fault`s, the same checks); then it ends (OpenAI
through `finalizing`). A script's `Fault.batch_expired()` makes the batch expire at that
item; a cancel stops it at the next retrieve, its unanswered items cancelled. The batch
endpoints themselves take the emulator's injected and scheduled faults and its rate
limit, like every request.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .batch_formats import (
    BATCH_APIS,
    BatchApi,
    BatchItemRequest,
    EmulatedBatch,
    ItemResult,
    anthropic_batch,
    anthropic_items,
    anthropic_results,
    google_items,
    google_operation,
    openai_batch,
    openai_files,
    openai_items,
    shape_of,
)
from .faults import Fault
from .formats import IdSource, as_object, as_str, dump
from .records import Provider
from .server import RawRequest
from .wire import WIRES, Rendered, WireContext

__all__ = ["BatchEndpoint", "BatchStore", "batch_endpoint"]

AnswerItem = Callable[[EmulatedBatch, BatchItemRequest], ItemResult | None]
"""Answers one item as its online route would; None: the batch expires at it."""


@dataclass(frozen=True, slots=True)
class BatchEndpoint:
    """A request to a batch API: which, what it does, and what it names (an id, a
    model's route)."""

    api: BatchApi
    action: str
    target: str

    @property
    def provider(self) -> Provider:
        """The wire whose error bodies it answers with."""
        return shape_of(self.api).wire


def batch_endpoint(raw: RawRequest) -> BatchEndpoint | None:
    """The batch endpoint `raw` is for, if any."""
    for shape in BATCH_APIS:
        for method, pattern, action in shape.routes:
            match = pattern.match(raw.path)
            if match is not None and raw.method == method:
                return BatchEndpoint(shape.api, action, match.group(1) if match.groups() else "")
    return None


class BatchStore:
    """The batches and batch files of one emulator, and how they move."""

    def __init__(self, ids: IdSource, answer: AnswerItem, items_per_poll: int | None) -> None:
        self._ids = ids
        self._answer = answer
        self.items_per_poll = items_per_poll
        self._lock = threading.RLock()  # held while a batch answers its items
        self._batches: dict[str, EmulatedBatch] = {}
        self._files: dict[str, tuple[str, bytes, float]] = {}  # id -> (name, content, created)

    def clear(self) -> None:
        with self._lock:
            self._batches.clear()
            self._files.clear()

    def handle(self, endpoint: BatchEndpoint, raw: RawRequest, ctx: WireContext) -> Rendered:
        """Answer one request to a batch endpoint (faults were applied before)."""
        wire = WIRES[endpoint.provider]
        try:
            if endpoint.action in ("retrieve", "cancel"):
                return self._look(endpoint, raw)
            return getattr(self, f"_{endpoint.api}_{endpoint.action}")(endpoint, raw)
        except _Refused as refused:
            if refused.status == 404:
                return wire.render_not_found(refused.message, ctx)
            return wire.render_fault(Fault.bad_request(refused.message), ctx)

    # --- the batches' lives

    def _look(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        """A retrieve (the batch moves one step) or a cancel, answered with the batch."""
        with self._lock:
            batch = self._find(endpoint.target, endpoint.api)
            if endpoint.action == "cancel":
                self._cancel(batch)
                answer = shape_of(batch.api).cancel_body
                if answer is not None:
                    return _json(answer)
            else:
                self._step(batch)
            return _json(_shown(batch, raw))

    def _new(
        self, api: BatchApi, provider: Provider, model: str, items: list[BatchItemRequest]
    ) -> EmulatedBatch:
        shape = shape_of(api)
        batch = EmulatedBatch(
            shape.id_prefix + self._ids.alnum(24),
            api,
            provider,
            model,
            items,
            shape.first_state,
            {"created": time.time()},
        )
        self._batches[batch.id] = batch
        return batch

    def _find(self, batch_id: str, api: BatchApi) -> EmulatedBatch:
        batch = self._batches.get(batch_id)
        if batch is None or batch.api != api:
            raise _Refused(404, f"No batch found with id '{batch_id}'.")
        return batch

    def _step(self, batch: EmulatedBatch) -> None:
        """One step of the batch's life (it is retrieved)."""
        state = batch.state
        if state == "validating":
            self._move(batch, "failed" if batch.errors else "in_progress")
        elif state == "cancelling":
            self._settle(batch, "cancelled")
            self._move(batch, "cancelled")
        elif state == "in_progress":
            self._work(batch)
        elif state == "finalizing":
            self._move(batch, "completed")

    def _work(self, batch: EmulatedBatch) -> None:
        waiting = [item for item in batch.items if item.key not in batch.results]
        for item in waiting[: self.items_per_poll]:
            result = self._answer(batch, item)
            if result is None:  # its 24 hours ran out here
                self._settle(batch, "expired")
                self._move(batch, "expired")
                return
            batch.results[item.key] = result
        if len(batch.results) == len(batch.items):
            self._move(batch, "finalizing" if shape_of(batch.api).finalizes else "completed")

    def _settle(self, batch: EmulatedBatch, why: str) -> None:
        for item in batch.items:
            if item.key not in batch.results:
                batch.results[item.key] = ItemResult(
                    None, not_run="expired" if why == "expired" else "cancelled"
                )

    def _move(self, batch: EmulatedBatch, state: Any) -> None:
        now = time.time()
        batch.state = state
        batch.times[state] = now
        if batch.ended:
            batch.times["ended"] = now
            if shape_of(batch.api).writes_files and batch.results:
                output, errors = openai_files(batch, self._ids.openai_request())
                batch.output_file_id = self._file("batch_output.jsonl", output) if output else None
                batch.error_file_id = self._file("batch_errors.jsonl", errors) if errors else None

    def _cancel(self, batch: EmulatedBatch) -> None:
        if batch.ended or batch.state == "cancelling":
            raise _Refused(400, f"Cannot cancel a batch that is {batch.state}.")
        self._move(batch, "cancelling")

    def _file(self, name: str, content: bytes) -> str:
        file_id = "file-" + self._ids.alnum(22)
        self._files[file_id] = (name, content, time.time())
        return file_id

    # --- OpenAI

    def _openai_upload(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        fields = _form(raw)
        upload = fields.get("file")
        if fields.get("purpose", (None, b""))[1] != b"batch" or upload is None:
            raise _Refused(400, "A batch input file is uploaded with purpose 'batch' and a file.")
        name, content = upload
        with self._lock:
            file_id = self._file(name or "upload.jsonl", content)
        return _json(self._file_object(file_id))

    def _openai_file(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        with self._lock:
            return _json(self._file_object(endpoint.target))

    def _openai_content(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        with self._lock:
            found = self._files.get(endpoint.target)
        if found is None:
            raise _Refused(404, f"No such File object: {endpoint.target}")
        return Rendered(200, {"content-type": "application/octet-stream"}, found[1])

    def _openai_delete(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        with self._lock:
            if self._files.pop(endpoint.target, None) is None:
                raise _Refused(404, f"No such File object: {endpoint.target}")
        return _json({"id": endpoint.target, "object": "file", "deleted": True})

    def _openai_create(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        body = as_object(_parsed(raw))
        input_id, target = as_str(body.get("input_file_id")), as_str(body.get("endpoint"))
        if body.get("completion_window") != "24h" or target is None:
            raise _Refused(400, "completion_window must be '24h' and endpoint is required.")
        with self._lock:
            found = self._files.get(input_id or "")
            if found is None:
                raise _Refused(400, f"The input file {input_id!r} does not exist.")
            provider, model, items, errors = openai_items(found[1], target)
            if provider is None:
                raise _Refused(400, f"The endpoint {target!r} takes no batch in this emulator.")
            batch = self._new("openai", provider, model, items)
            batch.errors, batch.input_file_id = errors, input_id or ""
            batch.endpoint = target
            return _json(openai_batch(batch, target))

    def _file_object(self, file_id: str) -> dict[str, Any]:
        found = self._files.get(file_id)
        if found is None:
            raise _Refused(404, f"No such File object: {file_id}")
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

    # --- Anthropic

    def _anthropic_create(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        model, items, problem = anthropic_items(_parsed(raw))
        if problem is not None:
            raise _Refused(400, problem)
        with self._lock:
            batch = self._new("anthropic", "anthropic", model, items)
            return _json(anthropic_batch(batch, _base(raw)))

    def _anthropic_results(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        with self._lock:
            batch = self._find(endpoint.target, "anthropic")
        if not batch.ended:
            raise _Refused(400, f"Batch {batch.id} has not ended yet: its results are not ready.")
        return Rendered(200, {"content-type": "application/binary"}, anthropic_results(batch))

    # --- Gemini

    def _google_create(self, endpoint: BatchEndpoint, raw: RawRequest) -> Rendered:
        items, problem = google_items(_parsed(raw), f"{endpoint.target}:generateContent")
        if problem is not None:
            raise _Refused(400, problem)
        model = endpoint.target.rpartition("/models/")[2]
        with self._lock:
            batch = self._new("google", "google", model, items)
            return _json(google_operation(batch))


class _Refused(Exception):
    """A batch request the API refuses: a 400, or a 404 for what does not exist."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _json(value: Any) -> Rendered:
    return Rendered(200, {"content-type": "application/json"}, dump(value))


def _parsed(raw: RawRequest) -> Any:
    try:
        return json.loads(raw.body) if raw.body else None
    except ValueError:
        raise _Refused(400, "We could not parse the JSON body of your request.") from None


def _base(raw: RawRequest) -> str:
    """The emulator's own URL, as the client reached it (for `results_url`)."""
    return f"http://{raw.headers.get('host', '127.0.0.1')}"


def _shown(batch: EmulatedBatch, raw: RawRequest) -> dict[str, Any]:
    """The batch object, in its API's shape."""
    return shape_of(batch.api).shown(batch, _base(raw))


def _form(raw: RawRequest) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name -> (file name, content)."""
    kind = raw.headers.get("content-type", "")
    if not kind.startswith("multipart/form-data"):
        raise _Refused(400, "A file is uploaded as multipart/form-data.")
    head = f"Content-Type: {kind}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw.body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields
