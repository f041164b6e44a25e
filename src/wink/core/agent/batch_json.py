"""The JSON of a `BatchJob`, version 1 (docs/batch.md documents it).

    {"version": 1, "type": "wink.batch_job", "id": "batch_..." | null,
     "provider": "openai:gpt-4.1",
     "items": [
       {"key": "0", "prompt": "review",                                  waiting
        "state": {"round": 2, "transcript": {<transcript>}, "failed_rounds": 1,
                  "usage": {"input_tokens": 12, ...}, "rejected": 1, "thoughts": ["..."]}},
       {"key": "1", "prompt": "review",                                  answered
        "answer": {"text": "...", "finish_reason": "stop", "rounds": 2, "usage": {...},
                   "thinking": "...", "structured": true, "transcript": {...}}},
       {"key": "2", "prompt": "review", "state": {...},                  failed
        "error": {"type": "BadRequestError", "message": "...", "attributes": {...}}}]}

A transcript is in its own format (docs/conversations.md). A writer leaves out each field
at its default; a reader refuses what it does not know, naming the place.
"""

from __future__ import annotations

import json
from typing import Any, cast, get_args

from ..foundation.checks import kind_of
from ..foundation.errors import InvalidArgumentError, WinkError
from ..foundation.errors_json import error_from_json, error_to_json
from ..foundation.messages import FinishReason, Usage
from ..foundation.transcript import Transcript
from ..foundation.transcript_json import JsonReader, invalid
from .batch_job import BatchEntry, BatchItem, BatchJob, SavedAnswer, batch_items
from .deferred import LoopState
from .loop import PromptResponse

__all__ = ["JOB_VERSION", "dump_job", "load_job"]

JOB_VERSION = 1
_TYPE = "wink.batch_job"
_WHAT = "batch job"
_COST = "billed_cost"  # a number or None; the other fields are counts
_USAGE_FIELDS = tuple(name for name in Usage.__dataclass_fields__ if name != _COST)
_FINISH_REASONS: tuple[str, ...] = get_args(FinishReason)


# --- writing


