"""Fixtures every test folder may use (the `wink` pytest plugin adds `provider_emulator`)."""

from __future__ import annotations

import getpass
import os
import signal
import sys
import tempfile
from collections.abc import Callable

import pytest

# Where bytecode may not be written next to the sources (PYTHONDONTWRITEBYTECODE, python -B),
# every pytest process would compile wink and rewrite the asserts of every test module (and
# of wink's: it is a pytest plugin) again, about 20 s of CPU, and each Python child a test
# starts (`python -m wink`, a fleet's workers, MCP servers) would compile wink again. They
# keep it in a cache under the temp folder instead, shared by every run and every worker,
# never in the tree. Before wink is imported, so that it is cached too.
if sys.dont_write_bytecode:
    try:
        OWNER = getpass.getuser()
    except (KeyError, OSError):  # a uid with no name (some containers)
        OWNER = str(os.getpid())
    CACHE = os.path.join(tempfile.gettempdir(), f"wink-pycache-{OWNER}")
    sys.dont_write_bytecode = False
    sys.pycache_prefix = sys.pycache_prefix or CACHE
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", sys.pycache_prefix)

from wink.testing import ProviderEmulator, Turn  # after the cache is set

# A shell starts a background job (`cmd &`) with SIGINT ignored, and a child inherits an
# ignored signal: the tests that press Ctrl-C in a child would wait forever. A handled
# signal is reset to its default in a child, so handle it here.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Bedrock needs a region for its URL and its signatures; a test that is about the region
# unsets it. Set here, not per test: subprocesses the tests start inherit it too.
os.environ.setdefault("AWS_REGION", "us-east-1")

# Every SDK client (each adapter makes one per event loop) builds a TLS context and loads
# the system's CA bundle into it: 140 certificates, 20 to 60 ms of CPU each time, which
# was two thirds of the quick run's CPU. No test makes a TLS connection (every server is
# on http://127.0.0.1), so the tests and their children trust one certificate no server
# uses (`SSL_CERT_FILE`, read by httpx2, the google-genai SDK and OpenSSL): a context
# costs 2 ms, and a call that did reach a real https:// server would fail its handshake.
os.environ["SSL_CERT_FILE"] = os.path.join(os.path.dirname(__file__), "helpers", "unused-ca.pem")
os.environ.pop("SSL_CERT_DIR", None)


@pytest.fixture
def emulator(provider_emulator_factory: Callable[..., ProviderEmulator]) -> ProviderEmulator:
    """A started emulator with an empty script: a request no turn was queued for is a 400."""
    return provider_emulator_factory()


@pytest.fixture
def ok_emulator(provider_emulator_factory: Callable[..., ProviderEmulator]) -> ProviderEmulator:
    """A started emulator that answers "ok" to every request its script leaves over."""
    return provider_emulator_factory(default_turn=Turn.text("ok"))
