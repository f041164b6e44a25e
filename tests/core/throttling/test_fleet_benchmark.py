"""The fleet benchmark's children still run (`python -m benchmarks --only fleet` takes
minutes): a small fleet through one Redis, and a cold process, against a rate-limited
emulator process. No timing is asserted (see `nox -s bench`)."""

from __future__ import annotations

import pytest
from benchmarks._common import emulator, run_json
from benchmarks.fleet import _fleet_run

from wink.testing.redis_server import RedisServer

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

LIMITED = ("--shape", "text", "--rate", "100", "--burst", "1", "--no-rate-headers")


def test_a_small_fleet_and_a_cold_process_finish_every_request(
    redis_server: RedisServer,
) -> None:
    with emulator(*LIMITED) as server:
        base_url = server.base_url("openai")
        fleet = _fleet_run(
            base_url, redis_server.url, processes=2, each=6, conc=3, reset=server.reset
        )
        assert (fleet["ok"], fleet["failed"]) == (12, 0)
        assert fleet["wall"] > 0
        assert server.stats()["responses"]["200"] == 12  # the warm-ups not counted; 429s besides
        server.reset()
        cold = run_json(["-m", "benchmarks.load", "throttled", "wink-cold", base_url, "6", "3"])
        assert (cold["ok"], cold["failed"]) == (6, 0)
        assert server.stats()["responses"]["200"] == 6
