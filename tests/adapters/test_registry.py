"""`create_adapter("provider:model")` (`wink.adapters.registry`): reading the spec, finding
the adapter class, and what it says when it cannot."""

from __future__ import annotations

import builtins
import importlib
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers.adapters import KEY
from wink import AdapterOptions, ConfigurationError, create_adapter
from wink.adapters.base import ProviderAdapter
from wink.adapters.registry import HOSTS, HostEntry


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_every_host_builds_the_adapter_class_it_names(name: str) -> None:
    entry = HOSTS[name]
    adapter = create_adapter(f"{name}:some-model", api_key=KEY, **_required(name))
    assert type(adapter).__name__ == (entry.adapter_class or "ProviderAdapter")
    host_class = getattr(importlib.import_module(entry.module), entry.host_class)
    assert type(adapter.host) is host_class
    assert type(adapter.api) is host_class.wire
    assert adapter.provider == host_class.name == ("google" if name == "gemini" else name)
    assert adapter.model == "some-model"


def _required(name: str) -> dict[str, Any]:
    """The options a host cannot do without (where its service is)."""
    return {
        "azure": {"endpoint": "https://example.openai.azure.com"},
        "azure-responses": {"endpoint": "https://example.openai.azure.com"},
        "vertex": {"project": "p"},
        "vertex-anthropic": {"project": "p"},
    }.get(name, {})


def test_a_provider_without_a_named_class_runs_as_a_provider_adapter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Adding a provider is a folder and one registry entry: no adapter class needed."""
    entry = HOSTS["anthropic"]
    monkeypatch.setitem(HOSTS, "claude", HostEntry(entry.module, entry.host_class, "anthropic"))
    adapter = create_adapter("claude:claude-sonnet-4-6", api_key=KEY)
    assert type(adapter) is ProviderAdapter
    assert adapter.name == "claude:claude-sonnet-4-6"
    assert adapter.api.name == "anthropic"


def test_a_provider_adapter_needs_a_registered_provider() -> None:
    with pytest.raises(ConfigurationError, match="provider="):
        ProviderAdapter("some-model")
    with pytest.raises(ConfigurationError, match="unknown provider 'nope'"):
        ProviderAdapter("some-model", provider="nope")
    adapter = ProviderAdapter("some-model", provider="anthropic", api_key=KEY)
    assert adapter.name == "anthropic:some-model"


def test_an_unknown_provider_is_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        create_adapter("acme:large")
    assert info.value.provider == "acme"
    assert f"known providers: {', '.join(sorted(HOSTS))}" in str(info.value)
    assert "anthropic, " in str(info.value)


def test_options_reach_the_adapter() -> None:
    adapter = create_adapter("anthropic:claude-sonnet-4-6", api_key=KEY, timeout=5, max_rounds=3)
    assert (adapter.timeout, adapter.max_rounds) == (5.0, 3)


@pytest.mark.parametrize(
    "spec",
    [None, 42, "", "openai", "openai:", ":gpt-4.1", "nope:model", "  :  ", b"openai:gpt"],
)
def test_a_bad_spec_is_a_configuration_error(spec: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        create_adapter(spec)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("spec", "provider", "model"),
    [
        ("openai: gpt-4o", "openai", "gpt-4o"),
        ("OpenAI:gpt-4o", "openai", "gpt-4o"),
        (" Anthropic : claude-sonnet-4-6 ", "anthropic", "claude-sonnet-4-6"),
        ("GEMINI:gemini-2.5-flash", "google", "gemini-2.5-flash"),
    ],
)
def test_a_spec_is_read_the_way_a_person_writes_it(spec: str, provider: str, model: str) -> None:
    adapter = create_adapter(spec, api_key=KEY)
    assert (adapter.provider, adapter.model) == (provider, model)


def test_a_missing_extra_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_httpx2(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "httpx2" or name.startswith("httpx2."):
            raise ModuleNotFoundError("No module named 'httpx2'", name="httpx2")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m.startswith("wink.providers.openai")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_httpx2)
    with pytest.raises(ConfigurationError, match=r"wink\[openai\]"):
        create_adapter("openai-responses:gpt-4.1", api_key=KEY)


def test_help_lists_the_providers_their_keys_and_the_options() -> None:
    text = create_adapter.__doc__ or ""
    for word in ("openai-responses", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "max_rounds"):
        assert word in text
    annotations = create_adapter.__annotations__
    assert "options" in annotations
    assert "AnyHostOptions" in str(annotations["options"])


@pytest.mark.parametrize("option", sorted(AdapterOptions.__annotations__))
def test_help_names_every_option(option: str) -> None:
    assert f"`{option}`" in (create_adapter.__doc__ or "")


def test_importing_the_registry_loads_no_sdk() -> None:
    code = (
        "import sys, wink; wink.create_adapter; "
        "assert not {'openai', 'anthropic', 'google.genai'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})
