"""The adapter contract: what every provider translator implements, and what it inherits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar, cast

from ..core.errors import DeadlineExceededError, PromptEvaluationError, ThrottleError, WinkError
from ..core.limiter import InProcessLimiter, Limiter
from ..core.messages import ModelRequest, ModelResponse
from ..core.provider_errors import response_shape_error
from ..core.retry import RetryPolicy
from ..core.throttle import rate_limit_info_from_headers

if TYPE_CHECKING:  # the loop is imported on the first evaluation: importing an adapter
    # costs little more than importing its SDK
    from ..core.limits import Budget, Deadline
    from ..core.loop import PromptResponse
    from ..core.prompt import Prompt
    from ..core.session import Session

__all__ = ["ModelSettings", "ProviderAdapter", "blocking_allowed", "run_sync"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling settings every provider understands; `extra` goes to the request body as is."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def to_fields(self, names: Mapping[str, str]) -> dict[str, Any]:
        """The settings that are set, under the provider's names (`names`: ours -> theirs)."""
        fields: dict[str, Any] = {}
        for ours, theirs in names.items():
            value = getattr(self, ours)
            if value is not None:
                fields[theirs] = (
                    list(cast(tuple[str, ...], value)) if isinstance(value, tuple) else value
                )
        return fields


class ProviderAdapter(ABC):
    """Runs the one core loop against one provider; a subclass only translates.

    A subclass implements three things and nothing else:

    * `_load_client()` builds the provider's async SDK client, with the SDK's own retries
      off (wink's `RetryPolicy` is the only one that decides), and optionally
      `_load_sync_client()` its sync client, which `evaluate()` then uses;
    * `_send(client, request)` maps the neutral `ModelRequest` to the provider's request
      (failed tool results in the provider's native error form), calls the SDK inside its
      error mapping (SDK exceptions -> `PromptEvaluationError` / `ThrottleError`, via
      `wink.core.provider_errors`; `post_json` does all of it for Stainless-built SDKs),
      and parses the answer into a `ModelResponse` (checking its shape: a 200 with a
      wrong body is `phase="response"`);
    * `provider`, the prefix used by `create_adapter("provider:model")`.

    Everything else — the loop, tool execution, retries, pacing after a throttle,
    deadlines, budgets, session events, and the sync wrapper — is shared.
    """

    provider: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        retry_policy: RetryPolicy | None = None,
        graceful_tool_errors: bool = True,
        timeout: float = 60.0,
        max_failed_tool_rounds: int | None = 8,
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_p: float | None = None,
        stop: tuple[str, ...] | list[str] | None = None,
        seed: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        if not model:
            raise ValueError("a model name is required")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.retry_policy = retry_policy if retry_policy is not None else RetryPolicy()
        self.graceful_tool_errors = graceful_tool_errors
        self.max_failed_tool_rounds = max_failed_tool_rounds
        self.settings = ModelSettings(
            temperature=temperature,
            max_tokens=max_tokens,
            top_p=top_p,
            stop=tuple(stop) if stop is not None else None,
            seed=seed,
            extra=dict(extra_body or {}),
        )
        self._api_key = api_key
        self._given_client = _without_sdk_retries(client)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._sync_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self.limiter = limiter if limiter is not None else InProcessLimiter()
        self._pacer = self.limiter.pacer(self.name)

    # ---- identity

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in errors or payloads."""
        return (self._api_key,) if self._api_key else ()

    # ---- the public entry points

    async def evaluate_async(
        self,
        prompt: Prompt,
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
    ) -> PromptResponse:
        """Evaluate `prompt` to a final answer; raises only `WinkError`."""
        from ..core.loop import LoopSettings, run_evaluation

        graceful = (
            self.graceful_tool_errors if graceful_tool_errors is None else graceful_tool_errors
        )
        settings = LoopSettings(
            retry_policy=self.retry_policy,
            graceful_tool_errors=graceful,
            max_failed_tool_rounds=self.max_failed_tool_rounds,
        )
        try:
            return await run_evaluation(
                self, prompt, session=session, settings=settings, deadline=deadline, budget=budget
            )
        except WinkError:
            raise
        except Exception as error:
            raise PromptEvaluationError(
                f"unexpected {type(error).__name__} in wink: {error}",
                prompt_name=prompt.name,
                phase="response",
            ) from error

    def evaluate(
        self,
        prompt: Prompt,
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        graceful_tool_errors: bool | None = None,
    ) -> PromptResponse:
        """The sync form of `evaluate_async`; safe to call inside a running event loop."""
        return run_sync(
            self.evaluate_async(
                prompt,
                session=session,
                deadline=deadline,
                budget=budget,
                graceful_tool_errors=graceful_tool_errors,
            )
        )

    # ---- one request, shared by every provider

    async def request(self, request: ModelRequest) -> ModelResponse:
        pacer = self._pacer
        if not pacer.idle and not await pacer.acquire(request.deadline):
            raise DeadlineExceededError(
                "the provider's throttle window outlasts the deadline; request not sent",
                prompt_name=request.prompt_name,
            )
        try:
            response = await self._send(self._client(request.prompt_name), request)
        except ThrottleError as error:
            if error.details.kind == "rate_limit":
                await pacer.on_throttle(error.details.retry_after)
            raise
        except WinkError:
            raise
        except Exception as error:  # a translator bug must still honour the contract
            raise PromptEvaluationError(
                f"could not process the provider's answer: {type(error).__name__}: {error}",
                prompt_name=request.prompt_name,
                phase="response",
            ) from error
        await pacer.on_response(response.rate_limit)
        return response

    def parse_body(
        self,
        request: ModelRequest,
        content: bytes | str,
        headers: Mapping[str, str] | None,
        parse: Callable[[Any], ModelResponse],
    ) -> ModelResponse:
        """Decode a 2xx body with `parse`; a body that is not the documented shape is
        `phase="response"`. Rate-limit headers feed the adapter's pacing."""
        try:
            response = parse(json.loads(content))
        except ValueError as error:  # JSON errors and MalformedResponse alike
            text = content if isinstance(content, str) else content.decode("utf-8", "replace")
            raise response_shape_error(
                request.prompt_name, str(error), body=text[:2000], secrets=self.secrets
            ) from error
        rate_limit = rate_limit_info_from_headers(headers) if headers is not None else None
        return response if rate_limit is None else replace(response, rate_limit=rate_limit)

    def request_timeout(self, request: ModelRequest) -> float:
        """The SDK timeout for this attempt: the adapter's, cut to the deadline's rest."""
        if request.deadline is None:
            return self.timeout
        return max(0.001, min(self.timeout, request.deadline.remaining()))

    def _client(self, prompt_name: str) -> Any:
        """The SDK client for this request: the caller's, else one per event loop.

        `evaluate()` runs the loop on a private per-thread event loop where nothing else
        waits while a request is in flight, so there it uses the SDK's sync client: the
        same wire, without the async stack's cost (about a fifth of a local round trip).
        """
        if self._given_client is not None:
            return self._given_client
        loop = asyncio.get_running_loop()
        blocking = blocking_allowed()
        cache = self._sync_clients if blocking else self._clients
        client = cache.get(loop)
        if client is None:
            try:
                client = self._load_sync_client() if blocking else None
                if client is None:
                    cache = self._clients
                    client = cache.get(loop) or self._load_client()
            except WinkError:
                raise
            except Exception as error:
                raise PromptEvaluationError(
                    f"cannot create the {self.provider} client: {error}",
                    prompt_name=prompt_name,
                    phase="request",
                ) from error
            cache[loop] = client
        return client

    # ---- closing

    async def aclose(self) -> None:
        """Close the SDK client this adapter created for the running event loop.

        A client passed in as `client=` belongs to the caller and is left open.
        """
        loop = asyncio.get_running_loop()
        for cache in (self._clients, self._sync_clients):
            client = cache.pop(loop, None)
            if client is not None:
                await _close_client(client)

    def close(self) -> None:
        """Close the SDK client that `evaluate()` created on this thread's loop."""
        run_sync(self.aclose())

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abstractmethod
    def _load_client(self) -> Any:
        """Build the provider's async SDK client with its own retries off."""

    def _load_sync_client(self) -> Any:
        """The provider's sync SDK client (retries off) for `evaluate()`, or None to use
        the async one there too."""
        return None

    @abstractmethod
    async def _send(self, client: Any, request: ModelRequest) -> ModelResponse:
        """Translate, call the SDK under `_map_errors`, parse.

        `client` is sync or async (see `_client`). Stainless-built SDKs (openai,
        anthropic) need only `post_json`."""

    async def post_json(
        self,
        client: Any,
        request: ModelRequest,
        path: str,
        body: Mapping[str, Any],
        *,
        errors: Callable[[str, tuple[str, ...]], AbstractContextManager[None]],
        response_type: type,
        parse: Callable[[Any], ModelResponse],
    ) -> ModelResponse:
        """One exchange through a Stainless-built SDK client (openai, anthropic), sync or
        async: the wire-ready `body` goes out with the SDK's documented raw call,
        `client.post(path, cast_to=<its httpx>.Response)` (`response_type`), under the
        adapter's `errors` mapping, and the JSON answer is read with `parse`.

        Auth, headers, base URL, timeout and exception types stay the SDK's. What is
        skipped is `create()`'s typed-dict transform of the body, a walk over every
        message of the conversation on each request, and its response models.
        """
        options = {"timeout": self.request_timeout(request)}
        with errors(request.prompt_name, self.secrets):
            http = client.post(path, cast_to=response_type, body=body, options=options)
            if inspect.isawaitable(http):
                http = await http
            content = http.content
        return self.parse_body(request, content, http.headers, parse)


