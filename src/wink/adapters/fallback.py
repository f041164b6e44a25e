"""`FallbackAdapter`: one evaluation over several adapters, moving on when one fails over.

The loop (`wink.core.agent.loop`) runs once. Its model client here sends each round's request
to the current adapter's runner, under that adapter's own `RetryPolicy`; when the
adapter gives up with a failure `fallback_on` accepts, the same request goes to the next
adapter. The tools already run stay run, so none runs twice, and the next provider gets
the whole neutral transcript, translated by its own translator, with what cannot travel
between providers left behind: each runner sends another adapter's turns by the rules of
`wink.core.foundation.portable`, the same as for a continued conversation.
docs/fallback.md explains it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import Unpack

from ..core.agent.loop import LoopSettings
from ..core.agent.rounds import NULL_SINK, NullSink, RoundAttempts, publish
from ..core.foundation.errors import (
    AllAdaptersFailedError,
    AllAdaptersThrottledError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    DeadlineExceededError,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    ThrottleDetails,
    ThrottleError,
    UnsupportedContentError,
    UnsupportedFeatureError,
    WinkError,
)
from ..core.foundation.events import AdapterSwitched, EventSink
from ..core.foundation.limits import Deadline
from ..core.foundation.messages import (
    ModelRequest,
    ModelResponse,
)
from ..core.prompting.session import Session
from ..core.telemetry.spans import telemetry_for
from ..core.throttling.retry import RetryPolicy
from ..core.transport.runner import Runner
from .base import CountOptions, ProviderAdapter
from .evaluator import Evaluator
from .options import telemetry_option

if TYPE_CHECKING:
    from ..core.foundation.settings import ModelSettings

__all__ = [
    "FallbackAdapter",
    "FallbackPredicate",
    "another_adapter_may_help",
    "throttled",
]

FallbackPredicate = Callable[[WinkError], bool]

_DEFAULT_COOLDOWN = timedelta(seconds=30)
_DEFAULT_MAX_COOLDOWN = timedelta(hours=1)
_NO_RETRY = RetryPolicy(max_attempts=1)  # the loop's: each adapter retries under its own


def throttled(error: WinkError) -> bool:
    """A `ThrottleError` of any kind (rate limit, quota, overloaded, timeout,
    connection), raised once the adapter's own `RetryPolicy` gave up, or the adapter's
    throttle window outlasting the deadline. The part of `another_adapter_may_help`
    about throttles, for a chain that should move on for nothing else."""
    return isinstance(error, ThrottleError | DeadlineExceededError)


# Failures that say something about the adapter (its key, account or model, or no key at
# all), not about the request: the next adapter, with its own, may well succeed.
_ADAPTER_FAILURES = (AuthenticationError, PermissionDeniedError, NotFoundError, ConfigurationError)
# another model may take it: a longer input, a part this provider cannot carry
_ELSEWHERE = (ContextWindowExceededError, UnsupportedContentError, *_ADAPTER_FAILURES)


def another_adapter_may_help(error: WinkError) -> bool:
    """The default `fallback_on` (docs/fallback.md has the table): the throttles
    (`throttled`); an input too long for this model's context window (the next may have a
    larger one); an image, a document or an audio this provider cannot take (the next
    may); a key, an account or a model name this provider refused (401, 403,
    404: nothing about the next adapter), or no key at all (`ConfigurationError`). Not
    any other rejected request (`BadRequestError`: malformed here is malformed
    everywhere), nor a request a content filter blocked, nor an answer wink could not
    use."""
    return throttled(error) or isinstance(error, _ELSEWHERE)


class CircuitBreaker:
    """Which adapters to skip for now; shared by every evaluation of one `FallbackAdapter`.

    An adapter that failed over is skipped for the wait its provider asked (`retry_after`,
    at most `max_cooldown`), else for `cooldown`; then it is tried again. An answer
    closes its circuit at once. A request the adapter rejected as it is (a
    `BadRequestError`, a context window too small) moves that evaluation on but opens
    no circuit: it says nothing of the adapter's next requests.
    """

    def __init__(
        self,
        size: int,
        *,
        cooldown: float,
        max_cooldown: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._until: list[float] = [0.0] * size
        self._errors: list[WinkError | None] = [None] * size
        self._cooldown = cooldown
        self._max_cooldown = max_cooldown
        self._clock = clock

    def trip(self, index: int, error: WinkError) -> None:
        asked = error.details.retry_after_seconds if isinstance(error, ThrottleError) else None
        wait = min(asked if asked is not None else self._cooldown, self._max_cooldown)
        with self._lock:
            self._until[index] = self._clock() + wait
            self._errors[index] = error

    def close(self, index: int) -> None:
        with self._lock:
            self._until[index] = 0.0
            self._errors[index] = None

    def remaining(self, index: int) -> float | None:
        """Seconds until the adapter is tried again; None when it may be tried now."""
        with self._lock:
            left = self._until[index] - self._clock()
        return left if left > 0 else None

    def error(self, index: int) -> WinkError | None:
        """The failure that opened the adapter's circuit (None if it never did)."""
        with self._lock:
            return self._errors[index]


