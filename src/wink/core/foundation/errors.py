"""Every exception wink raises.

* WinkError
  - ConfigurationError
    + UnsupportedFeatureError
  - InvalidArgumentError
  - ToolValidationError
  - ToolSourceError
  - DeadlineExceededError
  - StreamNotFinishedError
  - UnsendableValueError
  - SnapshotError
    + SnapshotRestoreError
  - TransactionError
    + RestoreFailedError
  - PromptError
    + PromptValidationError
    + PromptRenderError
    + VisibilityExpansionRequired
  - PromptEvaluationError
    + BadRequestError
      + ContextWindowExceededError
      + UnsupportedContentError
    + AuthenticationError
    + PermissionDeniedError
    + NotFoundError
    + ContentFilteredError
    + OutputTruncatedError
    + RefusalError
    + ThrottleError
    + BudgetExceededError
    + AllAdaptersFailedError
      + AllAdaptersThrottledError
    + BatchExpiredError
    + BatchCancelledError
  - ResourceError
    + UnboundResourceError
    + CircularDependencyError
    + DuplicateBindingError
    + ProviderError

The `PromptEvaluationError` subclasses say what a provider's answer means, whichever
provider sent it (`wink.core.transport.errors` decides, once for all): a request to fix
(`BadRequestError`, `ContextWindowExceededError`; `UnsupportedContentError` is wink's own,
raised before sending a part the provider cannot take), a key or an account to fix
(`AuthenticationError`, `PermissionDeniedError`), a model name to fix (`NotFoundError`),
content a filter blocked (`ContentFilteredError`), an answer that ended without a usable
final answer (`OutputTruncatedError`, `RefusalError`), or a throttle to wait out
(`ThrottleError`). A batch item that never ran is `BatchExpiredError` (the batch's
window ended first) or `BatchCancelledError` (the batch was cancelled first); an item the
provider did run and refused raises what `evaluate` raises. `ProviderError` is not about
LLM providers: it is a resource factory that raised (`wink.core.prompting.resources`).

`AllAdaptersThrottledError` is also a `ThrottleError`: `except ThrottleError` catches a
`FallbackAdapter` whose adapters were all throttled.

Two warnings: `UnsupportedSettingWarning`, when a provider cannot honour a setting;
`UnpricedModelWarning`, when an answer cannot be priced (its `cost` is None).

Exceptions are for infrastructure failures; a tool's own failure is a `ToolResult`
sent back to the model, never one of these (see `wink.core.prompting.tools`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .cost import Cost, PriceTag
    from .messages import FinishReason, Usage

__all__ = [
    "AllAdaptersFailedError",
    "AllAdaptersThrottledError",
    "AuthenticationError",
    "BadRequestError",
    "BatchCancelledError",
    "BatchExpiredError",
    "BudgetExceededError",
    "CircularDependencyError",
    "ConfigurationError",
    "ContentFilteredError",
    "ContextWindowExceededError",
    "DeadlineExceededError",
    "DuplicateBindingError",
    "EvaluationPhase",
    "InvalidArgumentError",
    "NotFoundError",
    "OutputTruncatedError",
    "PermissionDeniedError",
    "PromptError",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ProviderError",
    "RefusalError",
    "ResourceError",
    "RestoreFailedError",
    "SnapshotError",
    "SnapshotRestoreError",
    "StreamNotFinishedError",
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "ToolSourceError",
    "ToolValidationError",
    "TransactionError",
    "UnboundResourceError",
    "UnsendableValueError",
    "UnpricedModelWarning",
    "UnsupportedContentError",
    "UnsupportedFeatureError",
    "UnsupportedSettingWarning",
    "VisibilityExpansionRequired",
    "WinkError",
]

EvaluationPhase = Literal["request", "response", "tool", "budget"]
"""Where an evaluation failed (`PromptEvaluationError.phase`): sending a request, reading
a response, running a tool, or its `Budget`."""
ThrottleKind = Literal["rate_limit", "quota_exhausted", "overloaded", "timeout", "connection"]
"""Why a request was throttled: `rate_limit` (429), `quota_exhausted` (out of credit:
never retried), `overloaded` (any 5xx: Anthropic's 529 too), `timeout` (no answer in time, 408),
`connection` (the connection was refused, reset or cut before the answer was whole)."""


class WinkError(Exception):
    """Base of every exception wink raises.

    Catch it once at the top of an agent to handle any failure of the library::

        try:
            response = adapter.evaluate(prompt, session=session)
        except ThrottleError as error:
            if error.details.retry_safe:
                schedule_retry(after=error.details.retry_after)
        except WinkError as error:
            log.error("evaluation failed: %s", error)
    """


class ConfigurationError(WinkError, ValueError):
    """An adapter cannot be built or used as configured: nothing was sent.

    A malformed `"provider:model"` spec, an unknown provider, a missing optional extra,
    or a client that cannot serve the call (an async client given to sync `evaluate()`).
    `provider` and `option` say where, when known.
    """

    def __init__(
        self, message: str, *, provider: str | None = None, option: str | None = None
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.option = option


class UnsupportedFeatureError(ConfigurationError):
    """The adapter's wire format or host has no such capability (`feature` names it):
    nothing was sent, and wink offers no stand-in (a token count is never an estimate).
    Use a provider that has it (the adapters' pages in docs/adapters/ say which do)."""

    def __init__(self, message: str, *, feature: str, provider: str | None = None) -> None:
        super().__init__(message, provider=provider)
        self.feature = feature


class ToolSourceError(WinkError, RuntimeError):
    """A tool source (an MCP server: `wink.mcp`) cannot be started, reached or listed,
    so its tools cannot be offered: raised when it connects (`with server:`, or the first
    evaluation that uses it), naming the command or URL, never an env value or a header.

    A failure of one of its tools during an evaluation is not this: it goes back to the
    model as a failed `ToolResult`. `source` is the server's name.
    """

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(message)
        self.source = source


class InvalidArgumentError(WinkError, TypeError):
    """A public call was given an argument of the wrong type (a str where a `Prompt`
    belongs); raised at the call, before anything is sent."""

    def __init__(self, message: str, *, argument: str) -> None:
        super().__init__(message)
        self.argument = argument


class ToolValidationError(WinkError, ValueError):
    """A tool's arguments did not match its parameter dataclass."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name


class DeadlineExceededError(WinkError, RuntimeError):
    """The evaluation outlived its `Deadline`."""

    def __init__(
        self, message: str = "deadline exceeded", *, prompt_name: str | None = None
    ) -> None:
        super().__init__(message)
        self.prompt_name = prompt_name


class StreamNotFinishedError(WinkError, RuntimeError):
    """`stream.response` was read before the stream's iteration ended (or after the
    stream was closed early), or a closed stream was iterated again."""


class UnsendableValueError(WinkError, ValueError):
    """A successful `ToolResult.value` that cannot be turned into JSON for the model (the
    executor sends the model a failed result instead; see `wink.core.agent.executor`)."""


# --- snapshots and transactions


class SnapshotError(WinkError, RuntimeError):
    """A session snapshot could not be taken."""


class SnapshotRestoreError(SnapshotError):
    """A session could not be restored from a snapshot."""


class TransactionError(WinkError, RuntimeError):
    """A tool's session transaction failed."""


class RestoreFailedError(TransactionError):
    """Rolling back a failed tool's session changes failed; the session may be inconsistent."""


# --- prompts


class PromptError(WinkError):
    """A prompt could not be built or rendered; the fields say where."""

    def __init__(
        self,
        message: str,
        *,
        section_path: Sequence[str] = (),
        placeholder: str | None = None,
        dataclass_type: type[Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.section_path: tuple[str, ...] = tuple(section_path)
        self.placeholder = placeholder
        self.dataclass_type = dataclass_type

    def __str__(self) -> str:
        where = f" (section {'.'.join(self.section_path)})" if self.section_path else ""
        return f"{self.message}{where}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, section_path={self.section_path!r}, "
            f"placeholder={self.placeholder!r}, dataclass_type={self.dataclass_type!r})"
        )


class PromptValidationError(PromptError):
    """A prompt, section, tool or bound parameter is invalid."""


class PromptRenderError(PromptError):
    """A template could not be filled from the bound parameters."""


class VisibilityExpansionRequired(PromptError):
    """The model asked to open summarized sections; apply the overrides and evaluate again."""

    def __init__(
        self,
        message: str,
        *,
        requested_overrides: Mapping[tuple[str, ...], str],
        section_path: Sequence[str] = (),
    ) -> None:
        super().__init__(message, section_path=section_path)
        self.requested_overrides: dict[tuple[str, ...], str] = dict(requested_overrides)


# --- evaluation and throttling


class PromptEvaluationError(WinkError):
    """Evaluating a prompt failed in `phase`; `provider_payload` holds the provider's words.

    `status_code` is the HTTP status of the provider's answer (for an error event in a
    stream, the status that event stands for; 200 for an answer that came whole but
    cannot be used); None when no answer came (a timeout, a connection failure) or the
    failure is wink's own. For an answer that ended without a usable final answer,
    `finish_reason` says why it ended, `refusal` holds the provider's refusal text and
    `partial_text` the text the model produced before it was cut off or filtered (each
    None when the provider gave none; secrets masked like the payload).
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        phase: EvaluationPhase,
        provider_payload: Mapping[str, Any] | None = None,
        status_code: int | None = None,
        finish_reason: FinishReason | None = None,
        refusal: str | None = None,
        partial_text: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.prompt_name = prompt_name
        self.phase: EvaluationPhase = phase
        self.provider_payload: dict[str, Any] | None = (
            dict(provider_payload) if provider_payload is not None else None
        )
        self.status_code = status_code
        self.finish_reason: FinishReason | None = finish_reason
        self.refusal = refusal
        self.partial_text = partial_text

    def __str__(self) -> str:
        return f"{self.phase} failed for prompt {self.prompt_name!r}: {self.message}"

    def __repr__(self) -> str:
        status = f", status_code={self.status_code!r}" if self.status_code is not None else ""
        return (
            f"{type(self).__name__}({self.message!r}, prompt_name={self.prompt_name!r}, "
            f"phase={self.phase!r}{status})"
        )


# --- what a provider's answer means (classified in wink.core.transport.errors)


class BadRequestError(PromptEvaluationError):
    """The provider rejected the request as it is (400, 422, any 4xx without a class of
    its own): fix the request; sent again unchanged it fails the same way."""


class ContextWindowExceededError(BadRequestError):
    """The input (with the room asked for the answer) does not fit the model's context
    window: shorten the transcript, ask for fewer output tokens, or use a model with a
    larger window (a `FallbackAdapter` moves on to the next adapter by default)."""


class UnsupportedContentError(BadRequestError):
    """A content part this provider cannot take (its kind, its media type, how it is
    given, where it is) or one over its documented size limits, found before anything
    was sent. `provider` and `part` name them; a `FallbackAdapter` moves on by default."""

    def __init__(
        self, message: str, *, prompt_name: str, provider: str, part: object | None = None
    ) -> None:
        super().__init__(message, prompt_name=prompt_name, phase="request")
        self.provider = provider
        self.part = part


class AuthenticationError(PromptEvaluationError):
    """The provider did not accept the API key (401; Gemini's 400 `API_KEY_INVALID`):
    the key is wrong, revoked or for another provider. Rotate the key."""


class PermissionDeniedError(PromptEvaluationError):
    """403: the key is valid but may not use this model, feature, project or region."""


class NotFoundError(PromptEvaluationError):
    """404: almost always a model name the provider does not know (a typo, a retired
    model, one the account cannot see), else a wrong `base_url`. `model` names the
    model the adapter asked for, when known."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        phase: EvaluationPhase = "request",
        provider_payload: Mapping[str, Any] | None = None,
        status_code: int | None = 404,
        model: str | None = None,
    ) -> None:
        super().__init__(
            message,
            prompt_name=prompt_name,
            phase=phase,
            provider_payload=provider_payload,
            status_code=status_code,
        )
        self.model = model


class ContentFilteredError(PromptEvaluationError):
    """The provider's content filter blocked the request (`phase="request"`: Azure
    OpenAI's 400 `content_filter`, OpenAI's flagged `invalid_prompt`) or the answer
    (`phase="response"`: finish reason `content_filter`, Gemini `SAFETY` and its
    siblings, a prompt Gemini blocked); `partial_text` is what came before the block."""


class OutputTruncatedError(PromptEvaluationError):
    """The answer was cut off at the output token limit (finish reason `length`): raise
    `max_tokens`, or ask for less. `partial_text` is the text produced until then."""


class RefusalError(PromptEvaluationError):
    """The model declined to answer (finish reason `refusal`: OpenAI's `refusal`,
    Anthropic's `stop_reason: "refusal"`; Gemini has none, it blocks instead:
    `ContentFilteredError`). `refusal` is the provider's words for it, when it gave any."""


@dataclass(frozen=True, slots=True, init=False)
class ThrottleDetails:
    """What a caller needs to act on a throttle: why, how long to wait, whether to retry.

    `retry_after` is how long the provider asked to wait, as a `timedelta` (None when it
    did not say), kept as asked even when wink gave up because it was too long, so the
    caller can schedule: `time.sleep(details.retry_after.total_seconds())`.
    `retry_after_seconds` is the same in float seconds.

    `limit_reached` says the answer itself confirms that a limit of the account was hit:
    a rate-limit header at 0 remaining, or an error body that names the limit. A 429
    without it may be a stray (a provider short of capacity, a gateway): wink's pacer
    then makes only that request wait, not every request of the adapter
    (docs/throttling.md).

    The constructor also takes seconds (an int or a float) for `retry_after`, stored as
    a `timedelta` (to the microsecond); a negative or non-finite value is a
    `ConfigurationError` (a ValueError), a non-numeric one an `InvalidArgumentError` (a
    TypeError).
    """

    kind: ThrottleKind
    retry_after: timedelta | None
    attempts: int
    retry_safe: bool
    status_code: int | None
    limit_reached: bool

    def __init__(
        self,
        kind: ThrottleKind,
        retry_after: timedelta | float | None = None,
        attempts: int = 1,
        retry_safe: bool = True,
        status_code: int | None = None,
        limit_reached: bool = False,
    ) -> None:
        # frozen: the fields are set once, here, through object.__setattr__
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "retry_after", _as_timedelta(retry_after))
        object.__setattr__(self, "attempts", attempts)
        object.__setattr__(self, "retry_safe", retry_safe)
        object.__setattr__(self, "status_code", status_code)
        object.__setattr__(self, "limit_reached", limit_reached)

    @property
    def retry_after_seconds(self) -> float | None:
        """`retry_after` in seconds (None when the provider did not say)."""
        return None if self.retry_after is None else self.retry_after.total_seconds()


def _as_timedelta(value: object) -> timedelta | None:
    """`retry_after` as given (a timedelta, or seconds) -> a non-negative timedelta."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        wait = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if not math.isfinite(seconds):
            raise ConfigurationError(
                f"retry_after must be a finite number of seconds, got {value!r}",
                option="retry_after",
            )
        if seconds < 0:
            raise ConfigurationError(
                f"retry_after must not be negative, got {value!r}", option="retry_after"
            )
        try:
            wait = timedelta(seconds=seconds)
        except OverflowError:
            raise ConfigurationError(
                f"retry_after must be at most {timedelta.max.total_seconds():g}s, got {value!r}",
                option="retry_after",
            ) from None
    else:
        raise InvalidArgumentError(
            "retry_after must be a datetime.timedelta, a number of seconds or None, "
            f"got {type(value).__name__}",
            argument="retry_after",
        )
    if wait < timedelta(0):
        raise ConfigurationError(
            f"retry_after must not be negative, got {value!r}", option="retry_after"
        )
    return wait


class ThrottleError(PromptEvaluationError):
    """The provider throttled, was overloaded, timed out or the connection failed; see
    `details` (`status_code` is `details.status_code`)."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        details: ThrottleDetails,
        phase: EvaluationPhase = "request",
        provider_payload: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            message,
            prompt_name=prompt_name,
            phase=phase,
            provider_payload=provider_payload,
            status_code=details.status_code,
        )
        self.details = details

    def __str__(self) -> str:
        d = self.details
        seconds = d.retry_after_seconds
        wait = f", retry after {seconds:g}s" if seconds is not None else ""
        plural = "s" if d.attempts != 1 else ""
        return (
            f"{d.kind} for prompt {self.prompt_name!r} after {d.attempts} attempt{plural}"
            f"{wait}: {self.message}"
        )

    def __repr__(self) -> str:
        return (
            f"ThrottleError({self.message!r}, prompt_name={self.prompt_name!r}, "
            f"details={self.details!r})"
        )


