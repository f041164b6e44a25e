"""Batches on the four wire formats, end to end against the emulator's batch APIs.

The 100 items of `tests.helpers.batches` (tool rounds, failing tools, 400s, refusals,
structured answers corrected once, an item its round limit stops) run to the end as
batches, and each item's result is compared with what `evaluate` returns for the same
scripted answers: the same text, output, rounds, usage and conversation, or the same
error class, phase, status and message. The job goes through JSON at every step, as if
each step ran in a new process (`test_batch_resumes_in_new_processes` does that for real).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import batches
from tests.helpers.adapters import FAST_RETRY, KEY, MODELS, PROVIDERS, make_adapter
from wink import (
    Audio,
    BadRequestError,
    BatchCancelledError,
    BatchExpiredError,
    BatchItem,
    BatchJob,
    BatchStatus,
    Budget,
    ContentFilteredError,
    InvalidArgumentError,
    PromptEvaluationError,
    PromptResponse,
    RefusalError,
    Session,
    ThrottleError,
    WinkError,
)
from wink.adapters.base import ProviderAdapter
from wink.testing import Fault, ProviderEmulator, Turn

ROOT = Path(__file__).resolve().parents[2]


def _online(provider: str, emulator: ProviderEmulator) -> list[Any]:
    """Each item evaluated alone, as `evaluate` answers it."""
    adapter = make_adapter(provider, emulator)
    found: list[Any] = []
    for n in range(batches.ITEMS):
        try:
            found.append(
                adapter.evaluate(batches.prompt_for(n), session=Session(), **batches.options_for(n))
            )
        except WinkError as error:
            found.append(error)
    return [batches.summary(result) for result in found]


def _run(adapter: ProviderAdapter, job: BatchJob, *, through_json: bool) -> tuple[BatchJob, int]:
    """Advance `job` to its end; the job and how many batches it took."""
    submitted = {job.id}
    for _ in range(200):
        if job.finished:
            return job, len(submitted)
        if through_json:  # each step as a new process would take it
            job = BatchJob.from_json(job.to_json(), items=batches.items())
        job = adapter.advance_batch(job)
        submitted.add(job.id)
    raise AssertionError(f"the job did not finish: {job!r}")


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_of_100_runs_to_the_end_as_evaluate_would(
    provider: str, provider_emulator_factory: Any
) -> None:
    emulator = provider_emulator_factory(script=batches.script)
    expected = _online(provider, emulator)
    emulator.reset()

    adapter = make_adapter(provider, emulator)
    job = adapter.submit_batch(batches.items())
    assert job.provider == f"{provider}:{MODELS[provider]}"
    assert len(job) == batches.ITEMS
    assert job.keys[0] == "item-0"
    assert not job.finished
    assert len(job.waiting) == batches.ITEMS
    job, rounds = _run(adapter, job, through_json=True)

    results = adapter.batch_results(job)
    assert [batches.summary(result) for result in results] == expected
    assert rounds == 2  # the first requests; the tool, correction and looping rounds
    failing = 10 + 10 + 1  # n % 10 == 3 (400s), n % 10 == 7 (refusals), the looping one
    assert sum(isinstance(result, PromptResponse) for result in results) == 100 - failing
    assert isinstance(results[3], PromptEvaluationError)
    assert results[3].status_code == 400
    assert isinstance(results[7], RefusalError | ContentFilteredError)  # Gemini: a filter
    assert isinstance(results[batches.LOOPING], PromptEvaluationError)
    assert results[batches.LOOPING].phase == "budget"
    structured = results[8]
    assert isinstance(structured, PromptResponse)
    assert structured.output == batches.Forecast("Paris", 21)

    # every item request went in a batch, as the request evaluate sends
    recorded = emulator.requests
    assert recorded
    assert all(request.batch is not None for request in recorded if request.history)
    assert KEY not in job.to_json()


def test_a_batched_request_is_byte_for_byte_the_online_one(
    provider_emulator_factory: Any,
) -> None:
    for provider in PROVIDERS:
        emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
        adapter = make_adapter(provider, emulator)
        prompt = batches.prompt_for(1)
        adapter.evaluate(prompt, session=Session())
        online = emulator.requests[-1].body
        job = adapter.submit_batch([prompt])
        while not job.finished:
            job = adapter.advance_batch(job)
        batched = next(request for request in emulator.requests if request.batch is not None)
        assert batched.body == online, provider
        assert batched.path == emulator.requests[0].path


@pytest.mark.slow
def test_batch_resumes_in_new_processes(provider_emulator_factory: Any, tmp_path: Path) -> None:
    """Every step of the job (submit, each advance, the results) in a process of its
    own, the job passed on as JSON in a file."""
    emulator = provider_emulator_factory(script=batches.script)
    expected = _online("anthropic", emulator)
    saved = tmp_path / "job.json"
    child = [sys.executable, "-m", "tests.helpers.batch_step", emulator.base_url("anthropic")]

    def step(action: str) -> str:
        done = subprocess.run(
            [*child, action, str(saved)], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    step("submit")
    for _ in range(20):
        if json.loads(step("advance"))["finished"]:
            break
    else:
        raise AssertionError("the job did not finish")
    assert json.loads(step("results"))["summaries"] == [repr(summary) for summary in expected]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_async_forms_and_polling(provider: str, provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("done"))
    adapter = make_adapter(provider, emulator)

    async def main() -> list[PromptResponse[Any] | WinkError]:
        job = await adapter.submit_batch_async([batches.prompt_for(0), batches.prompt_for(4)])
        seen: list[BatchStatus] = []
        while not job.finished:
            assert job.id is not None
            seen.append(await adapter.poll_batch_async(job))
            job = await adapter.advance_batch_async(job)
        assert seen[0].total == 2
        assert seen[0].id == job.id
        return adapter.batch_results(job)

    results = asyncio.run(main())
    assert [result.text for result in results if isinstance(result, PromptResponse)] == [
        "done",
        "done",
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_status_moves_and_counts(provider: str, provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(batch_items_per_poll=1, script=batches.script)
    adapter = make_adapter(provider, emulator)
    job = adapter.submit_batch([batches.prompt_for(0), batches.prompt_for(3)])
    states: list[str] = []
    last = adapter.poll_batch(job)
    while not last.ended:
        states.append(last.state)
        last = adapter.poll_batch(job)
    assert last.state == "completed"
    assert (last.total, last.succeeded, last.failed, last.pending) == (2, 1, 1, 0)
    assert "in_progress" in states  # a retrieve moves an emulated batch one step
    if provider.startswith("openai"):  # it writes its result files before it completes
        assert states[-1] == "finalizing"
    job = adapter.advance_batch(job)
    assert job.finished


@pytest.mark.parametrize("provider", PROVIDERS)
def test_expired_items_get_their_own_error(provider: str, provider_emulator_factory: Any) -> None:
    def script(request: Any) -> Turn | Fault:
        return Fault.batch_expired() if "item 2" in request.history[0].text else Turn.text("ok")

    emulator = provider_emulator_factory(script=script)
    adapter = make_adapter(provider, emulator)
    job = adapter.submit_batch([batches.prompt_for(n) for n in range(4)])
    while not job.finished:
        job = adapter.advance_batch(job)
    results = adapter.batch_results(job)
    assert [type(result).__name__ for result in results] == [
        "PromptResponse",
        "PromptResponse",
        "BatchExpiredError",
        "BatchExpiredError",
    ]
    expired = results[2]
    assert isinstance(expired, BatchExpiredError)
    assert expired.phase == "request"
    assert isinstance(expired, PromptEvaluationError)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancelled_items_get_their_own_error(provider: str, provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(batch_items_per_poll=1, default_turn=Turn.text("ok"))
    adapter = make_adapter(provider, emulator)
    job = adapter.submit_batch([batches.prompt_for(n) for n in range(3)])
    while adapter.poll_batch(job).succeeded < 1:
        pass
    status = adapter.cancel_batch(job)
    assert status.state in ("cancelling", "cancelled")
    while not job.finished:
        job = adapter.advance_batch(job)
    results = adapter.batch_results(job)
    assert isinstance(results[0], PromptResponse)
    assert all(isinstance(result, BatchCancelledError) for result in results[1:])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_endpoints_429_go_through_the_retry_policy(
    provider: str, provider_emulator_factory: Any
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    adapter = make_adapter(provider, emulator, retry_policy=FAST_RETRY)
    emulator.inject(Fault.rate_limit(retry_after=0.001), times=2)
    job = adapter.submit_batch([batches.prompt_for(0)])
    while not job.finished:
        job = adapter.advance_batch(job)
    assert isinstance(adapter.batch_results(job)[0], PromptResponse)

    throttled = make_adapter(provider, emulator)  # no retry: the 429 is a ThrottleError
    emulator.inject(Fault.rate_limit(retry_after=2), times=1)
    with pytest.raises(ThrottleError) as caught:
        throttled.submit_batch([batches.prompt_for(0)])
    assert caught.value.details.retry_after is not None
    assert caught.value.details.retry_after.total_seconds() == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_refused_at_submit_leaves_nothing_behind(
    provider: str, provider_emulator_factory: Any
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    adapter = make_adapter(provider, emulator)
    uploads = provider.startswith("openai")  # a file first, then the batch made of it
    emulator.schedule({2 if uploads else 1: Fault.bad_request("the batch is refused")})
    with pytest.raises(BadRequestError) as caught:
        adapter.submit_batch([batches.prompt_for(0)])
    assert caught.value.status_code == 400
    assert caught.value.phase == "request"
    assert KEY not in str(caught.value)
    calls = [(request.method, request.path.rsplit("/", 1)[-1]) for request in emulator.requests]
    if uploads:  # the uploaded file is deleted: nothing is left half-submitted
        file_id = calls[-1][1]
        assert calls == [("POST", "files"), ("POST", "batches"), ("DELETE", file_id)]
        assert file_id.startswith("file-")
    else:
        assert len(calls) == 1


def test_an_item_that_cannot_be_sent_fails_the_submission_before_anything_is_sent(
    provider_emulator_factory: Any,
) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    adapter = make_adapter("anthropic", emulator)  # Anthropic takes no audio
    sound = Audio("audio/wav", data=b"RIFF....WAVE")
    items = [batches.prompt_for(0), BatchItem(batches.prompt_for(1), attachments=[sound])]
    with pytest.raises(WinkError, match="audio") as caught:
        adapter.submit_batch(items)
    assert "batch item '1': nothing was submitted" in "\n".join(caught.value.__notes__)
    assert emulator.requests == []


def test_too_many_items_is_a_typed_error_before_sending(provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    adapter = make_adapter("anthropic", emulator)
    limit = adapter.api.batch_wire().limits.max_items  # type: ignore[union-attr]
    assert limit is not None
    too_many = [batches.prompt_for(0)] * (limit + 1)
    with pytest.raises(PromptEvaluationError, match="several batches") as caught:
        adapter.submit_batch(too_many)
    assert caught.value.phase == "request"
    assert emulator.requests == []


def test_bad_jobs_and_items_are_typed(provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(default_turn=Turn.text("ok"))
    adapter = make_adapter("anthropic", emulator)
    other = make_adapter("google", emulator)
    for bad in ([], "prompt", [object()], {"a b": batches.prompt_for(0)}):
        with pytest.raises(InvalidArgumentError):
            adapter.submit_batch(bad)  # type: ignore[arg-type]
    twice = [BatchItem(batches.prompt_for(0), key="x"), BatchItem(batches.prompt_for(1), key="x")]
    with pytest.raises(InvalidArgumentError, match="unique"):
        adapter.submit_batch(twice)
    job = adapter.submit_batch([batches.prompt_for(0)])
    with pytest.raises(InvalidArgumentError, match="submitted by"):
        other.poll_batch(job)
    with pytest.raises(InvalidArgumentError, match="still wait"):
        adapter.batch_results(job)
    with pytest.raises(InvalidArgumentError):
        adapter.poll_batch("job")  # type: ignore[arg-type]
    for text in ("", "{}", "[1]", '{"version": 99}', "not json"):
        with pytest.raises(InvalidArgumentError):
            BatchJob.from_json(text)
    bare = BatchJob.from_json(job.to_json())  # enough to poll, not to advance
    assert adapter.poll_batch(bare).total == 1
    with pytest.raises(InvalidArgumentError, match="without its items"):
        adapter.advance_batch(bare)
    with pytest.raises(InvalidArgumentError):
        BatchJob.from_json(job.to_json(), items=[batches.prompt_for(0), batches.prompt_for(1)])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_budgets_and_limits_hold_across_batches_as_in_evaluate(
    provider: str, provider_emulator_factory: Any
) -> None:
    """A budget counts the requests and tokens of every round, whichever batch carried
    them, and a round limit stops an item whose tool failed as one whose tool worked: each
    failure is evaluate's, after the same round."""
    emulator = provider_emulator_factory(script=batches.script)
    tool_item, failing_tool = batches.prompt_for(1), batches.prompt_for(6)  # Atlantis
    looping = batches.prompt_for(batches.LOOPING)  # calls tools forever
    cases: list[tuple[Any, dict[str, Any]]] = [
        (tool_item, {"budget": Budget(max_requests=1)}),
        (tool_item, {"budget": Budget(max_total_tokens=1)}),
        (tool_item, {"max_rounds": 1}),
        (failing_tool, {"max_rounds": 1}),
        (looping, {"budget": Budget(max_requests=2)}),  # counted across two batches
        (looping, {"max_rounds": 3}),
    ]
    adapter = make_adapter(provider, emulator)
    expected: list[Any] = []
    for prompt, options in cases:
        try:
            expected.append(adapter.evaluate(prompt, session=Session(), **options))
        except WinkError as error:
            expected.append(error)
    emulator.reset()
    job = adapter.submit_batch(
        [BatchItem(prompt, key=f"k{n}", **options) for n, (prompt, options) in enumerate(cases)]
    )
    job, _ = _run(adapter, job, through_json=False)
    got = adapter.batch_results(job)
    assert [batches.summary(result) for result in got] == [
        batches.summary(result) for result in expected
    ]
    assert [getattr(result, "phase", None) for result in got] == ["budget"] * 6


def test_a_tampered_job_is_refused_naming_the_place(provider_emulator_factory: Any) -> None:
    emulator = provider_emulator_factory(script=batches.script)
    adapter = make_adapter("anthropic", emulator)
    job = adapter.submit_batch([batches.prompt_for(3)])  # a 400: a failed item
    while not job.finished:
        job = adapter.advance_batch(job)
    document = json.loads(job.to_json())
    error = document["items"][0]["error"]
    assert error["type"] == "BadRequestError"
    assert error["attributes"]["status_code"] == 400
    read = adapter.batch_results(BatchJob.from_json(job.to_json()))[0]
    assert isinstance(read, BadRequestError)
    assert read.phase == "request"
    for name in ("__class__", "_secret", "not an attribute"):
        tampered = json.loads(job.to_json())
        tampered["items"][0]["error"]["attributes"][name] = "x"
        with pytest.raises(InvalidArgumentError, match="attribute"):
            BatchJob.from_json(json.dumps(tampered))
