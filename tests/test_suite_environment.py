"""What `tests/conftest.py` sets for every test and every process the tests start."""

from __future__ import annotations

import ssl

import httpx2


def test_tls_contexts_trust_only_the_unused_test_certificate() -> None:
    """Loading the system's CA bundle into each SDK client's context was two thirds of the
    quick run's CPU (docs/contributing.md): every way the SDKs build one loads one CA."""
    for context in (httpx2.create_ssl_context(), ssl.create_default_context()):
        assert context.cert_store_stats()["x509_ca"] == 1