class BudgetExceededError(PromptEvaluationError):
    """The evaluation's `Budget` is spent (`phase="budget"`): a round went past one of its
    limits, or the next round would start with nothing left. `usage` is what the
    evaluation used so far, `cost` what it cost (None where a round cannot be priced;
    worked out when read: docs/cost.md)."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        usage: Usage,
        price_tag: PriceTag | None = None,
        provider_payload: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            message, prompt_name=prompt_name, phase="budget", provider_payload=provider_payload
        )
        self.usage = usage
        self.price_tag = price_tag

    @property
    def cost(self) -> Cost | None:
        tag = self.price_tag
        return tag.cost if tag is not None else None


class AllAdaptersFailedError(PromptEvaluationError):
    """Every adapter of a `FallbackAdapter` failed the same request (`phase="request"`).

    `failures` holds each adapter's failure as (adapter name, error), in the adapters'
    order; an adapter skipped because its circuit was open gives the error that opened
    it. When all of them are `ThrottleError`s the error raised is the subclass
    `AllAdaptersThrottledError`, so `except ThrottleError` keeps working.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        failures: Sequence[tuple[str, WinkError]] = (),
        phase: EvaluationPhase = "request",
        provider_payload: Mapping[str, Any] | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(
            message,
            prompt_name=prompt_name,
            phase=phase,
            provider_payload=provider_payload,
            status_code=status_code,
        )
        self.failures: tuple[tuple[str, WinkError], ...] = tuple(failures)


