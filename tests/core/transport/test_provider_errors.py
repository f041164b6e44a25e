"""Secret redaction and the status -> error mapping shared by every adapter."""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import socket
import sys
import traceback
from datetime import timedelta
from typing import Any

import pytest

from tests.helpers.adapters import KEY, NO_RETRY
from tests.helpers.prompts import HELLO
from wink import RetryPolicy, Session, WinkError, create_adapter
from wink.core.foundation.errors import (
    AuthenticationError,
    BadRequestError,
    ContentFilteredError,
    ContextWindowExceededError,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    ThrottleError,
)
from wink.core.transport.errors import (
    StatusFacts,
    connection_error,
    error_from_facts,
    error_from_status,
    redact_exception_chain,
    redact_secrets,
)
from wink.testing import Fault, ProviderEmulator


def test_secrets_are_masked_everywhere_in_a_payload() -> None:
    payload = {
        "error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"},
        "echo": [f"Bearer {KEY}", {"authorization": "anything", "x-api-key": "anything"}],
    }
    cleaned = redact_secrets(payload, [KEY])
    assert KEY not in repr(cleaned)
    assert cleaned["echo"][1] == {"authorization": "[redacted]", "x-api-key": "[redacted]"}
    assert cleaned["error"]["code"] == "invalid_api_key"


def test_a_key_shaped_string_is_masked_even_when_unknown() -> None:
    assert KEY not in redact_secrets(f"key {KEY} rejected")


def test_a_short_secret_is_masked_only_where_it_stands_alone() -> None:
    cleaned = redact_secrets({"responseId": "k9xkq-k", "message": "key k is not valid"}, ["k"])
    assert cleaned == {"responseId": "k9xkq-k", "message": "key [redacted] is not valid"}


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (500, "overloaded"), (503, "overloaded")]
)
def test_throttle_statuses_keep_no_secret(status: int, kind: str) -> None:
    error = error_from_status(
        status,
        f"failed for {KEY}",
        prompt_name="p",
        body={"error": {"message": f"key {KEY}"}},
        headers={"retry-after": "2"},
        secrets=(KEY,),
    )
    assert isinstance(error, ThrottleError)
    assert error.details.kind == kind
    assert KEY not in str(error) + repr(error) + repr(error.provider_payload)


def test_a_client_error_is_a_request_error_without_the_key() -> None:
    error = error_from_status(401, f"bad key {KEY}", prompt_name="p", body=None, secrets=(KEY,))
    assert type(error) is AuthenticationError
    assert (error.phase, error.status_code) == ("request", 401)
    assert KEY not in str(error) + repr(error.provider_payload)


# --- what each answer means: decided here, once, from the facts an adapter read


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (StatusFacts(400, "bad"), BadRequestError),
        (StatusFacts(422, "bad"), BadRequestError),
        (StatusFacts(409, "conflict"), BadRequestError),
        (StatusFacts(413, "too large"), BadRequestError),
        (StatusFacts(401, "who?"), AuthenticationError),
        (StatusFacts(400, "key?", authentication_failed=True), AuthenticationError),
        (StatusFacts(403, "no"), PermissionDeniedError),
        (StatusFacts(404, "nope"), NotFoundError),
        (StatusFacts(400, "long", context_window_exceeded=True), ContextWindowExceededError),
        (StatusFacts(400, "blocked", content_filtered=True), ContentFilteredError),
        (StatusFacts(304, "odd"), PromptEvaluationError),
    ],
)
def test_a_rejected_request_gets_the_class_that_says_what_to_fix(
    facts: StatusFacts, expected: type[PromptEvaluationError]
) -> None:
    error = error_from_facts(facts, prompt_name="p")
    assert type(error) is expected
    assert (error.phase, error.status_code) == ("request", facts.status)
    assert error.provider_payload == {"status_code": facts.status}


@pytest.mark.parametrize(
    ("facts", "kind", "retry_safe"),
    [
        (StatusFacts(429, "slow"), "rate_limit", True),
        (StatusFacts(429, "gone", quota_exhausted=True), "quota_exhausted", False),
        (StatusFacts(400, "no credit", quota_exhausted=True), "quota_exhausted", False),
        (StatusFacts(402, "no credit", quota_exhausted=True), "quota_exhausted", False),
        (StatusFacts(529, "busy"), "overloaded", True),  # a 5xx, whoever sends it
        (StatusFacts(599, "odd"), "overloaded", True),
        (StatusFacts(500, "long?", context_window_exceeded=True), "overloaded", True),
        (StatusFacts(408, "slow"), "timeout", True),
    ],
)
def test_throttles_come_before_what_the_words_say(
    facts: StatusFacts, kind: str, retry_safe: bool
) -> None:
    error = error_from_facts(facts, prompt_name="p")
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == (kind, retry_safe)
    assert error.status_code == error.details.status_code == facts.status