def _without_sdk_retries(client: Any) -> Any:
    """The caller's client with its own retries off, so `RetryPolicy` is the only one
    deciding. openai and anthropic clients copy cheaply (`with_options`, same pool)."""
    if client is None or not getattr(client, "max_retries", 0):
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client


async def _close_client(client: Any) -> None:
    closer = getattr(client, "aclose", None) or getattr(client, "close", None)
    if closer is None:
        return
    outcome = closer()
    if inspect.isawaitable(outcome):
        await outcome


# --- sync over async, without deadlocks

_local = threading.local()
_blocking: ContextVar[bool] = ContextVar("wink_blocking", default=False)


def blocking_allowed() -> bool:
    """True inside `run_sync`'s private per-thread loop: a blocking SDK call stalls
    nothing else there."""
    return _blocking.get()


_background: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
_background_lock = threading.Lock()


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to completion from sync code.

    Outside an event loop it runs on a per-thread loop that stays open, so SDK
    connection pools survive between calls. Inside a running loop (Jupyter, an async
    framework) it runs on a background loop thread instead of deadlocking.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner: asyncio.Runner | None = getattr(_local, "runner", None)
        if runner is None:
            runner = asyncio.Runner()
            _local.runner = runner
        token = _blocking.set(True)
        try:
            return runner.run(coroutine)
        finally:
            _blocking.reset(token)
    future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(
        coroutine, _background_loop()
    )
    return future.result()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="wink-sync-runner", daemon=True)
            thread.start()
            _background = (loop, thread)
        return _background[0]
