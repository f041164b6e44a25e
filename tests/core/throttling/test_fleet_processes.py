"""Four processes, one API key: with a shared `RedisLimiter` they pace as one.

Each process is a real Python subprocess (`fleet_worker.py`) running evaluations against
one rate-limited emulator that sends no rate-limit headers (only `retry-after`), the hard
case: the fleet can learn the pace only from 429s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wink.testing import ProviderEmulator, RateLimit, Turn
from wink.testing.redis_server import RedisServer

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

WORKER = str(Path(__file__).with_name("fleet_worker.py"))
PROCESSES, EACH, CONCURRENCY = 4, 40, 20


@pytest.fixture
def emu() -> Any:
    limit = RateLimit(requests_per_second=100, burst=1, headers=False)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emulator:
        yield emulator


def run_fleet(
    emu: ProviderEmulator,
    redis_url: str,
    namespace: str,
    during: Callable[[], None] | None = None,
    retry_every: float = 1.0,
) -> list[dict[str, Any]]:
    """Start the workers, let them go at once, return what each printed."""
    command = [
        sys.executable,
        WORKER,
        emu.base_url("openai"),
        redis_url,
        namespace,
        str(EACH),
        str(CONCURRENCY),
        str(retry_every),
    ]
    workers = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "ready"
        emu.clear()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        if during is not None:
            during()
        outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    assert all(worker.returncode == 0 for worker in workers)
    return [json.loads(output.strip().splitlines()[-1]) for output in outputs]


def wait_for_requests(emu: ProviderEmulator, count: int) -> None:
    deadline = time.monotonic() + 60
    while emu.stats.requests < count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_four_processes_sharing_a_namespace_provoke_fewer_429s(
    emu: ProviderEmulator, redis_server: RedisServer
) -> None:
    alone = run_fleet(emu, "-", "unused")
    throttled_alone = emu.stats.throttled
    shared = run_fleet(emu, redis_server.url, "team-a")
    throttled_shared = emu.stats.throttled
    print(f"429s: {throttled_alone} alone, {throttled_shared} sharing Redis")
    for results in (alone, shared):
        assert [result["ok"] for result in results] == [EACH] * PROCESSES
        assert [result["failed"] for result in results] == [0] * PROCESSES
    assert emu.stats.responses[200] == PROCESSES * EACH  # none lost, none sent twice
    assert throttled_shared < throttled_alone / 2
    assert redis_server.keys() == ["wink:limiter:team-a:openai:gpt-4.1"]


def test_a_fleet_keeps_going_when_redis_is_killed_and_restarted(
    emu: ProviderEmulator, redis_server: RedisServer
) -> None:
    def outage() -> None:
        wait_for_requests(emu, 40)
        redis_server.stop()  # every process loses Redis mid-run...
        wait_for_requests(emu, 80)
        redis_server.start()  # ...and finds it again, empty, on the same port

    results = run_fleet(emu, redis_server.url, "team-b", during=outage, retry_every=0.05)
    assert [result["ok"] for result in results] == [EACH] * PROCESSES
    assert [result["failed"] for result in results] == [0] * PROCESSES
    assert emu.stats.responses[200] == PROCESSES * EACH  # none lost, none sent twice
    for result in results:
        failures = [text for text in result["warnings"] if "failed" in text]
        assert len(failures) == 1, result["warnings"]  # one warning per outage
        assert result["warnings"][-1].endswith("answers again: pacing is shared again")
        assert result["redis"]
    # the restarted server was seeded with what the fleet knew, and is used again
    assert redis_server.keys() == ["wink:limiter:team-b:openai:gpt-4.1"]