class FallbackAdapter(Evaluator):
    """Adapters tried in order, for one evaluation: the interface of any adapter.

    `fallback_on(error)` decides whether a failure moves the evaluation to the next
    adapter (default: `another_adapter_may_help`). The deadline and budget given to
    `evaluate` span all adapters. Loop settings (`max_rounds`, `graceful_tool_errors`,
    `max_failed_tool_rounds`, `max_output_retries`) are the first adapter's; each adapter
    keeps its own retry policy, timeout and model settings. `cooldown` / `max_cooldown`:
    see `CircuitBreaker`. `close()` / `aclose()` close every adapter. When every adapter
    failed, the evaluation raises `AllAdaptersFailedError` (`AllAdaptersThrottledError`,
    a `ThrottleError`, when each was throttled).
    """

    def __init__(
        self,
        adapters: Sequence[ProviderAdapter],
        *,
        fallback_on: FallbackPredicate | None = None,
        cooldown: timedelta | float = _DEFAULT_COOLDOWN,
        max_cooldown: timedelta | float = _DEFAULT_MAX_COOLDOWN,
        tracer_provider: Any = None,
    ) -> None:
        given = cast(object, adapters)
        if isinstance(given, str) or not isinstance(given, Sequence):
            raise ConfigurationError("adapters must be a list of adapters", option="adapters")
        items = tuple(cast(Sequence[object], given))
        if not items:
            raise ConfigurationError("FallbackAdapter needs at least one adapter")
        for item in items:
            if not isinstance(item, ProviderAdapter):
                raise ConfigurationError(
                    f"every fallback must be a provider adapter (create_adapter(...)), got "
                    f"{type(item).__name__}",
                    option="adapters",
                )
        if fallback_on is not None and not callable(fallback_on):
            raise ConfigurationError("fallback_on must be callable", option="fallback_on")
        self.adapters: tuple[ProviderAdapter, ...] = cast(tuple[ProviderAdapter, ...], items)
        self.fallback_on: FallbackPredicate = fallback_on or another_adapter_may_help
        self._breaker = CircuitBreaker(
            len(items),
            cooldown=_seconds(cooldown, "cooldown"),
            max_cooldown=_seconds(max_cooldown, "max_cooldown"),
        )
        self._telemetry = telemetry_option(tracer_provider)

    @property
    def name(self) -> str:
        return "fallback(" + ", ".join(adapter.name for adapter in self.adapters) + ")"

    def __repr__(self) -> str:
        return f"FallbackAdapter({list(self.adapters)!r})"

    def cooling_down(self) -> dict[str, timedelta]:
        """The adapters skipped for now, with the time left until they are tried again."""
        waits: dict[str, timedelta] = {}
        for index, adapter in enumerate(self.adapters):
            left = self._breaker.remaining(index)
            if left is not None:
                waits[adapter.name] = timedelta(seconds=left)
        return waits

    # ---- what the public entry points (`Evaluator`) run

    def _plan(
        self, session: Session, *, blocking: bool, settings: ModelSettings | None = None
    ) -> tuple[_Chain, LoopSettings]:
        """The first adapter's loop settings, without retries: each adapter retries
        under its own policy inside the chain."""
        first = self.adapters[0]
        loop_settings = replace(
            first.loop_settings(),
            retry_policy=_NO_RETRY,
            telemetry=telemetry_for(self._telemetry),
        )
        runners = tuple(
            adapter.model_client(blocking=blocking, settings=settings) for adapter in self.adapters
        )
        names = [adapter.name for adapter in self.adapters]
        for index, runner in enumerate(runners):
            if names.count(runner.origin) > 1:  # two accounts of one model: each its own
                runner.origin = f"{runner.origin}#{index + 1}"
        chain = _Chain(
            self.adapters,
            runners,
            self._breaker,
            self.fallback_on,
            session,
        )
        return chain, loop_settings

    # ---- token counts

    def count_tokens(self, prompt: Any, **count_options: Unpack[CountOptions]) -> int:
        """The input tokens of the request `evaluate(prompt, ...)` would send first,
        counted by the first adapter that can count (`ProviderAdapter.count_tokens`): an
        adapter without a token-count endpoint (`UnsupportedFeatureError`) is passed
        over, and so is one failing as `fallback_on` says moves an evaluation on. Sync;
        `count_tokens_async` on a loop (docs/fallback.md#counting-tokens)."""
        failures: list[tuple[str, WinkError]] = []
        for adapter in self.adapters:
            try:
                return adapter.count_tokens(prompt, **count_options)
            except WinkError as error:
                self._count_failed(adapter, error, failures, count_options)
        raise _count_exhausted(prompt, failures)

    async def count_tokens_async(self, prompt: Any, **count_options: Unpack[CountOptions]) -> int:
        """`count_tokens` on the running loop (each adapter's `count_tokens_async`)."""
        failures: list[tuple[str, WinkError]] = []
        for adapter in self.adapters:
            try:
                return await adapter.count_tokens_async(prompt, **count_options)
            except WinkError as error:
                self._count_failed(adapter, error, failures, count_options)
        raise _count_exhausted(prompt, failures)

    def _count_failed(
        self,
        adapter: ProviderAdapter,
        error: WinkError,
        failures: list[tuple[str, WinkError]],
        options: CountOptions,
    ) -> None:
        """Record a count that failed over to the next adapter; raise `error` when it
        does not (`fallback_on` says no, or the deadline is spent)."""
        if not isinstance(error, UnsupportedFeatureError):
            if not self.fallback_on(error):
                raise error
            deadline = options.get("deadline")
            if isinstance(deadline, Deadline) and deadline.expired():
                raise error
        failures.append((adapter.name, error))

    def check_call_settings(self, settings: ModelSettings) -> None:
        for adapter in self.adapters:  # each merges the call's over its own
            adapter.check_call_settings(settings)

    def check_priced(self) -> None:
        for adapter in self.adapters:  # each round is priced by the adapter that runs it
            adapter.check_priced()

    # ---- opening and closing

    def _prepare(self, *, sync: bool) -> None:
        for adapter in self.adapters:
            adapter._prepare(sync=sync)

    async def aclose(self) -> None:
        for adapter in self.adapters:
            await adapter.aclose()
        await self._release_sources_async()

    def close(self) -> None:
        for adapter in self.adapters:
            adapter.close()
        self._release_sources()


