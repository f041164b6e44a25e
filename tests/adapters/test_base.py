"""The adapter (`wink.adapters.base.ProviderAdapter`): its options and identity, and
`_exchange`, which puts a provider's translator hooks together: client, request body,
transport, parsing, rate-limit headers.

Most tests use `CannedAdapter`, whose transport answers with canned bytes; the rest use
the real adapters against the emulator.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import warnings
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

import pytest

from tests.helpers.adapters import KEY, MODELS, NO_RETRY, callers_client
from tests.helpers.prompts import HELLO, make_prompt
from tests.helpers.wire import send_once
from wink import (
    ConfigurationError,
    Deadline,
    PromptEvaluationError,
    Session,
    ThrottleError,
    UnsupportedSettingWarning,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.core.foundation.messages import ModelRequest, ModelResponse, UserMessage
from wink.core.foundation.settings import ModelSettings
from wink.core.throttling.headers import NO_RATE_LIMIT_HEADERS, RateLimitHeaders
from wink.core.transport.errors import MalformedResponse
from wink.core.transport.http import EncodedRequest, HttpCalls, WireRequest
from wink.providers.base import Provider
from wink.providers.host import Host
from wink.testing import Fault, ProviderEmulator


class Client:
    """A stand-in SDK client that says whether it was closed."""

    def __init__(self, sync: bool) -> None:
        self.sync = sync
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Canned(Provider):
    """A translator whose transport answers every request with `content` and `headers`,
    recording what it was asked to post, with the timeout and the thread it ran on."""

    name = "canned"
    unsupported_settings = frozenset({"seed"})
    rate_limit_headers = RateLimitHeaders(
        requests=("canned-limit-requests", "canned-remaining-requests", "canned-reset-requests")
    )

    def __init__(self, settings: ModelSettings, host: Host) -> None:
        super().__init__(settings, host)
        self.content = b'{"text": "ok"}'
        self.headers: dict[str, str] = {}
        self.posts: list[tuple[EncodedRequest, float, threading.Thread]] = []
        self.clients: list[Client] = []

    def make_client(self, *, sync: bool) -> Any:
        client = Client(sync)
        self.clients.append(client)
        return client

    def is_async_client(self, client: Any) -> bool:
        return False

    @property
    def http_calls(self) -> HttpCalls:
        return CannedCalls(self)

    def translate(self, request: ModelRequest) -> WireRequest:
        text = [getattr(message, "content", None) for message in request.messages]
        return WireRequest(
            "/v1/canned", {"model": self.model, "input": text, **self.settings.extra}
        )

    def parse_response(self, data: Any) -> ModelResponse:
        if not isinstance(data, dict) or "text" not in data:
            raise MalformedResponse("no text in the answer")
        return ModelResponse(text=data["text"])

    def map_errors(
        self, prompt_name: str, secrets: tuple[str, ...]
    ) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


class CannedHost(Host):
    """Where the canned provider is: nowhere, with a key variable of its own."""

    name = "canned"
    wire = Canned
    system = "canned"
    telemetry_name = "canned"
    api_key_variables = ("WINK_CANNED_API_KEY",)


class CannedCalls:
    """The canned provider's transport: its content and headers, whatever is asked."""

    def __init__(self, canned: Canned) -> None:
        self.canned = canned

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes | str, Any]:
        canned = self.canned
        canned.posts.append((wire, time_limit, threading.current_thread()))
        return canned.content, canned.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes | str, Any]:
        return self.post(client, wire, time_limit)

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("the canned adapter does not stream")

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        raise NotImplementedError("the canned adapter does not stream")


