"""Batches, driven once for every provider: each round of each item is a round of the one
loop (`wink.core.agent.loop`) whose request is answered later (docs/batch.md).

Submitting runs each item's loop until its first request, which the loop's client
(`DeferredClient`) puts aside, encoded exactly as `evaluate` would send it; the lines go
to the provider's batch API (`Provider.batch_wire()`). Advancing an ended batch runs each
waiting item's loop again from where it stopped (`resume=`): the same request is made
again, and this time answered with what came in the batch. An answer that calls tools runs
them here, and the loop's next request is put aside for the next batch; a final answer or
a failure settles the item. Round and budget limits, structured answers, approvals: the
loop's own.

Each call to the batch API (create, retrieve, results, cancel) goes through the adapter's
`RetryPolicy` and its provider's error map, as a request of `evaluate` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence, Sized
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..core.agent.batch_job import BatchEntry, BatchItem, BatchJob, batch_items
from ..core.agent.deferred import AnswerLater, LoopState
from ..core.agent.loop import LoopSettings, PromptResponse, run_evaluation
from ..core.foundation.batches import BatchStatus
from ..core.foundation.errors import (
    BadRequestError,
    BatchCancelledError,
    BatchExpiredError,
    ConfigurationError,
    InvalidArgumentError,
    PromptEvaluationError,
    WinkError,
)
from ..core.foundation.messages import ModelRequest, ModelResponse
from ..core.foundation.portable import CallIdRules, distinct_call_ids, portable_messages
from ..core.foundation.pricing import Pricer
from ..core.foundation.settings import ModelSettings
from ..core.prompting.session import Session
from ..core.throttling.retry import RetryPolicy
from ..core.transport.batches import BatchLine, BatchWire, ItemAnswer, WireStatus
from ..core.transport.errors import error_from_facts, redact_secrets, response_shape_error
from ..core.transport.exchange import Exchange
from ..core.transport.http import EncodedRequest, Transport
from ..providers.base import Provider
from .evaluator import Call
from .options import warn_unsupported

if TYPE_CHECKING:
    from ..core.foundation.events import EventSink

__all__ = ["BATCH", "BatchRunner", "DeferredClient"]

T = TypeVar("T")

BATCH = "batch"
"""The `prompt_name` of a failure of the batch itself (not of one of its items)."""
_NOT_RUN: dict[str, type[PromptEvaluationError]] = {
    "expired": BatchExpiredError,
    "cancelled": BatchCancelledError,
}


class DeferredClient:
    """The loop's `ModelClient` for one round of one batch item: it answers with what
    came in the batch (`answer`), once; with none, it encodes the request as `evaluate`
    would send it (`sent`) and raises `AnswerLater`."""

    __slots__ = ("_answer", "_call_ids", "_exchange", "_model", "_secrets", "origin", "sent")

    def __init__(
        self,
        origin: str,
        exchange: Exchange,
        *,
        call_ids: CallIdRules,
        secrets: tuple[str, ...],
        model: str,
        answer: ItemAnswer | None,
    ) -> None:
        self.origin = origin
        self._exchange = exchange
        self._call_ids = call_ids
        self._secrets = secrets
        self._model = model
        self._answer = answer
        self.sent: EncodedRequest | None = None

    @property
    def name(self) -> str:
        return self.origin

    @property
    def system(self) -> str:
        return self._exchange.translator.name

    def redact(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], redact_secrets(payload, self._secrets))

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse:
        return await self.request(request)  # a batch is never streamed

    async def request(self, request: ModelRequest) -> ModelResponse:
        messages = portable_messages(request.messages, self.origin, self._call_ids)
        if messages is not request.messages:  # turns another adapter made, as this one takes
            request = replace(request, messages=messages)
        answer, self._answer = self._answer, None
        if answer is None:
            self.sent = self._exchange.encode(request)
            raise AnswerLater()
        response = distinct_call_ids(self._read(request, answer), request.messages)
        return replace(response, origin=self.origin)

    def _read(self, request: ModelRequest, answer: ItemAnswer) -> ModelResponse:
        """The answer as `evaluate` reads the same one: a body parsed by the provider's
        translator, an error answer classified by core's table."""
        name = request.prompt_name
        if answer.not_run is not None:
            words = f" (the provider says: {answer.reason})" if answer.reason else ""
            raise _NOT_RUN[answer.not_run](
                f"the batch {answer.not_run} before this item ran{words}; nothing was "
                "answered or billed for it: submit it again",
                prompt_name=name,
                phase="request",
            )
        if answer.failure is not None:
            raise error_from_facts(
                answer.failure, prompt_name=name, secrets=self._secrets, model=self._model
            )
        if answer.body is None:
            raise PromptEvaluationError(
                "the batch ended without a result for this item",
                prompt_name=name,
                phase="response",
            )
        try:
            return self._exchange.decode(request, answer.body)
        except WinkError:
            raise
        except Exception as error:  # a translator bug must still honour the contract
            raise PromptEvaluationError(
                f"could not process the provider's answer: {type(error).__name__}: {error}",
                prompt_name=name,
                phase="response",
            ) from error


