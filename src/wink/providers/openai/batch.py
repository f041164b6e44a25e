"""OpenAI's Batch API, for both wire formats (docs/adapters/openai.md#batches).

The items' requests go as one JSONL file (`client.files.create(purpose="batch")`), each
line `{"custom_id", "method": "POST", "url", "body"}` with the body exactly as `evaluate`
sends it; a batch runs over it (`client.batches.create`, `completion_window="24h"`). Once
it has ended, its output file holds the answered lines (`response.status_code`, `body`)
and its error file the refused ones (an error answer's status and body) and those that
never ran (`error.code`: `batch_expired`, `batch_cancelled`). A batch that failed its
validation has no files: its `errors` name the lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, cast, get_args

from ...core.foundation.batches import ENDED_STATES, BatchState, BatchStatus
from ...core.foundation.carriage import MB
from ...core.transport.batches import (
    BatchLimits,
    BatchLine,
    ItemAnswer,
    WireStatus,
    an_object,
    json_text,
    keyed_lines,
)
from ...core.transport.errors import MalformedResponse, read_count
from ...core.transport.http import Transport
from .client import openai_error_facts

__all__ = ["OpenAIBatches"]

_LIMITS = BatchLimits(max_items=50_000, max_bytes=200 * MB, what="the JSONL input file")
_STATES: frozenset[str] = frozenset(get_args(BatchState))  # OpenAI's words are wink's
_NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
_TIMED_OUT = "request_timeout"  # the model call timed out: a 408, as evaluate reads one


class OpenAIBatches:
    """The Batch API over one endpoint (`/v1/chat/completions` or `/v1/responses`)."""

    __slots__ = ("_endpoint",)

    def __init__(self, endpoint: str) -> None:
        self._endpoint = endpoint

    @property
    def limits(self) -> BatchLimits:
        return _LIMITS

    def size(self, lines: Sequence[BatchLine]) -> int:
        return len(self._file(lines))

    def _file(self, lines: Sequence[BatchLine]) -> bytes:
        url = json_text(self._endpoint)
        return b"".join(
            b'{"custom_id":%s,"method":"POST","url":%s,"body":%s}\n'
            % (json_text(line.key), url, line.request.content)
            for line in lines
        )

    async def submit(
        self, transport: Transport, lines: Sequence[BatchLine], time_limit: float
    ) -> str:
        upload = ("wink-batch.jsonl", self._file(lines), "application/jsonl")
        uploaded = await transport.call(
            lambda client: client.files.create(file=upload, purpose="batch", timeout=time_limit)
        )
        try:
            batch = await transport.call(
                lambda client: client.batches.create(
                    input_file_id=uploaded.id,
                    endpoint=self._endpoint,
                    completion_window="24h",
                    timeout=time_limit,
                )
            )
        except BaseException:  # refused: leave no file behind, then say why
            with contextlib.suppress(Exception):
                await transport.call(
                    lambda client: client.files.delete(uploaded.id, timeout=time_limit)
                )
            raise
        return str(batch.id)

    async def status(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        batch = await transport.call(
            lambda client: client.batches.retrieve(batch_id, timeout=time_limit)
        )
        return _status(batch.to_dict(mode="json"))

    async def cancel(self, transport: Transport, batch_id: str, time_limit: float) -> WireStatus:
        batch = await transport.call(
            lambda client: client.batches.cancel(batch_id, timeout=time_limit)
        )
        return _status(batch.to_dict(mode="json"))

    async def answers(
        self, transport: Transport, ended: WireStatus, keys: Sequence[str], time_limit: float
    ) -> dict[str, ItemAnswer]:
        raw = ended.raw
        if ended.status.state == "failed":
            return _refused(raw, keys)
        found: dict[str, ItemAnswer] = {}
        for field in ("output_file_id", "error_file_id"):
            file_id = raw.get(field)
            if not isinstance(file_id, str) or not file_id:
                continue
            content = await transport.call(
                lambda client, file_id=file_id: client.files.content(file_id, timeout=time_limit)
            )
            for key, line in keyed_lines(content.content, f"the batch's {field}"):
                found[key] = _answer(line)
        return found


def _status(raw: dict[str, Any]) -> WireStatus:
    state = raw.get("status")
    batch_id = raw.get("id")
    if state not in _STATES or not isinstance(batch_id, str):
        raise MalformedResponse(f"not an OpenAI batch object (status {state!r})")
    counts = raw.get("request_counts")
    total = read_count(counts, "total")
    done = read_count(counts, "completed")
    failed = read_count(counts, "failed")
    ended = state in ENDED_STATES
    status = BatchStatus(
        batch_id,
        cast(BatchState, state),
        total,
        succeeded=done,
        failed=failed,
        pending=0 if ended else max(total - done - failed, 0),
    )
    return WireStatus(status, raw)


def _answer(line: Mapping[str, Any]) -> ItemAnswer:
    """One line of the output or error file."""
    error = line.get("error")
    if isinstance(error, dict) and error:
        detail = cast(dict[str, Any], error)
        code, message = detail.get("code"), detail.get("message")
        words = message if isinstance(message, str) else str(code)
        not_run = _NOT_RUN.get(code) if isinstance(code, str) else None
        if not_run == "expired":
            return ItemAnswer(not_run="expired", reason=words)
        if not_run == "cancelled":
            return ItemAnswer(not_run="cancelled", reason=words)
        status = 408 if code == _TIMED_OUT else 500
        return ItemAnswer(failure=openai_error_facts(status, detail, words))
    response = an_object(line.get("response"), "a batch line's response")
    status = response.get("status_code")
    if not isinstance(status, int) or isinstance(status, bool):
        raise MalformedResponse("a batch line's response has no status_code")
    body = response.get("body")
    if 200 <= status < 300:
        return ItemAnswer(body=body)
    detail = cast(dict[str, Any], body).get("error") if isinstance(body, dict) else body
    return ItemAnswer(failure=openai_error_facts(status, detail, f"HTTP {status}"))


def _refused(raw: Mapping[str, Any], keys: Sequence[str]) -> dict[str, ItemAnswer]:
    """A batch that failed its validation: each item gets the errors of its line (the
    batch's own when they name no line), as the 400 the same request would get."""
    errors = raw.get("errors")
    data = cast(dict[str, Any], errors).get("data") if isinstance(errors, dict) else None
    listed = [cast(dict[str, Any], e) for e in cast(list[Any], data or []) if isinstance(e, dict)]
    general = [error for error in listed if not isinstance(error.get("line"), int)]
    found: dict[str, ItemAnswer] = {}
    for number, key in enumerate(keys, start=1):
        own = [error for error in listed if error.get("line") == number] or general or listed
        message = "; ".join(str(error.get("message", "")) for error in own) or (
            "the batch failed its validation"
        )
        detail = {**own[0], "message": message} if own else {"message": message}
        found[key] = ItemAnswer(failure=openai_error_facts(400, detail, message))
    return found
