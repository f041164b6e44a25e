"""Bedrock's own contract (the shared contract tests run it as a fifth wire): SigV4 that
botocore's verifier accepts and refuses, Bedrock API keys, credentials refreshed off the
loop, no secret anywhere, its error types, in-stream exceptions, inference profiles,
Claude's thinking carried across turns, and what it refuses before sending."""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from tests.helpers.adapters import FAST_RETRY, NO_RETRY
from tests.helpers.prompts import make_prompt
from wink import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    NotFoundError,
    PermissionDeniedError,
    PromptEvaluationError,
    Session,
    TextDelta,
    ThrottleError,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.testing import AwsCredentials, EmulatedToolCall, Fault, ProviderEmulator, Turn

botocore_credentials = pytest.importorskip("botocore.credentials")

ACCESS_KEY = "AKIAWINKTESTKEY12345"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYWINKSECRET"
TOKEN = "IQoJb3JpZ2luX2VjEWINK-SESSION-TOKEN-0123456789"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CREDENTIALS = AwsCredentials(ACCESS_KEY, SECRET_KEY, TOKEN)


@pytest.fixture
def signed_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's credentials in the environment (botocore's chain reads them first)."""
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)


def bedrock(emu: ProviderEmulator, model: str = MODEL, **options: Any) -> ProviderAdapter:
    options.setdefault("retry_policy", NO_RETRY)
    options.setdefault("region", "us-east-1")
    return create_adapter(f"bedrock:{model}", base_url=emu.base_url("bedrock"), **options)


# --- signing


@pytest.mark.usefixtures("signed_env")
def test_a_sigv4_request_checks_out_with_botocore_and_streams_signed_too() -> None:
    with ProviderEmulator(
        [Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"})), Turn.text("Sunny.")],
        aws_credentials=CREDENTIALS,
    ) as emu:
        adapter = bedrock(emu)
        assert adapter.evaluate(make_prompt(), session=Session()).text == "Sunny."
        emu.enqueue(Turn.text("Streamed."))
        with adapter.stream(make_prompt(), session=Session()) as stream:
            text = "".join(e.text for e in stream if isinstance(e, TextDelta))
        assert text == "Streamed."
        requests = emu.requests
    assert [r.path.rsplit("/", 1)[-1] for r in requests] == ["converse"] * 2 + ["converse-stream"]
    for request in requests:
        assert request.headers["authorization"] == "[redacted]"
        assert request.headers["x-amz-security-token"] == "[redacted]"
        assert "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/" in request.path


@pytest.mark.usefixtures("signed_env")
def test_a_wrong_secret_gets_bedrocks_403_and_no_secret_shows_anywhere(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-the-account-knows-0123")
    with ProviderEmulator([Turn.text("never")], aws_credentials=CREDENTIALS) as emu:
        adapter = bedrock(emu)
        with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationError) as info:
            adapter.evaluate(make_prompt(), session=Session())
        authorization = emu.requests[0].headers["authorization"]
    error = info.value
    assert error.status_code == 403
    assert "The request signature we calculated does not match" in str(error)
    import traceback

    shown = [
        str(error),
        repr(error),
        repr(error.provider_payload),
        repr(adapter),
        repr(adapter.api),
        "".join(traceback.format_exception(error)),
        *(record.getMessage() for record in caplog.records),
    ]
    secrets = [ACCESS_KEY, "not-the-secret-the-account-knows-0123", TOKEN, "Signature="]
    leaked = [(s, i) for s in secrets for i, text in enumerate(shown) if s in text]
    assert leaked == [], shown[leaked[0][1]] if leaked else ""
    assert authorization == "[redacted]"


def test_an_unknown_access_key_and_an_unsigned_request_are_refused(signed_env: None) -> None:
    other = AwsCredentials("AKIAANOTHERKEY000000", SECRET_KEY, TOKEN)
    with ProviderEmulator([Turn.text("never")], aws_credentials=other) as emu:
        with pytest.raises(AuthenticationError, match="security token included"):
            bedrock(emu).evaluate(make_prompt(), session=Session())
        assert emu.pending == 1  # the turn was not used up


def test_a_bedrock_api_key_goes_as_a_bearer_and_a_wrong_one_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-ABSKwinkwinkwink")
    with ProviderEmulator(
        [Turn.text("Keyed.")], bedrock_api_keys=["bedrock-api-key-ABSKwinkwinkwink"]
    ) as emu:
        assert bedrock(emu).evaluate(make_prompt(), session=Session()).text == "Keyed."
        with pytest.raises(AuthenticationError) as info:
            bedrock(emu, api_key="bedrock-api-key-WRONGwrongwrong").evaluate(make_prompt())
    assert "bedrock-api-key-WRONGwrongwrong" not in repr(info.value) + str(info.value)


def test_expiring_credentials_are_refreshed_on_a_worker_thread_not_the_loop() -> None:
    from wink.providers.bedrock.auth import SigV4Signer
    from wink.providers.host import OutgoingRequest

    refreshed_on: list[int] = []

    def refresh() -> dict[str, str]:
        refreshed_on.append(threading.get_ident())
        expiry = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
        return {
            "access_key": ACCESS_KEY,
            "secret_key": SECRET_KEY,
            "token": TOKEN,
            "expiry_time": expiry.isoformat(),
        }

    expired = {**refresh(), "expiry_time": "2000-01-01T00:00:00+00:00"}
    refreshed_on.clear()
    credentials = botocore_credentials.RefreshableCredentials.create_from_metadata(
        expired, refresh, "test"
    )

    class Session:
        def get_credentials(self) -> Any:
            return credentials

    signer = SigV4Signer("us-east-1", Session())
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"

    async def sign() -> tuple[int, Mapping[str, str]]:
        request = OutgoingRequest("POST", url, {}, b"{}")
        return threading.get_ident(), await signer.sign_async(request)

    loop_thread, headers = asyncio.run(sign())
    assert len(refreshed_on) == 1
    assert refreshed_on[0] != loop_thread  # the refresh ran off the event loop
    assert headers["X-Amz-Security-Token"] == TOKEN
    asyncio.run(sign())
    assert len(refreshed_on) == 1  # fresh now: no second refresh
    assert TOKEN in signer.secrets()
    assert SECRET_KEY not in repr(signer)


def test_credentials_from_outside_the_environment_are_masked_once_signed_with() -> None:
    """Credentials found when the adapter is made (a profile, a role: not the
    environment) and signed with on the loop, no refresh due, are known secrets."""
    from wink.providers.bedrock.auth import SigV4Signer
    from wink.providers.host import OutgoingRequest

    credentials = botocore_credentials.Credentials(ACCESS_KEY, SECRET_KEY, TOKEN)

    class Session:
        def get_credentials(self) -> Any:
            return credentials

    signer = SigV4Signer("us-east-1", Session())
    signer.resolve()
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"
    request = OutgoingRequest("POST", url, {}, b"{}")
    asyncio.run(signer.sign_async(request))
    assert set(signer.secrets()) == {ACCESS_KEY, SECRET_KEY, TOKEN}
    credentials.secret_key, credentials.token = "rotated-secret-0000", "rotated-token-0000"
    signer.sign(request)
    assert {"rotated-secret-0000", "rotated-token-0000", SECRET_KEY} <= set(signer.secrets())


# --- errors


def aws_error(status: int, error_type: str, message: str) -> Fault:
    namespace = "http://internal.amazon.com/coral/com.amazon.bedrock/"
    return Fault.http(
        status, {"message": message}, headers={"x-amzn-errortype": f"{error_type}:{namespace}"}
    )


ERRORS = [
    (429, "ThrottlingException", "Too many requests", ThrottleError, "rate_limit"),
    (503, "ServiceUnavailableException", "unable to process", ThrottleError, "overloaded"),
    (429, "ModelNotReadyException", "not ready", ThrottleError, "overloaded"),
    (500, "InternalServerException", "internal error", ThrottleError, "overloaded"),
    (408, "ModelTimeoutException", "took too long", ThrottleError, "timeout"),
    (400, "ValidationException", "Malformed input request", BadRequestError, None),
    (
        400,
        "ValidationException",
        "Input is too long for requested model.",
        ContextWindowExceededError,
        None,
    ),
    (
        403,
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
        PermissionDeniedError,
        None,
    ),
    (404, "ResourceNotFoundException", "Could not resolve the model", NotFoundError, None),
    (
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
        AuthenticationError,
        None,
    ),
    (
        403,
        "ExpiredTokenException",
        "The security token included in the request is expired",
        AuthenticationError,
        None,
    ),
    (
        400,
        "ServiceQuotaExceededException",
        "exceeds the service quota",
        ThrottleError,
        "quota_exhausted",
    ),
]


@pytest.mark.parametrize(("status", "error_type", "message", "kind", "throttle"), ERRORS)
def test_each_error_type_has_its_class(
    status: int,
    error_type: str,
    message: str,
    kind: type[PromptEvaluationError],
    throttle: str | None,
) -> None:
    with ProviderEmulator() as emu:
        emu.inject(aws_error(status, error_type, message))
        with pytest.raises(PromptEvaluationError) as info:
            bedrock(emu, api_key="k-0123456789").evaluate(make_prompt(), session=Session())
    error = info.value
    assert type(error) is kind
    assert error_type in str(error)
    if throttle is not None:
        assert isinstance(error, ThrottleError)
        assert error.details.kind == throttle
    if error_type == "AccessDeniedException":
        assert "Model access" in str(error)  # says how to enable the model


@pytest.mark.parametrize(
    ("region", "profile"),
    [
        ("us-east-1", "us."),
        ("eu-west-1", "eu."),
        ("ap-northeast-1", "apac."),
        ("me-south-1", "global."),
    ],
)
def test_an_on_demand_id_that_needs_a_profile_gets_the_profile_to_use(
    region: str, profile: str
) -> None:
    model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    with ProviderEmulator([Turn.text("never")]) as emu, pytest.raises(BadRequestError) as info:
        bedrock(emu, model, region=region, api_key="k-0123456789").evaluate(make_prompt())
    assert "on-demand throughput isn\u2019t supported" in str(info.value)
    assert f"bedrock:{profile}{model}" in str(info.value)


def test_a_tool_choice_the_model_does_not_take_is_not_sent() -> None:
    from tests.helpers.prompts import Answer

    with ProviderEmulator([Turn.json({"city": "Paris", "degrees": 21})]) as emu:
        response = bedrock(emu, "meta.llama3-70b-instruct-v1:0", api_key="k-0123456789").evaluate(
            make_prompt(Answer)
        )
        (request,) = emu.requests
    assert response.output == Answer("Paris", 21)
    assert "toolChoice" not in request.body["toolConfig"]


def test_tool_choice_is_carried_as_converse_takes_it() -> None:
    """ "required" is `any`, a name is `tool`; "none" leaves the prompt's tools out, since
    Converse has no such choice (and Bedrock needs `toolConfig` only with tool blocks)."""
    with ProviderEmulator([Turn.text("a"), Turn.text("b"), Turn.text("c")]) as emu:
        for choice in ("required", "weather", "none"):
            bedrock(emu, api_key="k-0123456789", tool_choice=choice).evaluate(make_prompt())
        bodies = [request.body for request in emu.requests]
    assert bodies[0]["toolConfig"]["toolChoice"] == {"any": {}}
    assert bodies[1]["toolConfig"]["toolChoice"] == {"tool": {"name": "weather"}}
    assert "toolConfig" not in bodies[2]


def test_a_tool_choice_that_cannot_be_carried_is_warned_about_never_sent() -> None:
    from wink import UnsupportedSettingWarning

    calls = Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}))
    with ProviderEmulator([Turn.text("a"), calls, Turn.text("done"), Turn.text("b")]) as emu:
        llama = bedrock(emu, "meta.llama3-70b-instruct-v1:0", api_key="k", tool_choice="required")
        with pytest.warns(UnsupportedSettingWarning, match="takes no tool choice"):
            assert llama.evaluate(make_prompt()).text == "a"
        first = bedrock(emu, api_key="k-0123456789").evaluate(make_prompt())
        adapter = bedrock(emu, api_key="k-0123456789", tool_choice="none")
        with pytest.warns(UnsupportedSettingWarning, match="no tool choice of none"):
            last = adapter.evaluate(make_prompt(), history=first.transcript)
        assert last.text == "b"
        bodies = [request.body for request in emu.requests]
    assert "toolChoice" not in bodies[0]["toolConfig"]
    assert "toolChoice" not in bodies[-1]["toolConfig"]  # tools kept: the history has calls


def test_the_emulator_refuses_tool_blocks_without_a_tool_config() -> None:
    import httpx2

    body = {
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}],
            },
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "t", "content": [{"text": "1"}]}}],
            },
        ]
    }
    with ProviderEmulator([Turn.text("never")]) as emu:
        answer = httpx2.post(
            f"{emu.base_url('bedrock')}/model/{MODEL}/converse",
            json=body,
            headers={"authorization": "Bearer k-0123456789"},
        )
    assert answer.status_code == 400
    assert answer.headers["x-amzn-errortype"].startswith("ValidationException")
    assert "toolConfig field must be defined" in answer.json()["message"]


# --- in-stream exceptions


def test_an_in_stream_exception_before_output_is_retried_unseen_and_after_output_typed() -> None:
    with ProviderEmulator(stream_chunk_size=3) as emu:
        adapter = bedrock(emu, api_key="k-0123456789", retry_policy=FAST_RETRY)
        emu.enqueue(Fault.stream_error(after=1, kind="rate_limit"), Turn.text("Made it."))
        with adapter.stream(make_prompt(), session=Session()) as stream:
            assert "".join(e.text for e in stream if isinstance(e, TextDelta)) == "Made it."
        assert len(emu.requests) == 2
        emu.enqueue(Fault.stream_error(after=4, kind="server_error"), Turn.text("Partly here."))
        seen: list[str] = []
        adapter = bedrock(emu, api_key="k-0123456789")  # no retry: the error reaches us typed

        def read() -> None:
            with adapter.stream(make_prompt()) as stream:
                for event in stream:
                    if isinstance(event, TextDelta):
                        seen.append(event.text)

        with pytest.raises(ThrottleError) as info:
            read()
    assert seen  # output reached the caller first: no retry then
    assert info.value.details.kind == "overloaded"
    assert "InternalServerException" in str(info.value)


def test_a_corrupt_frame_fails_the_round_in_its_response_phase_never_a_hang() -> None:
    with ProviderEmulator() as emu:
        emu.enqueue(Fault.stream_malformed(after=2), Turn.text("Never whole."))
        stream = bedrock(emu, api_key="k-0123456789").stream(make_prompt())
        with pytest.raises(PromptEvaluationError) as info, stream:
            list(stream)
    assert info.value.phase == "response"
    assert "CRC does not match" in str(info.value)


# --- thinking


def test_claudes_signed_thinking_goes_back_intact_and_an_altered_one_is_refused() -> None:
    script = [
        Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}), thinking="Ask."),
        Turn.text("Sunny.", thinking="Done."),
    ]
    with ProviderEmulator(script) as emu:
        response = bedrock(emu, api_key="k-0123456789", thinking=2048).evaluate(make_prompt())
        sent = emu.requests[1].body
    assert response.text == "Sunny."
    assert sent["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2048}
    }
    first = sent["messages"][1]["content"][0]["reasoningContent"]["reasoningText"]
    assert first["text"] == "Ask."
    assert first["signature"]
    assert response.thinking == "Ask.\n\nDone."


def test_thinking_is_refused_where_converse_cannot_send_it() -> None:
    with pytest.raises(ConfigurationError, match="budget"):
        create_adapter(f"bedrock:{MODEL}", thinking="high", api_key="k")
    with pytest.raises(ConfigurationError, match="Claude's on Bedrock"):
        create_adapter("bedrock:amazon.nova-pro-v1:0", thinking=2048, api_key="k")


# --- what is refused before sending


def test_a_batch_is_refused_before_anything_is_sent() -> None:
    with ProviderEmulator() as emu:
        adapter = bedrock(emu, api_key="k-0123456789")
        with pytest.raises(ConfigurationError, match="S3"):
            adapter.submit_batch({"a": make_prompt()})
        assert emu.requests == []


def test_the_region_is_required_and_only_bedrock_takes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigurationError, match="AWS region") as info:
        create_adapter(f"bedrock:{MODEL}", api_key="k")
    assert info.value.option == "region"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    adapter = create_adapter(f"bedrock:{MODEL}", api_key="k")
    assert (
        "bedrock-runtime.eu-central-1.amazonaws.com"
        in adapter.api.build_request(
            __import__("wink.core.foundation.messages", fromlist=["ModelRequest"]).ModelRequest(
                "p", ()
            )
        ).path
    )
    with pytest.raises(ConfigurationError, match="unknown option"):
        create_adapter("openai:gpt-4.1", region="us-east-1", api_key="k")  # type: ignore[call-arg]


def test_a_boto3_client_is_refused_with_what_to_pass_instead() -> None:
    import botocore.session

    client = botocore.session.Session().create_client(
        "sts", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
    )
    with ProviderEmulator([Turn.text("never")]) as emu:
        adapter = bedrock(emu, api_key="k-0123456789", client=client)
        with pytest.raises(PromptEvaluationError, match="region="):
            adapter.evaluate(make_prompt())
        assert emu.requests == []


def test_no_credentials_anywhere_says_what_to_set_when_the_adapter_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for variable in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with ProviderEmulator([Turn.text("never")]) as emu:
        with pytest.raises(ConfigurationError, match="no AWS credentials") as info:
            bedrock(emu)  # said when the adapter is made, as boto3 does for a client
        assert emu.requests == []
    assert info.value.option == "api_key"
    assert "AWS_BEARER_TOKEN_BEDROCK" in str(info.value)