def dump_job(job: BatchJob) -> str:
    document = {
        "version": JOB_VERSION,
        "type": _TYPE,
        "id": job.id,
        "provider": job.provider,
        "items": [_dump_entry(entry) for entry in job],
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _dump_entry(entry: BatchEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"key": entry.key, "prompt": entry.prompt_name}
    outcome = entry.outcome
    if isinstance(outcome, PromptResponse | SavedAnswer):
        out["answer"] = _dump_answer(outcome)
        return out
    out["state"] = _dump_state(entry.state)
    if isinstance(outcome, WinkError):
        out["error"] = error_to_json(outcome)
    return out


def _dump_state(state: LoopState) -> dict[str, Any]:
    out: dict[str, Any] = {"round": state.round, "transcript": _transcript(state.messages)}
    if state.failed_rounds:
        out["failed_rounds"] = state.failed_rounds
    if state.usage != Usage():
        out["usage"] = _dump_usage(state.usage)
    if state.rejected:
        out["rejected"] = state.rejected
    if state.thoughts:
        out["thoughts"] = list(state.thoughts)
    return out


def _dump_answer(answer: PromptResponse[Any] | SavedAnswer) -> dict[str, Any]:
    out: dict[str, Any] = {"finish_reason": answer.finish_reason, "rounds": answer.rounds}
    if answer.text is not None:
        out["text"] = answer.text
    if answer.usage != Usage():
        out["usage"] = _dump_usage(answer.usage)
    if answer.thinking is not None:
        out["thinking"] = answer.thinking
    structured = answer.structured if isinstance(answer, SavedAnswer) else answer.output is not None
    if structured:
        out["structured"] = True
    out["transcript"] = _transcript(answer.transcript.messages)
    return out


def _dump_usage(usage: Usage) -> dict[str, int | float]:
    counts: dict[str, int | float] = {
        name: value for name in _USAGE_FIELDS if (value := getattr(usage, name))
    }
    if usage.billed_cost is not None:
        counts[_COST] = float(usage.billed_cost)  # read back as a float
    return counts


def _transcript(messages: Any) -> Any:
    return json.loads(Transcript(messages).to_json())


# --- reading


def load_job(text: object, items: object) -> BatchJob:
    if not isinstance(text, str | bytes | bytearray):
        raise InvalidArgumentError(
            f"BatchJob.from_json takes JSON text, got {kind_of(text)}", argument="text"
        )
    try:
        document = json.loads(text)
    except ValueError as error:
        raise invalid(f"the text is not JSON ({error})", _WHAT) from error
    top = JsonReader(document, "the job", _WHAT)
    version = top.take("version", int)
    if version != JOB_VERSION:
        newer = version > JOB_VERSION
        raise top.invalid(
            f"job version {version} "
            + ("is newer than this wink reads: upgrade wink" if newer else "is not one wink wrote")
        )
    if top.take("type", str) != _TYPE:
        raise top.invalid(f"the job's type is not {_TYPE!r}")
    batch_id = top.optional("id", str) if top.fields.get("id") is not None else None
    top.taken.add("id")
    provider = top.take("provider", str)
    listed = top.take("items", list)
    top.done()
    entries = [_load_entry(item, f"items[{index}]") for index, item in enumerate(listed)]
    if items is not None:
        entries = _with_items(entries, batch_items(items))
    return BatchJob(batch_id, provider, entries)


def _load_entry(value: object, where: str) -> BatchEntry:
    reader = JsonReader(value, where, _WHAT)
    key, prompt = reader.take("key", str), reader.take("prompt", str)
    if "answer" in reader.fields:
        answer = _load_answer(reader.within("answer"), prompt)
        reader.done()
        state = LoopState(answer.transcript.messages, answer.rounds, usage=answer.usage)
        return BatchEntry(key, prompt, None, state, answer)
    state = _load_state(reader.within("state"))
    error: WinkError | None = None
    if "error" in reader.fields:
        error = error_from_json(reader.take("error", dict), f"not a wink {_WHAT}: {where}.error")
    reader.done()
    return BatchEntry(key, prompt, None, state, error)


def _load_state(reader: JsonReader) -> LoopState:
    state = LoopState(
        _load_transcript(reader, "transcript").messages,
        reader.take("round", int),
        reader.optional("failed_rounds", int, 0),
        _load_usage(reader),
        reader.optional("rejected", int, 0),
        tuple(_strings(reader, "thoughts")),
    )
    reader.done()
    return state


def _load_answer(reader: JsonReader, prompt: str) -> SavedAnswer:
    finish = reader.take("finish_reason", str)
    if finish not in _FINISH_REASONS:
        raise reader.invalid(f"{reader.where}.finish_reason {finish!r} is not one wink knows")
    answer = SavedAnswer(
        prompt,
        reader.optional("text", str),
        cast(FinishReason, finish),
        reader.take("rounds", int),
        _load_usage(reader),
        reader.optional("thinking", str),
        _load_transcript(reader, "transcript"),
        reader.optional("structured", bool, False),
    )
    reader.done()
    return answer


def _load_usage(reader: JsonReader) -> Usage:
    if "usage" not in reader.fields:
        reader.taken.add("usage")
        return Usage()
    counts = reader.within("usage")
    cost = counts.optional(_COST, float, None)
    usage = Usage(
        **{name: counts.optional(name, int, 0) for name in _USAGE_FIELDS},
        billed_cost=None if cost is None else float(cost),
    )
    counts.done()
    return usage


def _load_transcript(reader: JsonReader, name: str) -> Transcript:
    value = reader.take(name, dict)
    try:
        return Transcript.from_json(json.dumps(value))
    except InvalidArgumentError as error:
        raise reader.invalid(f"{reader.where}.{name}: {error}") from error


def _strings(reader: JsonReader, name: str) -> list[str]:
    values = cast(list[object], reader.optional(name, list, []))
    if not all(isinstance(value, str) for value in values):
        raise reader.invalid(f"{reader.where}.{name} must be a list of strings")
    return cast(list[str], values)


def _with_items(entries: list[BatchEntry], given: dict[str, BatchItem[Any]]) -> list[BatchEntry]:
    """The entries with their items, which must be the job's own: the same keys, each
    of the same prompt."""
    keys = [entry.key for entry in entries]
    if set(given) != set(keys):
        missing = [key for key in keys if key not in given]
        extra = [key for key in given if key not in keys]
        raise InvalidArgumentError(
            f"the items are not this job's: missing keys {missing[:5]}, unknown keys "
            f"{extra[:5]} (give the list submitted, or a mapping key -> item)",
            argument="items",
        )
    joined: list[BatchEntry] = []
    for entry in entries:
        item = given[entry.key]
        if item.prompt.name != entry.prompt_name:
            raise InvalidArgumentError(
                f"item {entry.key!r} is the prompt {item.prompt.name!r}, but the job's item "
                f"{entry.key!r} was {entry.prompt_name!r}",
                argument="items",
            )
        joined.append(BatchEntry(entry.key, entry.prompt_name, item, entry.state, entry.outcome))
    return joined