def test_core_gives_a_402_no_meaning_of_its_own() -> None:
    """A 402 means "out of credit" only where a wire's error reader says so (Anthropic's
    billing_error, a compatible host's insufficient credits); core knows HTTP alone, so
    a 402 that no wire explains is a request error, never retried."""
    error = error_from_facts(StatusFacts(402, "payment required"), prompt_name="p")
    assert type(error) is BadRequestError
    assert error.status_code == 402


def test_a_404_names_the_model_asked_for() -> None:
    error = error_from_facts(StatusFacts(404, "no such model"), prompt_name="p", model="gpt-4.2")
    assert isinstance(error, NotFoundError)
    assert error.model == "gpt-4.2"
    assert "is the model name 'gpt-4.2' right?" in str(error)
    unnamed = error_from_facts(StatusFacts(404, "no such model"), prompt_name="p")
    assert isinstance(unnamed, NotFoundError)
    assert unnamed.model is None
    assert "a model the provider does not know" in str(unnamed)


def test_a_new_class_still_reads_as_before_for_existing_handlers() -> None:
    """`except PromptEvaluationError` and `.phase` keep working for every new class."""
    for facts in (StatusFacts(400, "x"), StatusFacts(404, "x"), StatusFacts(401, "x")):
        error = error_from_facts(facts, prompt_name="p")
        assert isinstance(error, PromptEvaluationError)
        assert not isinstance(error, ThrottleError)
        assert str(error).startswith(f"request failed for prompt 'p': HTTP {facts.status}: x")


# --- retry_after from a status answer


def test_a_status_answers_retry_after_is_a_timedelta_kept_however_long() -> None:
    error = error_from_status(429, "slow", prompt_name="p", headers={"retry-after": "1.5"})
    assert isinstance(error, ThrottleError)
    assert error.details.retry_after == timedelta(seconds=1.5)
    huge = error_from_status(429, "slow", prompt_name="p", retry_after=1e20)
    assert isinstance(huge, ThrottleError)
    assert huge.details.retry_after == timedelta.max  # no OverflowError from a wild ask
    for nonsense in (-1.0, float("nan")):
        odd = error_from_status(503, "down", prompt_name="p", retry_after=nonsense)
        assert isinstance(odd, ThrottleError)
        assert odd.details.retry_after is None


# --- redaction depth


def _nested(depth: int, leaf: Any) -> dict[str, Any]:
    body: Any = leaf
    for _ in range(depth):
        body = {"error": body}
    return body


def test_a_body_nested_ten_thousand_deep_is_still_a_rate_limit() -> None:
    body = _nested(10_000, f"key {KEY}")
    assert sys.getrecursionlimit() < 10_000  # a recursive walk could not get there
    error = error_from_status(429, "slow down", prompt_name="p", body=body, secrets=(KEY,))
    assert isinstance(error, ThrottleError)
    assert (error.details.kind, error.details.retry_safe) == ("rate_limit", True)
    node: Any = error.provider_payload
    depth = 0
    while isinstance(node, dict):
        node = node.get("error")
        depth += 1
    assert node == "[nested deeper than 32 levels: dropped]"
    assert depth < 40


def test_a_body_that_contains_itself_ends() -> None:
    body: dict[str, Any] = {"message": f"bad {KEY}"}
    body["again"] = [body]
    cleaned = redact_secrets(body)
    assert cleaned["message"] == "bad [redacted]"
    assert "[nested deeper than 32 levels: dropped]" in repr(cleaned)


def test_shallow_bodies_are_copied_whole() -> None:
    body = _nested(20, {"code": 7, "items": (1, "two")})
    assert redact_secrets(body) == _nested(20, {"code": 7, "items": [1, "two"]})


# --- secrets in the chained SDK exceptions


