"""Vertex AI (`vertex:`, `vertex-anthropic:`) at the wire: the project/location URLs, the
bearer token from real google-auth credentials (a service-account key made here, its
token endpoint on loopback), refreshed off the loop before it expires; the same answers
and failures as the direct providers; the 404 that names the location; no batches."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from google.oauth2 import service_account as google_service_account

from tests.helpers.adapters import KEY, NO_RETRY, answer
from tests.helpers.google_auth import SCOPE, TokenEndpoint, service_account
from tests.helpers.prompts import HELLO, make_prompt
from tests.providers.test_same_answers import SCRIPT, _seen
from wink import (
    AuthenticationError,
    ConfigurationError,
    FallbackAdapter,
    NotFoundError,
    PromptEvaluationError,
    Session,
    ThrottleError,
    create_adapter,
)
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, Turn
from wink.testing.thinking import opens

GEMINI = "vertex:gemini-2.5-flash"
CLAUDE = "vertex-anthropic:claude-sonnet-4-5@20250929"
DIRECT = {GEMINI: "google:gemini-2.5-flash", CLAUDE: "anthropic:claude-sonnet-4-5-20250929"}


@pytest.fixture(autouse=True)
def no_ambient_google(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials but the test's: no metadata server, no gcloud config, no variables."""
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    for name in (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_CLOUD_QUOTA_PROJECT",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def account(tmp_path: Path) -> Iterator[tuple[Path, TokenEndpoint]]:
    with service_account(tmp_path, project="key-project") as made:
        yield made


def _vertex(spec: str, emu: ProviderEmulator, **options: Any) -> Any:
    options.setdefault("retry_policy", NO_RETRY)
    return create_adapter(spec, base_url=emu.url, **options)


def _plain_and_streamed(spec: str, **options: Any) -> tuple[Any, list[Any]]:
    """The adapter, and its two requests: one evaluated, one streamed."""
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _vertex(spec, emu, **options)
        assert adapter.evaluate(HELLO, session=Session()).text == "hi"
        with adapter.stream(HELLO, session=Session()) as events:
            list(events)
        return adapter, emu.requests


def test_gemini_goes_to_the_projects_location_with_a_bearer_token(
    account: tuple[Path, TokenEndpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file, tokens = account
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    adapter, (plain, streamed) = _plain_and_streamed(GEMINI, location="us-central1")
    where = "/v1beta1/projects/key-project/locations/us-central1/publishers/google/models"
    assert plain.path == f"{where}/gemini-2.5-flash:generateContent"
    assert (streamed.path, streamed.query) == (
        f"{where}/gemini-2.5-flash:streamGenerateContent",
        "alt=sse",
    )
    assert all(r.headers["authorization"] == "[redacted]" for r in (plain, streamed))
    assert all("x-goog-api-key" not in r.headers for r in (plain, streamed))
    assert tokens.issued == ["ya29.emulated-1"]  # one token, kept for both requests
    assert tokens.scopes == [SCOPE]
    assert (adapter.host.system, adapter.host.telemetry_name) == ("google", "gcp.vertex_ai")


def test_claude_goes_to_raw_predict_with_its_model_in_the_url(
    account: tuple[Path, TokenEndpoint],
) -> None:
    key_file, _ = account
    adapter, (plain, streamed) = _plain_and_streamed(
        CLAUDE, credentials=key_file, project="my-project", location="us-east5"
    )
    where = "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models"
    assert plain.path == f"{where}/claude-sonnet-4-5@20250929:rawPredict"
    assert streamed.path == f"{where}/claude-sonnet-4-5@20250929:streamRawPredict"
    for request in (plain, streamed):
        assert request.body["anthropic_version"] == "vertex-2023-10-16"
        assert "model" not in request.body
        assert request.headers["authorization"] == "[redacted]"
        assert "x-api-key" not in request.headers
    assert streamed.body["stream"] is True
    assert adapter.api.model == "claude-sonnet-4-5-20250929"  # Anthropic's rules for it


def test_each_location_has_its_own_host_name(account: tuple[Path, TokenEndpoint]) -> None:
    key_file, _ = account
    roots = {
        location: create_adapter(GEMINI, credentials=key_file, location=location).host
        for location in ("us-central1", "europe-west4", "us", "global")
    }
    assert (
        roots["us-central1"]
        .model_url()
        .startswith(
            "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/key-project/"
            "locations/us-central1/"
        )
    )
    assert roots["europe-west4"].place.root == "https://europe-west4-aiplatform.googleapis.com"
    assert roots["us"].place.root == "https://aiplatform.us.rep.googleapis.com"
    assert roots["global"].place.root == "https://aiplatform.googleapis.com"
    default = create_adapter(CLAUDE, credentials=key_file)
    assert default.host.place.location == "global"
    assert default.host.endpoint().base_url == "https://aiplatform.googleapis.com"


def test_project_and_location_come_from_the_environment(
    account: tuple[Path, TokenEndpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file, _ = account
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "asia-northeast1")
    place = create_adapter(GEMINI, credentials=str(key_file)).host.place
    assert (place.project, place.location) == ("env-project", "asia-northeast1")


def test_missing_credentials_or_project_are_said_when_the_adapter_is_made(
    tmp_path: Path,
) -> None:
    for spec in (GEMINI, CLAUDE):
        with pytest.raises(ConfigurationError, match="GOOGLE_APPLICATION_CREDENTIALS") as info:
            create_adapter(spec, project="p")
        assert (info.value.option, info.value.provider) == ("credentials", spec.split(":")[0])
    with pytest.raises(ConfigurationError, match="credentials=") as missing_file:
        create_adapter(GEMINI, credentials=tmp_path / "no-such-key.json", project="p")
    assert missing_file.value.option == "credentials"
    with pytest.raises(ConfigurationError, match="must be a service-account key file"):
        create_adapter(GEMINI, credentials=42, project="p")
    from google.oauth2.credentials import Credentials

    with pytest.raises(ConfigurationError, match="GOOGLE_CLOUD_PROJECT") as no_project:
        create_adapter(GEMINI, credentials=Credentials(token="t"))
    assert no_project.value.option == "project"
    with pytest.raises(ConfigurationError, match="location must be a non-empty string"):
        create_adapter(GEMINI, credentials=Credentials(token="t"), project="p", location=" ")
    with pytest.raises(ConfigurationError, match="location must be a Vertex AI location"):
        create_adapter(GEMINI, credentials=Credentials(token="t"), project="p", location="a/b")


def test_an_option_of_another_host_is_refused_naming_the_host(
    account: tuple[Path, TokenEndpoint],
) -> None:
    key_file, _ = account
    with pytest.raises(ConfigurationError, match="for vertex") as info:
        create_adapter(GEMINI, credentials=key_file, endpoint="https://r.openai.azure.com")  # type: ignore[call-arg]
    assert info.value.option == "endpoint"
    with pytest.raises(ConfigurationError, match="for google"):
        create_adapter("google:gemini-2.5-flash", api_key=KEY, project="p")  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="takes no api_key"):
        create_adapter(CLAUDE, api_key=KEY, project="p")


def test_express_mode_sends_the_key_on_the_global_publisher_path() -> None:
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        _vertex(GEMINI, emu, api_key=KEY).evaluate(HELLO, session=Session())
        (request,) = emu.requests
    assert request.path == "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == "[redacted]"
    assert "authorization" not in request.headers
    with pytest.raises(ConfigurationError, match="global location only"):
        create_adapter(GEMINI, api_key=KEY, location="us-central1")
    with pytest.raises(ConfigurationError, match="not both"):
        create_adapter(GEMINI, api_key=KEY, project="p")


class CountingCredentials(google_service_account.Credentials):
    """google-auth's service-account credentials, noting the thread each refresh runs on."""

    threads: ClassVar[list[str]] = []

    def refresh(self, request: Any) -> None:
        CountingCredentials.threads.append(threading.current_thread().name)
        super().refresh(request)


@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
def test_a_token_is_refreshed_before_expiry_and_off_the_event_loop(
    spec: str, tmp_path: Path
) -> None:
    """A token with less than five minutes left is fetched again before the request; on
    the async path the refresh (an HTTP call to Google) runs on a worker thread."""
    with (
        service_account(tmp_path, lifetime=120) as (key_file, tokens),
        ProviderEmulator(default_turn=Turn.text("hi")) as emu,
    ):
        credentials = CountingCredentials.from_service_account_file(str(key_file))
        CountingCredentials.threads = []
        adapter = _vertex(spec, emu, credentials=credentials)

        async def twice() -> str:
            for _ in range(2):
                await adapter.evaluate_async(HELLO, session=Session())
            return threading.current_thread().name

        loop_thread = asyncio.run(twice())
        adapter.evaluate(HELLO, session=Session())
        requests = emu.requests
    assert len(tokens.issued) == 3  # 120 s left is inside the 5-minute margin: every time
    assert len(CountingCredentials.threads) == 3
    assert loop_thread not in CountingCredentials.threads
    assert tokens.scopes == [SCOPE] * 3  # scoped for the cloud platform, as given unscoped
    assert all(r.headers["authorization"] == "[redacted]" for r in requests)


@pytest.mark.parametrize("stream", [False, True])
def test_a_token_google_refuses_is_an_authentication_error_and_nothing_is_sent(
    stream: bool, account: tuple[Path, TokenEndpoint]
) -> None:
    key_file, tokens = account
    tokens.public_key = None  # the endpoint cannot check the signature: invalid_grant
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _vertex(CLAUDE, emu, credentials=key_file)
        with pytest.raises(AuthenticationError, match="Invalid JWT Signature"):
            answer(adapter, HELLO, stream=stream)
        assert emu.requests == []
    assert tokens.refused == 1


def test_an_unreachable_token_endpoint_is_a_retry_safe_connection_error(
    account: tuple[Path, TokenEndpoint], tmp_path: Path
) -> None:
    import json

    key_file, _ = account
    info = json.loads(key_file.read_text())
    info["token_uri"] = "http://127.0.0.1:9/token"  # the discard port: refused
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(info))
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _vertex(GEMINI, emu, credentials=moved)
        with pytest.raises(ThrottleError) as raised:
            adapter.evaluate(HELLO, session=Session())
    assert raised.value.details.kind == "connection"


def test_the_emulator_refuses_what_vertex_refuses() -> None:
    import httpx2

    where = "/v1/projects/p/locations/global/publishers"
    with ProviderEmulator([Turn.text("hi")]) as emu:
        unsigned = httpx2.post(
            f"{emu.url}/v1beta1/projects/p/locations/global/publishers/google/models/"
            "gemini-2.5-flash:generateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
        )
        no_version = httpx2.post(
            f"{emu.url}{where}/anthropic/models/claude-sonnet-4-5:rawPredict",
            json={"max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}]},
            headers={"authorization": "Bearer t"},
        )
        unknown_method = httpx2.post(
            f"{emu.url}{where}/anthropic/models/claude-sonnet-4-5:predict",
            json={},
            headers={"authorization": "Bearer t"},
        )
    assert unsigned.status_code == 401
    assert unsigned.json()["error"]["status"] == "UNAUTHENTICATED"
    assert no_version.status_code == 400
    assert "anthropic_version" in no_version.json()["error"]["message"]
    assert unknown_method.status_code == 404


@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
def test_a_request_without_a_token_is_an_authentication_error(spec: str) -> None:
    from google.oauth2.credentials import Credentials

    class Blank(Credentials):  # a token provider that hands out nothing usable
        def refresh(self, request: Any) -> None:
            self.token = " "

    with ProviderEmulator([Turn.text("hi")]) as emu:
        adapter = _vertex(spec, emu, credentials=Blank(token=None), project="p")
        with pytest.raises(AuthenticationError, match="no access token"):
            adapter.evaluate(HELLO, session=Session())
        assert emu.requests == []


_NOT_SERVABLE = {
    "error": {
        "code": 404,
        "message": "Publisher Model `projects/p/locations/us-west2/publishers/google/models/"
        "gemini-2.5-flash` is not servable in region us-west2.",
        "status": "NOT_FOUND",
    }
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
def test_a_model_the_location_does_not_serve_is_not_found_naming_both(
    spec: str, stream: bool, account: tuple[Path, TokenEndpoint]
) -> None:
    key_file, _ = account
    with ProviderEmulator([Fault.http(404, _NOT_SERVABLE)]) as emu:
        adapter = _vertex(spec, emu, credentials=key_file, location="us-west2")
        with pytest.raises(NotFoundError) as info:
            answer(adapter, HELLO, stream=stream)
    model = spec.partition(":")[2]
    assert info.value.model == model
    assert f"model {model!r} at location 'us-west2'" in str(info.value)
    assert "not servable in region" in str(info.value)


@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
def test_vertex_refuses_batches_before_sending(
    spec: str, account: tuple[Path, TokenEndpoint]
) -> None:
    key_file, tokens = account
    with ProviderEmulator([Turn.text("hi")]) as emu:
        adapter = _vertex(spec, emu, credentials=key_file)
        with pytest.raises(ConfigurationError, match="batch prediction jobs") as info:
            adapter.submit_batch([HELLO])
        assert emu.requests == []
    assert info.value.provider == spec.partition(":")[0]
    assert tokens.issued == []


# ---- the same answers as the direct provider


def _direct(spec: str, emu: ProviderEmulator) -> Any:
    direct = DIRECT[spec]
    wire = direct.partition(":")[0]
    return create_adapter(
        direct,
        api_key=KEY,
        base_url=emu.base_url(wire),
        retry_policy=NO_RETRY,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
def test_the_same_answers_give_the_same_response(
    spec: str, stream: bool, account: tuple[Path, TokenEndpoint]
) -> None:
    key_file, _ = account
    seen = []
    for make in (
        lambda emu: _direct(spec, emu),
        lambda emu: _vertex(spec, emu, credentials=key_file),
    ):
        with ProviderEmulator(list(SCRIPT)) as emu:
            seen.append(_seen(answer(make(emu), make_prompt(), stream=stream)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("spec", [GEMINI, CLAUDE])
@pytest.mark.parametrize(
    "fault",
    [Fault.rate_limit(3), Fault.overloaded(), Fault.context_window_exceeded(), Fault.not_found()],
)
def test_the_same_failures_raise_the_same_classes(
    spec: str, stream: bool, fault: Fault, account: tuple[Path, TokenEndpoint]
) -> None:
    key_file, _ = account
    raised: list[type[BaseException]] = []
    for make in (
        lambda emu: _direct(spec, emu),
        lambda emu: _vertex(spec, emu, credentials=key_file),
    ):
        with ProviderEmulator([fault]) as emu, pytest.raises(PromptEvaluationError) as info:
            answer(make(emu), HELLO, stream=stream)
        raised.append(type(info.value))
    assert raised[0] is raised[1]


def test_a_conversation_falls_back_from_vertex_claude_to_anthropic_with_its_thinking(
    account: tuple[Path, TokenEndpoint],
) -> None:
    """Same wire: Claude's signed thinking from Vertex goes to Anthropic intact, and
    Anthropic's check of it passes (thinking stays on)."""
    key_file, _ = account
    script = [
        Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"}), thinking="Use the tool."),
        Fault.overloaded(),
        Turn.text("Sunny in Paris."),
    ]
    with ProviderEmulator(script) as emu:
        vertex = _vertex(CLAUDE, emu, credentials=key_file, thinking=2048)
        anthropic = create_adapter(
            DIRECT[CLAUDE],
            api_key=KEY,
            base_url=emu.base_url("anthropic"),
            retry_policy=NO_RETRY,
            thinking=2048,
        )
        response = FallbackAdapter([vertex, anthropic]).evaluate(make_prompt(), session=Session())
        requests = emu.requests
    assert response.text == "Sunny in Paris."
    assert [r.path.rpartition(":")[2] for r in requests] == [
        "rawPredict",
        "rawPredict",
        "/v1/messages",
    ]
    assistant = requests[2].body["messages"][1]
    thinking = assistant["content"][0]
    assert thinking["type"] == "thinking"
    assert opens(thinking["signature"], thinking["thinking"]) is True
    assert requests[2].body["thinking"]["type"] in ("enabled", "adaptive")


def test_a_credentials_object_holding_a_token_is_used_as_is() -> None:
    """An access token made elsewhere (`gcloud auth print-access-token`) in google-auth's
    `Credentials`: valid, so sent without a refresh (it has nothing to refresh with)."""
    from google.oauth2.credentials import Credentials

    given = Credentials(token="ya29.made-elsewhere")
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _vertex(CLAUDE, emu, credentials=given, project="p")
        adapter.evaluate(HELLO, session=Session())
        adapter.evaluate(HELLO, session=Session())
        assert [r.headers["authorization"] for r in emu.requests] == ["[redacted]"] * 2
    assert given.token == "ya29.made-elsewhere"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tokens_are_counted_on_vertexs_own_paths(
    account: tuple[Path, TokenEndpoint], mode: str
) -> None:
    from wink.testing.token_counts import derived_count

    key_file, _ = account
    prompt = make_prompt()
    with ProviderEmulator() as emu:
        counts = {}
        for spec in (GEMINI, CLAUDE):
            adapter = _vertex(spec, emu, credentials=key_file, location="us-east5")
            if mode == "sync":
                counts[spec] = adapter.count_tokens(prompt)
            else:
                counts[spec] = asyncio.run(adapter.count_tokens_async(prompt))
        gemini, claude = emu.requests
    where = "/projects/key-project/locations/us-east5/publishers"
    assert gemini.path == f"/v1beta1{where}/google/models/gemini-2.5-flash:countTokens"
    assert set(gemini.body) <= {"contents", "systemInstruction", "tools", "generationConfig"}
    assert "contents" in gemini.body
    assert counts[GEMINI] == derived_count(gemini.body)
    assert claude.path == f"/v1{where}/anthropic/models/count-tokens:rawPredict"
    assert claude.body["model"] == "claude-sonnet-4-5@20250929"
    assert "anthropic_version" not in claude.body
    assert "max_tokens" not in claude.body
    assert counts[CLAUDE] == derived_count(claude.body)
    assert all(r.headers["authorization"] == "[redacted]" for r in (gemini, claude))


def test_an_unsigned_count_gets_googles_401() -> None:
    import httpx2

    with ProviderEmulator() as emu:
        where = f"{emu.url}/v1/projects/p/locations/l/publishers"
        for url in (
            f"{where}/google/models/gemini-2.5-flash:countTokens",
            f"{where}/anthropic/models/count-tokens:rawPredict",
        ):
            answer = httpx2.post(url, json={"contents": []})
            assert answer.status_code == 401, url
