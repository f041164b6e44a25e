"""Azure OpenAI (`azure:`, `azure-responses:`) at the wire: the v1 and legacy URLs, the
`api-key` header and Entra ID tokens, deployments and `base_model=`, the content filter."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import pytest

from tests.helpers.adapters import KEY, NO_RETRY
from tests.helpers.prompts import HELLO
from wink import (
    AuthenticationError,
    ConfigurationError,
    ContentFilteredError,
    Session,
    create_adapter,
)
from wink.testing import Fault, ProviderEmulator, Turn


def _azure(emu: ProviderEmulator, spec: str = "azure:prod-gpt", **options: Any) -> Any:
    options.setdefault("retry_policy", NO_RETRY)
    return create_adapter(spec, endpoint=emu.url, **options)


def test_the_v1_endpoint_with_the_api_key_header() -> None:
    with ProviderEmulator([Turn.text("hi")]) as emu:
        adapter = _azure(emu, api_key=KEY)
        assert adapter.evaluate(HELLO, session=Session()).text == "hi"
        (request,) = emu.requests
    assert request.path == "/openai/v1/chat/completions"
    assert request.query == ""
    assert request.headers["api-key"] == "[redacted]"
    assert "authorization" not in request.headers  # the SDK's own bearer header is left out
    assert request.body["model"] == "prod-gpt"
    assert adapter.host.system == "azure"


def test_the_key_and_the_resource_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    with ProviderEmulator([Turn.text("hi")]) as emu:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url + "/")
        adapter = create_adapter("azure:prod-gpt", retry_policy=NO_RETRY)
        assert adapter.evaluate(HELLO, session=Session()).text == "hi"
        assert emu.requests[0].headers["api-key"] == "[redacted]"


def test_no_resource_and_no_key_are_said_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT") as info:
        create_adapter("azure:prod-gpt", api_key=KEY)
    assert info.value.option == "endpoint"
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_API_KEY") as missing:
        create_adapter("azure:prod-gpt", endpoint="https://r.openai.azure.com")
    assert missing.value.option == "api_key"


def test_an_option_of_another_host_is_refused_naming_the_host() -> None:
    with pytest.raises(ConfigurationError, match="for openai") as info:
        create_adapter("openai:gpt-4.1", api_key=KEY, endpoint="https://r.openai.azure.com")  # type: ignore[call-arg]
    assert info.value.provider == "openai"
    assert info.value.option == "endpoint"
    with pytest.raises(ConfigurationError, match="for azure"):
        create_adapter("azure:d", endpoint="https://r.openai.azure.com", project="p")  # type: ignore[call-arg]


def _jwt(expires: float) -> str:
    claims = base64.urlsafe_b64encode(json.dumps({"exp": expires}).encode()).decode()
    return f"eyJhbGciOiJub25lIn0.{claims.rstrip('=')}.signature"


class Tokens:
    """A token provider that counts its calls; each token expires `lifetime` from now."""

    def __init__(self, lifetime: float) -> None:
        self.lifetime = lifetime
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return _jwt(time.time() + self.lifetime)


def test_an_entra_token_is_sent_as_bearer_and_asked_again_only_near_expiry() -> None:
    long_lived, short_lived = Tokens(3600), Tokens(60)
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        for tokens in (long_lived, short_lived):
            adapter = _azure(emu, token_provider=tokens)
            for _ in range(3):
                adapter.evaluate(HELLO, session=Session())

            async def twice(adapter: Any = adapter) -> None:  # the async path signs too
                for _ in range(2):
                    await adapter.evaluate_async(HELLO, session=Session())

            asyncio.run(twice())
        requests = emu.requests
    assert long_lived.calls == 1  # cached until 5 minutes before its expiry
    assert short_lived.calls == 5  # within 5 minutes of expiry: asked again every time
    assert all(r.headers["authorization"] == "[redacted]" for r in requests)
    assert all("api-key" not in r.headers for r in requests)


def test_a_token_provider_returning_an_access_token_object() -> None:
    class AccessToken:
        def __init__(self) -> None:
            self.token, self.expires_on = "opaque-token-value", int(time.time()) + 3600

    calls: list[int] = []

    def provider() -> AccessToken:
        calls.append(1)
        return AccessToken()

    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _azure(emu, token_provider=provider)
        adapter.evaluate(HELLO, session=Session())
        adapter.evaluate(HELLO, session=Session())
    assert len(calls) == 1


def test_the_legacy_urls_when_an_api_version_is_given() -> None:
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        _azure(emu, api_key=KEY, api_version="2024-10-21").evaluate(HELLO, session=Session())
        _azure(
            emu, "azure-responses:prod-gpt", api_key=KEY, api_version="2025-04-01-preview"
        ).evaluate(HELLO, session=Session())
        _azure(emu, "azure-responses:prod-gpt", api_key=KEY).evaluate(HELLO, session=Session())
        chat, responses, v1 = emu.requests
    assert (chat.path, chat.query) == (
        "/openai/deployments/prod-gpt/chat/completions",
        "api-version=2024-10-21",
    )
    assert (responses.path, responses.query) == (
        "/openai/responses",
        "api-version=2025-04-01-preview",
    )
    assert v1.path == "/openai/v1/responses"
    assert responses.body["model"] == "prod-gpt"


def test_base_model_chooses_the_rules_and_the_deployment_is_sent() -> None:
    with ProviderEmulator(default_turn=Turn.text("hi")) as emu:
        adapter = _azure(emu, "azure:prod", api_key=KEY, base_model="o3", thinking="high")
        adapter.evaluate(HELLO, session=Session())
        (request,) = emu.requests
    assert request.body["model"] == "prod"
    assert request.body["reasoning_effort"] == "high"  # o3's rule, on the deployment
    assert adapter.api.model == "o3"
    create_adapter(
        "azure:gpt-4o", endpoint="https://r.example", base_model="o3", thinking="high", api_key=KEY
    )
    with pytest.raises(ConfigurationError, match="gpt-4o is not a reasoning model"):
        create_adapter("azure:gpt-4o", endpoint="https://r.example", thinking="high", api_key=KEY)


def test_the_emulator_refuses_a_request_without_auth_as_azure_does() -> None:
    import httpx2

    with ProviderEmulator([Turn.text("hi")]) as emu:
        answer = httpx2.post(
            f"{emu.url}/openai/v1/chat/completions",
            json={"model": "d", "messages": [{"role": "user", "content": "Hi"}]},
        )
        legacy = httpx2.post(
            f"{emu.url}/openai/deployments/d/chat/completions",
            json={"model": "d", "messages": [{"role": "user", "content": "Hi"}]},
            headers={"api-key": "k"},
        )
    assert answer.status_code == 401
    assert "Access denied" in answer.json()["error"]["message"]
    assert legacy.status_code == 404  # no api-version: not a legacy URL Azure serves


def test_a_refused_key_is_an_authentication_error() -> None:
    with ProviderEmulator([Fault.unauthorized()]) as emu, pytest.raises(AuthenticationError):
        _azure(emu, api_key=KEY).evaluate(HELLO, session=Session())


_FILTERED_400 = {
    "error": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
        "content management policy.",
        "type": None,
        "param": "prompt",
        "code": "content_filter",
        "status": 400,
        "innererror": {
            "code": "ResponsibleAIPolicyViolation",
            "content_filter_result": {"hate": {"filtered": True, "severity": "high"}},
        },
    }
}


@pytest.mark.parametrize("stream", [False, True])
def test_the_content_filter_refusing_the_prompt_is_content_filtered(stream: bool) -> None:
    with ProviderEmulator([Fault.http(400, _FILTERED_400)]) as emu:
        adapter = _azure(emu, api_key=KEY)
        with pytest.raises(ContentFilteredError) as info:
            _run(adapter, stream=stream)
    assert "content management policy" in str(info.value)


def _run(adapter: Any, *, stream: bool) -> Any:
    if not stream:
        return adapter.evaluate(HELLO, session=Session())
    with adapter.stream(HELLO, session=Session()) as events:
        list(events)
        return events.response


def test_the_content_filter_stopping_the_answer_is_content_filtered() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "finish_reason": "content_filter",
                "message": {"role": "assistant", "content": None},
                "content_filter_results": {"violence": {"filtered": True, "severity": "medium"}},
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5},
    }
    with ProviderEmulator([Fault.http(200, body)]) as emu, pytest.raises(ContentFilteredError):
        _azure(emu, api_key=KEY).evaluate(HELLO, session=Session())


def test_azure_offers_no_batches_in_wink() -> None:
    adapter = create_adapter("azure:d", endpoint="https://r.openai.azure.com", api_key=KEY)
    with pytest.raises(ConfigurationError, match="Global Batch"):
        adapter.submit_batch([HELLO])