class AllAdaptersThrottledError(ThrottleError, AllAdaptersFailedError):
    """Every adapter was throttled; `details.retry_after` is the shortest wait asked
    (counted from now), `details.retry_safe` whether any of them may be retried."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        details: ThrottleDetails,
        failures: Sequence[tuple[str, WinkError]],
    ) -> None:
        super().__init__(message, prompt_name=prompt_name, details=details)
        self.failures = tuple(failures)


# --- batch items that never ran (docs/batch.md)


class BatchExpiredError(PromptEvaluationError):
    """The batch's processing window (24 hours) ended before this item ran: nothing was
    answered, nothing billed. Submit it again (in a new batch, or with `evaluate`)."""


class BatchCancelledError(PromptEvaluationError):
    """The batch was cancelled before this item ran: nothing was answered for it."""


# --- resources


class ResourceError(WinkError):
    """A resource could not be bound or resolved."""

    def __init__(self, message: str, *, protocol: type[Any] | None = None) -> None:
        super().__init__(message)
        self.protocol = protocol


class UnboundResourceError(ResourceError):
    """No binding exists for the requested protocol."""


class CircularDependencyError(ResourceError):
    """Resolving a resource needed itself; `cycle` lists the protocols in order."""

    def __init__(self, message: str, *, cycle: Sequence[type[Any]]) -> None:
        super().__init__(message, protocol=cycle[0] if cycle else None)
        self.cycle: tuple[type[Any], ...] = tuple(cycle)


class DuplicateBindingError(ResourceError):
    """The same protocol was bound twice."""


class ProviderError(ResourceError):
    """A resource factory raised; the original is the `__cause__`. Not about LLM
    providers: those failures are `PromptEvaluationError`s."""


# --- warnings


class UnsupportedSettingWarning(UserWarning):
    """A setting the provider cannot honour (Anthropic has no `seed`): it is not sent.

    A warning, not an error, so that switching provider stays a one-string change; make
    it an error with `warnings.simplefilter("error", UnsupportedSettingWarning)`.
    """


class UnpricedModelWarning(UserWarning):
    """An answer's model has no price: not in genai-prices' data for its provider, and no
    `prices=` on the adapter. Its `cost` is None (never a guess). Warned once per model
    per process; give the adapter `prices=` to price it (docs/cost.md)."""
