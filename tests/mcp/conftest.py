"""Fixtures of the MCP tests (the servers themselves: `tests.helpers.mcp_servers`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.mcp_servers import HttpProcess

pytest.importorskip("mcp")


@pytest.fixture
def http_process() -> Iterator[HttpProcess]:
    """The test server over streamable HTTP on loopback, killed at the end."""
    process = HttpProcess()
    yield process
    process.kill()
