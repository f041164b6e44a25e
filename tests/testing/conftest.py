"""SDK clients pointed at the `provider_emulator` fixture (SDK retries off)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from tests.helpers.adapters import KEY
from wink.testing import ProviderEmulator


@pytest.fixture
def emu(provider_emulator: ProviderEmulator) -> ProviderEmulator:
    return provider_emulator


@pytest.fixture
def openai_client(emu: ProviderEmulator) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        api_key=KEY, base_url=emu.base_url("openai"), max_retries=0, timeout=5
    ) as client:
        yield client


@pytest.fixture
def anthropic_client(emu: ProviderEmulator) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        api_key=KEY, base_url=emu.base_url("anthropic"), max_retries=0, timeout=5
    ) as client:
        yield client


@pytest.fixture
def make_google(emu: ProviderEmulator) -> Callable[..., genai.Client]:
    """A Gemini client; `version` picks the `/v1beta` or `/v1` route, timeout is in ms."""

    def make(version: str = "v1beta", timeout_ms: int = 5000) -> genai.Client:
        options = types.HttpOptions(
            base_url=emu.base_url("google"), api_version=version, timeout=timeout_ms
        )
        return genai.Client(api_key=KEY, http_options=options)

    return make


@pytest.fixture
def google_client(make_google: Callable[..., genai.Client]) -> Iterator[genai.Client]:
    with make_google() as client:
        yield client


@pytest.fixture
def async_openai(emu: ProviderEmulator) -> Callable[..., openai.AsyncOpenAI]:
    def make(timeout: float = 5) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=KEY, base_url=emu.base_url("openai"), max_retries=0, timeout=timeout
        )

    return make


@pytest.fixture
def async_anthropic(emu: ProviderEmulator) -> Callable[..., anthropic.AsyncAnthropic]:
    def make(timeout: float = 5) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=KEY, base_url=emu.base_url("anthropic"), max_retries=0, timeout=timeout
        )

    return make