class _Chain:
    """The model client of one evaluation (`wink.core.agent.loop.ModelClient`): the current
    adapter serves each round until it fails over; its name is the serving adapter's."""

    def __init__(
        self,
        adapters: tuple[ProviderAdapter, ...],
        runners: tuple[Runner, ...],
        breaker: CircuitBreaker,
        fallback_on: FallbackPredicate,
        session: Session,
    ) -> None:
        self._adapters = adapters
        self._runners = runners
        self._breaker = breaker
        self._fallback_on = fallback_on
        self._session = session
        ready = [i for i in range(len(adapters)) if breaker.remaining(i) is None]
        self._current = ready[0] if ready else 0
        self._round = 0  # the loop calls once per round: its retries happen here

    @property
    def name(self) -> str:
        return self._adapters[self._current].name

    @property
    def system(self) -> str:
        return self._adapters[self._current].host.telemetry_name

    def redact(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        cleaned: dict[str, Any] = dict(payload)
        for runner in self._runners:  # any adapter's secret, whoever answered
            cleaned = runner.redact(cleaned)
        return cleaned

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self._serve(request, NULL_SINK)

    async def stream(self, request: ModelRequest, sink: EventSink) -> ModelResponse:
        """The round streamed by whichever adapter serves it. A retry or a switch after
        some of its events reached the caller is announced with `RoundRestarted`, as the
        loop does for one adapter: what the round showed so far is void."""
        return await self._serve(request, sink)

    async def _serve(self, request: ModelRequest, sink: EventSink | NullSink) -> ModelResponse:
        """Each adapter's attempt goes through the loop's own `RoundAttempts`, under the
        adapter's retry policy; a failure that moves on voids what it showed."""
        self._round += 1
        attempts = RoundAttempts(self._session, sink, self._round)
        count = len(self._adapters)
        failures: dict[int, WinkError] = {}
        waits: dict[int, float | None] = {}
        reason: WinkError | None = None  # why the current adapter is being left
        start = self._current
        for step in range(count):
            index = (start + step) % count
            left = self._breaker.remaining(index)
            if left is not None:  # cooling down: skipped, its earlier failure stands
                stored = self._breaker.error(index)
                if stored is not None:
                    failures[index], waits[index] = stored, left
                    if index == self._current:
                        reason = stored
                continue
            if index != self._current:
                self._switch(request.prompt_name, index, reason)
            adapter = self._adapters[index]
            try:
                response = await attempts.send(
                    self._runners[index], request, adapter.retry_policy, adapter.name
                )
            except WinkError as error:
                deadline = request.deadline
                if (deadline is not None and deadline.expired()) or not self._fallback_on(error):
                    raise
                if not isinstance(error, BadRequestError):  # this request's, not the adapter's
                    self._breaker.trip(index, error)
                failures[index] = error
                waits[index] = _asked(error)
                reason = error
                attempts.restart(error)
                continue
            self._breaker.close(index)
            return response
        raise self._exhausted(request.prompt_name, failures, waits)

    def _switch(self, prompt_name: str, index: int, reason: WinkError | None) -> None:
        previous, self._current = self._current, index
        if reason is None:  # not a switch: the first adapter tried was cooling down
            return
        event = AdapterSwitched(
            prompt_name=prompt_name,
            from_adapter=self._adapters[previous].name,
            to_adapter=self._adapters[index].name,
            error=reason,
        )
        publish(self._session, event)

    def _exhausted(
        self, prompt_name: str, failures: dict[int, WinkError], waits: dict[int, float | None]
    ) -> AllAdaptersFailedError:
        ordered = [(self._adapters[i].name, failures[i]) for i in sorted(failures)]
        return _all_failed(prompt_name, ordered, failures, waits)


def _all_failed(
    prompt_name: str,
    ordered: list[tuple[str, WinkError]],
    failures: Mapping[int, WinkError],
    waits: Mapping[int, float | None],
) -> AllAdaptersFailedError:
    """Every adapter failed: `AllAdaptersThrottledError` when each was throttled (its
    `retry_after` the soonest any provider asked), else `AllAdaptersFailedError`."""
    summary = "; ".join(f"{name}: {_brief(error)}" for name, error in ordered)
    message = f"every adapter failed: {summary}"
    throttles = [error for _, error in ordered if isinstance(error, ThrottleError)]
    if not ordered or len(throttles) != len(ordered):
        return AllAdaptersFailedError(message, prompt_name=prompt_name, failures=ordered)
    asked = [(wait, failures[i]) for i, wait in waits.items() if wait is not None]
    soonest = min(asked, key=lambda pair: pair[0], default=None)
    first = cast(ThrottleError, soonest[1] if soonest else throttles[0])
    details = ThrottleDetails(
        kind=first.details.kind,
        retry_after=soonest[0] if soonest else None,
        attempts=sum(error.details.attempts for error in throttles),
        retry_safe=any(error.details.retry_safe for error in throttles),
    )
    return AllAdaptersThrottledError(
        message, prompt_name=prompt_name, details=details, failures=ordered
    )


def _count_exhausted(prompt: Any, failures: list[tuple[str, WinkError]]) -> WinkError:
    """No adapter counted: the first `UnsupportedFeatureError` when none of them can
    count, else the failures of those that could, together (as an evaluation's)."""
    tried = [(n, e) for n, e in failures if not isinstance(e, UnsupportedFeatureError)]
    if not tried:
        return failures[0][1]
    failures = tried
    name = prompt.name if isinstance(getattr(prompt, "name", None), str) else "prompt"
    indexed = dict(enumerate(error for _, error in failures))
    return _all_failed(name, failures, indexed, {i: _asked(e) for i, e in indexed.items()})


# ---- helpers


def _asked(error: WinkError) -> float | None:
    return error.details.retry_after_seconds if isinstance(error, ThrottleError) else None


def _brief(error: WinkError) -> str:
    if isinstance(error, ThrottleError):
        return f"{error.details.kind}, {error.message}"
    if isinstance(error, PromptEvaluationError):
        return error.message
    return str(error)


def _seconds(value: object, name: str) -> float:
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise ConfigurationError(
            f"{name} must be a timedelta or seconds, got {value!r}", option=name
        )
    if not seconds >= 0 or seconds == float("inf"):
        raise ConfigurationError(f"{name} must be finite and >= 0, got {value!r}", option=name)
    return seconds
