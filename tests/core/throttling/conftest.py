"""A real redis-server for the fleet tests: started on a free port, no persistence, stopped
after each test. Without redis-server or redis-py the tests skip, except under CI
(`CI` set), where they fail: CI must run them (`nox -s tests` installs redis-server)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from wink.testing.redis_server import RedisServer, redis_server_path


def _missing() -> str | None:
    if redis_server_path() is None:
        return "redis-server is not on PATH (apt-get install redis-server)"
    if importlib.util.find_spec("redis") is None:
        return "redis-py is not installed (pip install 'wink[redis]')"
    return None


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI must run the Redis tests")
        pytest.skip(missing)
    with RedisServer() as server:
        yield server