@dataclass(frozen=True, slots=True)
class _Round:
    """An item after one round: its entry, and the line of its next round (if any)."""

    entry: BatchEntry
    line: BatchLine | None


class BatchRunner:
    """One adapter's batches: what `ProviderAdapter`'s batch methods run.

    `transport()` gives the transport of the entry point (sync or async client);
    `loop_settings` are the adapter's, with no retry of an item in place (a throttled
    item ends with its `ThrottleError`: submit it again).
    """

    def __init__(
        self,
        name: str,
        api: Provider,
        transport: Callable[[], Transport],
        *,
        secrets: tuple[str, ...],
        timeout: float,
        retry_policy: RetryPolicy,
        loop_settings: LoopSettings,
        pricer: Pricer | None = None,
    ) -> None:
        host = api.host
        wire = api.batch_wire() if host.offers_batches else None
        if wire is None:
            why = f" ({host.no_batches_reason})" if host.no_batches_reason else ""
            raise ConfigurationError(
                f"{name} has no batch API in wink{why}; use evaluate", provider=host.name
            )
        self.name = name
        self._api = api
        self._wire: BatchWire = wire
        self._transport = transport
        self._secrets = secrets
        self._timeout = timeout
        self._retry = retry_policy
        self._loop_settings = replace(
            loop_settings, retry_policy=RetryPolicy(max_attempts=1), telemetry=None
        )
        self._pricer = pricer  # the batch discount's (`Pricer.for_batch`)
        self._default = Exchange(api, secrets=secrets, timeout=timeout, pricer=pricer)

    # ---- the public operations

    async def submit(self, given: object) -> BatchJob:
        if isinstance(given, Sized):  # before checking and rendering each of them
            self._check_count(len(given))
        items = batch_items(given)
        rounds = [await self._round(key, item, None, None) for key, item in items.items()]
        for done in rounds:  # an item that cannot be sent fails the submission, before it
            failure = done.entry.outcome
            if isinstance(failure, WinkError):
                failure.add_note(f"(batch item {done.entry.key!r}: nothing was submitted)")
                raise failure
        lines = [done.line for done in rounds if done.line is not None]
        batch_id = await self._submit(lines)
        return BatchJob(batch_id, self.name, (done.entry for done in rounds))

    async def poll(self, job: object) -> BatchStatus:
        checked = self._own(job)
        return (await self._status(self._batch_id(checked))).status

    async def cancel(self, job: object) -> BatchStatus:
        batch_id = self._batch_id(self._own(job))
        wire = self._wire
        return (await self._call(lambda t: wire.cancel(t, batch_id, self._timeout))).status

    async def advance(self, job: object) -> BatchJob:
        checked = self._own(job)
        waiting = [entry for entry in checked if entry.waiting]
        if not waiting:
            return checked
        for entry in waiting:
            if entry.item is None:
                raise InvalidArgumentError(
                    "this job was read from JSON without its items: "
                    "BatchJob.from_json(text, items=<the list submitted>) gives back the "
                    "prompts its waiting items need",
                    argument="job",
                )
        if checked.id is None:  # its rounds were not submitted: submit them
            rounds = [await self._again(entry) for entry in waiting]
            lines = [done.line for done in rounds if done.line is not None]
            return BatchJob(await self._submit(lines), checked.provider, checked.entries)
        ended = await self._status(checked.id)
        if not ended.status.ended:
            return checked
        keys = [entry.key for entry in waiting]
        wire = self._wire
        answers = await self._call(lambda t: wire.answers(t, ended, keys, self._timeout))
        state = ended.status.state
        rounds = await asyncio.gather(
            *(
                self._round(
                    entry.key,
                    cast(BatchItem[Any], entry.item),
                    entry.state,
                    _answer(answers, entry.key, state),
                )
                for entry in waiting
            )
        )
        return await self._next(checked, dict(zip(keys, rounds, strict=True)))

    @staticmethod
    def results(job: object) -> list[PromptResponse[Any] | WinkError]:
        checked = _a_job(job)
        if not checked.finished:
            raise InvalidArgumentError(
                f"{len(checked.waiting)} of the job's items still wait for an answer (in "
                f"batch {checked.id!r}): advance_batch(job) until job.finished",
                argument="job",
            )
        return [entry.result() for entry in checked]

    # ---- rounds

    async def _round(
        self,
        key: str,
        item: BatchItem[Any],
        state: LoopState | None,
        answer: ItemAnswer | None,
    ) -> _Round:
        """Run `item`'s loop from `state` (None: from the start) with `answer` to the
        request it stopped at: to its end, or to its next request."""
        prompt, call = Call.of(
            item.prompt,
            {
                "session": item.session,
                "budget": item.budget,
                "graceful_tool_errors": item.graceful_tool_errors,
                "max_rounds": item.max_rounds,
                "max_output_retries": item.max_output_retries,
                "attachments": item.attachments,
                "history": item.history,
                "approvals": item.approvals,
            },
        )
        name = prompt.name
        budget = call.budget
        if budget is not None and budget.max_cost is not None and self._pricer is not None:
            self._pricer.check()  # a limit in money that cannot trip is refused now
        client = DeferredClient(
            self.name,
            self._exchange(item.settings),
            call_ids=self._api.call_ids,
            secrets=self._secrets,
            model=self._api.model,
            answer=answer,
        )
        fresh = state is None
        try:
            response = await run_evaluation(
                client,
                prompt,
                session=item.session if item.session is not None else Session(),
                settings=call.loop_settings(self._loop_settings),
                budget=call.budget,
                attachments=call.attachments if fresh else (),
                history=call.history if fresh else None,
                approvals=call.approvals if fresh else None,
                resume=state,
            )
        except AnswerLater as later:
            if later.state is None or client.sent is None:  # pragma: no cover - the loop's
                raise AssertionError("a deferred round without its state") from later
            return _Round(BatchEntry(key, name, item, later.state), BatchLine(key, client.sent))
        except WinkError as error:
            last = state if state is not None else LoopState((), 0)
            return _Round(BatchEntry(key, name, item, last, error), None)
        last = state if state is not None else LoopState((), response.rounds)
        return _Round(BatchEntry(key, name, item, last, response), None)

    async def _again(self, entry: BatchEntry) -> _Round:
        """A waiting item's request again (its round was never submitted)."""
        return await self._round(entry.key, cast(BatchItem[Any], entry.item), entry.state, None)

    async def _next(self, job: BatchJob, rounds: dict[str, _Round]) -> BatchJob:
        """The job after a round: its waiting items' next round submitted, if any."""
        entries = [rounds[entry.key].entry if entry.key in rounds else entry for entry in job]
        lines = [done.line for done in rounds.values() if done.line is not None]
        if not lines:
            return BatchJob(job.id, job.provider, entries)
        try:
            batch_id = await self._submit(lines)
        except WinkError as error:  # the tools have run: keep their results for a retry
            error.add_note(
                "the items' next round was not submitted; `error.batch_job` holds the job "
                "with their progress: advance_batch(error.batch_job) submits it"
            )
            vars(error)["batch_job"] = BatchJob(None, job.provider, entries)
            raise
        return BatchJob(batch_id, job.provider, entries)

    # ---- the provider's batch API

    def _check_count(self, count: int) -> None:
        most = self._wire.limits.max_items
        if most is not None and count > most:
            raise BadRequestError(
                f"{count} items are more than the {most} one {self._api.name} batch "
                "takes: submit them in several batches",
                prompt_name=BATCH,
                phase="request",
            )

    async def _submit(self, lines: Sequence[BatchLine]) -> str:
        wire = self._wire
        limits = wire.limits
        self._check_count(len(lines))
        size = wire.size(lines)
        if size > limits.max_bytes:
            raise BadRequestError(
                f"the batch is {size} bytes ({limits.what}), more than the {limits.max_bytes} "
                f"bytes {self._api.name} takes: submit it in several batches",
                prompt_name=BATCH,
                phase="request",
            )
        return await self._call(lambda t: wire.submit(t, lines, self._timeout))

    async def _status(self, batch_id: str) -> WireStatus:
        wire = self._wire
        return await self._call(lambda t: wire.status(t, batch_id, self._timeout))

    async def _call(self, fn: Callable[[Transport], Awaitable[T]]) -> T:
        """One call of the batch API under the adapter's `RetryPolicy`, its failures
        mapped as `evaluate`'s are."""
        transport = self._transport()
        api, secrets = self._api, self._secrets

        async def attempt() -> T:
            try:
                with api.map_errors(BATCH, secrets):
                    return await fn(transport)
            except WinkError:
                raise
            except ValueError as error:  # not the documented shape
                raise response_shape_error(BATCH, str(error), secrets=secrets) from error
            except Exception as error:
                raise PromptEvaluationError(
                    f"the batch API's answer could not be read: {type(error).__name__}: "
                    f"{redact_secrets(str(error), secrets)}",
                    prompt_name=BATCH,
                    phase="response",
                ) from error

        return await self._retry.call(attempt)

    def _exchange(self, settings: ModelSettings | None) -> Exchange:
        """The exchange that encodes an item's requests: the adapter's translator, or
        one with the item's own settings merged over the adapter's (refused as the
        adapter refuses them)."""
        if settings is None:
            return self._default
        if not isinstance(cast(object, settings), ModelSettings):
            raise InvalidArgumentError(
                f"a BatchItem's settings must be a ModelSettings, got {settings!r}",
                argument="settings",
            )
        api = self._api
        warn_unsupported(
            api.name, api.unsupported_settings, settings, stacklevel=3, takes=api.settings_type
        )
        return Exchange(
            type(api)(api.settings.merged(settings), api.host),
            secrets=self._secrets,
            timeout=self._timeout,
            pricer=self._pricer,
        )

    # ---- checks

    def _own(self, job: object) -> BatchJob:
        checked = _a_job(job)
        if checked.provider != self.name:
            raise InvalidArgumentError(
                f"this job was submitted by {checked.provider}; it is polled and advanced by "
                f"an adapter of that name, not {self.name}",
                argument="job",
            )
        return checked

    @staticmethod
    def _batch_id(job: BatchJob) -> str:
        if job.id is None:
            raise InvalidArgumentError(
                "this job's round is not submitted yet: advance_batch(job) submits it",
                argument="job",
            )
        return job.id


def _a_job(job: object) -> BatchJob:
    if not isinstance(job, BatchJob):
        raise InvalidArgumentError(
            f"job must be a BatchJob (adapter.submit_batch(...), BatchJob.from_json(...)), "
            f"got {type(job).__name__}",
            argument="job",
        )
    return job


def _answer(answers: Mapping[str, ItemAnswer], key: str, state: str) -> ItemAnswer:
    """An item's answer; one the provider left out never ran if the batch expired or was
    cancelled, else it has no result."""
    found = answers.get(key)
    if found is not None:
        return found
    if state == "expired":
        return ItemAnswer(not_run="expired")
    if state == "cancelled":
        return ItemAnswer(not_run="cancelled")
    return ItemAnswer()