class CannedAdapter(ProviderAdapter):
    """The adapter of the `Canned` provider (`content` and `headers` set its answers)."""

    provider = "canned"

    def __init__(
        self,
        model: str = "canned-1",
        *,
        content: bytes = b'{"text": "ok"}',
        headers: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("api_key", KEY)
        options.setdefault("retry_policy", NO_RETRY)
        super().__init__(model, **options)
        self.canned = cast(Canned, self.api)
        self.canned.content = content
        self.canned.headers = dict(headers or {})

    @classmethod
    def _host_type(cls, name: str) -> type[Host]:
        return CannedHost

    @property
    def posts(self) -> list[tuple[EncodedRequest, float, threading.Thread]]:
        return self.canned.posts

    @property
    def clients(self) -> list[Client]:
        return self.canned.clients


# --- options and identity


@pytest.mark.parametrize("model", ["", "   ", None, 42])
def test_a_model_name_is_required(model: Any) -> None:
    with pytest.raises(ConfigurationError, match="a model name is required") as info:
        CannedAdapter(model)
    assert info.value.provider == "canned"


def test_the_model_name_is_trimmed_and_names_the_adapter() -> None:
    adapter = CannedAdapter("  canned-2 \n", base_url="http://127.0.0.1:9/v1")
    assert adapter.model == "canned-2"
    assert adapter.name == "canned:canned-2"
    assert repr(adapter) == "CannedAdapter(model='canned-2', base_url='http://127.0.0.1:9/v1')"
    assert KEY not in repr(adapter)


def test_an_unknown_option_is_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        CannedAdapter(tempreature=0.2)
    assert info.value.option == "tempreature"
    assert "known: " in str(info.value)
    assert "temperature" in str(info.value).split("known: ")[1]


def test_a_setting_the_provider_cannot_honour_warns_at_the_callers_line() -> None:
    with pytest.warns(UnsupportedSettingWarning, match="canned cannot honour seed") as caught:
        CannedAdapter(seed=7)
    assert caught[0].filename == __file__


def test_the_defaults_a_caller_gets() -> None:
    adapter = CannedAdapter(retry_policy=None)
    assert adapter.timeout == 60.0
    assert adapter.retry_policy.max_attempts == 5  # the default policy, not "no retry"
    assert (adapter.max_rounds, adapter.max_failed_tool_rounds) == (50, 8)
    assert adapter.graceful_tool_errors is True


def test_a_setting_the_provider_cannot_honour_is_not_dropped_silently() -> None:
    with pytest.warns(UnsupportedSettingWarning, match="seed"):
        create_adapter("anthropic:claude-sonnet-4-6", api_key=KEY, seed=7)
    with pytest.warns(UnsupportedSettingWarning, match="seed, stop"):
        create_adapter("openai-responses:gpt-4.1", api_key=KEY, seed=7, stop=["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_adapter("openai:gpt-4.1", api_key=KEY, seed=7, stop="END")  # both honoured


@pytest.mark.parametrize(
    ("spec", "variables"),
    [
        ("anthropic:claude-sonnet-4-6", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")),
        ("openai:gpt-4.1", ("OPENAI_API_KEY",)),
        ("google:gemini-2.5-flash", ("GOOGLE_API_KEY", "GEMINI_API_KEY")),
    ],
)
def test_no_api_key_is_a_configuration_error_of_create_adapter_naming_the_variables(
    spec: str, variables: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Known when the adapter is made (no key given, no client, no variable): raised
    there, as itself, not at the first request wrapped in a `PromptEvaluationError`."""
    for name in variables:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError) as info:
        create_adapter(spec)
    assert type(info.value) is ConfigurationError
    provider = spec.partition(":")[0]
    assert str(info.value) == (
        f"no API key for {provider}: set {' or '.join(variables)} or pass api_key="
    )
    assert (info.value.provider, info.value.option) == (provider, "api_key")


# --- one exchange


def test_the_body_is_compact_utf8_json_posted_to_the_translators_path() -> None:
    adapter = CannedAdapter()
    assert isinstance(send_once(adapter, (UserMessage("Où ? ☀"),)), ModelResponse)
    [(wire, _, _)] = adapter.posts
    assert wire.path == "/v1/canned"
    assert wire.content == '{"model":"canned-1","input":["Où ? ☀"]}'.encode()


def test_a_body_json_cannot_carry_is_a_request_error_and_nothing_is_sent() -> None:
    adapter = CannedAdapter(extra_body={"temperature": float("nan")})
    error = send_once(adapter)
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "request"
    assert "cannot build the canned request: ValueError" in str(error)
    assert adapter.posts == []


def test_an_answer_that_is_not_json_is_a_response_error_keeping_its_text() -> None:
    page = f"<html>key {KEY} is {'x' * 3000}</html>".encode()
    error = send_once(CannedAdapter(content=page))
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "response"
    assert error.provider_payload is not None
    body = error.provider_payload["body"]
    assert body.startswith("<html>key [redacted] is xxx")
    assert KEY not in body
    assert len(body) <= 2000


def test_json_that_is_not_the_documented_shape_is_a_response_error() -> None:
    error = send_once(CannedAdapter(content=b'{"answer": "ok"}'))
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "response"
    assert "no text in the answer" in str(error)


def test_the_rate_limit_headers_an_adapter_declares_are_read_into_its_answer() -> None:
    headers = {
        "Canned-Limit-Requests": "60",
        "canned-remaining-requests": "59",
        "canned-reset-requests": "1s",
        "x-ratelimit-remaining-requests": "0",  # another provider's: not read
    }
    answer = send_once(CannedAdapter(headers=headers))
    assert isinstance(answer, ModelResponse)
    assert answer.rate_limit is not None
    assert (answer.rate_limit.limit_requests, answer.rate_limit.remaining_requests) == (60, 59)
    assert answer.rate_limit.reset_requests == 1.0


def test_an_adapter_that_declares_no_rate_limit_headers_reads_none() -> None:
    class QuietCanned(Canned):
        rate_limit_headers = NO_RATE_LIMIT_HEADERS

    class QuietHost(CannedHost):
        wire = QuietCanned

    class Quiet(CannedAdapter):
        @classmethod
        def _host_type(cls, name: str) -> type[Host]:
            return QuietHost

    headers = {"canned-limit-requests": "60", "canned-remaining-requests": "59"}
    answer = send_once(Quiet(headers=headers))
    assert isinstance(answer, ModelResponse)
    assert answer.rate_limit is None


def test_the_sdk_timeout_is_the_adapters_cut_to_what_the_deadline_leaves() -> None:
    adapter = CannedAdapter(timeout=7.5)
    adapter.evaluate(HELLO, session=Session())
    adapter.evaluate(HELLO, session=Session(), deadline=Deadline(2.0))
    adapter.evaluate(HELLO, session=Session(), deadline=Deadline(3600.0))
    without, cut, far = (time_limit for _, time_limit, _ in adapter.posts)
    assert without == 7.5
    assert 0 < cut <= 2.0
    assert far == 7.5


def test_a_sync_client_passed_in_is_called_on_a_worker_thread_by_every_entry_point() -> None:
    """Never on an event loop, never on the caller's thread: with or without a deadline,
    sync or async, the wait stays cancellable and the loop keeps running."""
    adapter = CannedAdapter(client=Client(sync=True))
    adapter.evaluate(HELLO, session=Session())
    adapter.evaluate(HELLO, session=Session(), deadline=Deadline(30.0))
    asyncio.run(adapter.evaluate_async(HELLO, session=Session()))
    threads = [thread for _, _, thread in adapter.posts]
    assert len(threads) == 3
    assert all(thread.name.startswith("wink-worker") for thread in threads)


def test_a_client_that_cannot_be_built_is_a_request_error_without_the_key() -> None:
    adapter = CannedAdapter()

    def refuse(*, sync: bool) -> Any:
        raise RuntimeError(f"invalid key {KEY}")

    adapter.api.make_client = refuse  # type: ignore[method-assign]
    error = send_once(adapter)
    assert isinstance(error, PromptEvaluationError)
    assert error.phase == "request"
    assert str(error).endswith(
        "cannot create the canned client: RuntimeError: invalid key [redacted]"
    )
    assert isinstance(error.__cause__, RuntimeError)


def test_the_context_managers_close_what_the_adapter_made() -> None:
    with CannedAdapter() as adapter:
        adapter.evaluate(HELLO, session=Session())
    [portal_client] = adapter.clients  # one async client, on wink's own loop
    assert not portal_client.sync
    assert portal_client.closed

    async def on_my_loop() -> Client:
        async with CannedAdapter() as adapter:
            await adapter.evaluate_async(HELLO, session=Session())
        [async_client] = adapter.clients
        return async_client

    async_client = asyncio.run(on_my_loop())
    assert not async_client.sync
    assert async_client.closed


def test_a_key_in_the_environment_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINK_CANNED_API_KEY", "from-the-environment")
    assert CannedAdapter(api_key=None).evaluate(HELLO, session=Session()).text == "ok"


# --- a caller's SDK client


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_callers_client_keeps_its_settings_but_not_its_retries(
    provider: str, emulator: ProviderEmulator
) -> None:
    mine = callers_client(provider, emulator)  # the SDK's default: 2 retries
    emulator.inject(Fault.rate_limit(retry_after=0.01))
    adapter = create_adapter(f"{provider}:{MODELS[provider]}", client=mine, retry_policy=NO_RETRY)
    with pytest.raises(ThrottleError) as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.details.attempts == 1
    assert len(emulator.requests) == 1  # the SDK did not retry behind wink's back
    assert mine.max_retries == 2  # the caller's object is left as it was
    adapter.close()
    assert not mine.is_closed()  # the caller's client is the caller's to close
    mine.close()