class StainlessLike(Exception):
    """The public shape of openai / anthropic APIError: args, message and body."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class Stubborn(Exception):
    @property
    def message(self) -> str:
        return f"read-only {KEY}"


def test_every_exception_in_the_chain_is_cleaned_in_place() -> None:
    inner = Stubborn(f"inner {KEY}", 3)
    inner.add_note(f"note {KEY}")
    outer = StainlessLike(f"Error code: 401 - {KEY}", {"error": {"message": f"bad {KEY}"}})
    outer.__cause__ = inner
    inner.__context__ = outer  # a loop: the walk must end
    redact_exception_chain(outer, (KEY,))
    assert type(outer.__cause__) is Stubborn  # types kept for those who inspect them
    assert outer.args == ("Error code: 401 - [redacted]",)
    assert outer.message == "Error code: 401 - [redacted]"
    assert outer.body == {"error": {"message": "bad [redacted]"}}
    assert inner.args == ("inner [redacted]", 3)
    assert inner.__notes__ == ["note [redacted]"]
    assert inner.message == f"read-only {KEY}"  # a property that refuses is left alone


def test_unknown_key_shaped_strings_are_cleaned_too() -> None:
    error = ValueError("rejected sk-ant-api03-abcdefghijklmnop")
    redact_exception_chain(error)
    assert str(error) == "rejected [redacted]"


@pytest.mark.parametrize(
    ("provider", "model", "sdk_error"),
    [
        ("openai", "openai:gpt-4.1", "AuthenticationError"),
        ("anthropic", "anthropic:claude-haiku-4-5", "AuthenticationError"),
        ("google", "google:gemini-2.5-flash", "GeminiErrorAnswer"),
    ],
)
def test_a_key_echoed_by_the_server_is_nowhere_in_the_logged_chain(
    provider: str, model: str, sdk_error: str, emulator: ProviderEmulator
) -> None:
    secret = "sk-test-ECHOED-BY-THE-SERVER-0123456789abcdef"
    echo = {"error": {"message": f"Incorrect API key provided: {secret}", "type": "auth"}}
    emulator.inject(Fault.http(401, echo))
    adapter = create_adapter(
        model,
        base_url=emulator.base_url(provider),
        api_key=secret,
        retry_policy=NO_RETRY,
    )
    stream = io.StringIO()
    logger = logging.getLogger("test.redaction")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        adapter.evaluate(HELLO, session=Session())
    except WinkError as error:
        logger.exception("evaluation failed")
        printed = "".join(traceback.format_exception(error))
        raised = error
    finally:
        logger.removeHandler(handler)
        adapter.close()
    assert "Incorrect API key provided: [redacted]" in printed  # the SDK's words are kept
    assert sdk_error in printed
    assert sdk_error in stream.getvalue()
    assert secret not in printed
    assert secret not in stream.getvalue()
    cause: Any = raised.__cause__
    assert type(cause).__name__ == sdk_error  # still the SDK's type
    public = [getattr(cause, name, None) for name in ("args", "message", "body", "details")]
    assert secret not in repr(public)


# --- a host that does not resolve


def _no_invalid_names(real: Any, asked: list[str]) -> Any:
    """`socket.getaddrinfo` answering the reserved `.invalid` names the way RFC 6761 asks a
    resolver to (no such name) without asking the machine's DNS server: no packet leaves,
    and the answer does not depend on the machine's resolver."""

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        asked.append(name)
        if name.rstrip(".").endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    return getaddrinfo


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("model", "base_url"),
    [
        ("openai:gpt-4.1", "http://wink-no-such-host.invalid/v1"),
        ("openai-responses:gpt-4.1", "http://wink-no-such-host.invalid/v1"),
        ("anthropic:claude-haiku-4-5", "http://wink-no-such-host.invalid"),
        ("google:gemini-2.5-flash", "http://wink-no-such-host.invalid"),
    ],
)
def test_a_host_that_does_not_resolve_is_a_request_error_tried_once(
    model: str,
    base_url: str,
    sync: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(socket, "getaddrinfo", _no_invalid_names(socket.getaddrinfo, asked))
    policy = RetryPolicy(max_attempts=3, initial_delay=0.001, max_delay=0.001)
    adapter = create_adapter(model, base_url=base_url, api_key="sk-test", retry_policy=policy)
    with (
        caplog.at_level(logging.DEBUG, logger="wink.throttle"),
        pytest.raises(PromptEvaluationError) as info,
    ):
        evaluate(adapter, sync=sync)
    adapter.close()
    error = info.value
    assert type(error) is PromptEvaluationError  # not a throttle: nothing to wait for
    assert error.phase == "request"
    assert "'wink-no-such-host.invalid' could not be resolved" in str(error)
    assert "Name or service not known" in str(error)
    assert not [record for record in caplog.records if "retrying" in record.getMessage()]
    assert asked == ["wink-no-such-host.invalid"]  # looked up once: one attempt, no retry
    assert error.__cause__ is not None


def evaluate(adapter: Any, *, sync: bool) -> None:
    if sync:
        adapter.evaluate(HELLO, session=Session())
    else:
        asyncio.run(adapter.evaluate_async(HELLO, session=Session()))


def _chained(*errors: BaseException) -> BaseException:
    for outer, inner in itertools.pairwise(errors):
        outer.__cause__ = inner
    return errors[0]


def test_connection_failures_other_than_a_missing_name_stay_retry_safe() -> None:
    for transport in (
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError(104, "Connection reset by peer"),
        socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
    ):
        error = connection_error("p", _chained(OSError("Connection error."), transport))
        assert isinstance(error, ThrottleError), transport
        assert (error.details.kind, error.details.retry_safe) == ("connection", True)
        assert error.status_code is None  # no answer came


def test_a_missing_name_deep_in_the_context_chain_is_found_without_a_request() -> None:
    resolver = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    middle = OSError("connect failed")
    middle.__context__ = resolver
    error = connection_error("p", _chained(OSError("Connection error."), middle))
    assert type(error) is PromptEvaluationError
    assert error.phase == "request"
    assert str(error).startswith("request failed for prompt 'p': the provider's host could not")
