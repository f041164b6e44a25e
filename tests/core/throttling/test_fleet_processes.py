"""Four processes, one API key: with a shared `RedisLimiter` they pace as one.

Each process is a real Python subprocess (`fleet_worker.py`) running evaluations against
one rate-limited emulator that sends no rate-limit headers (only `retry-after`), the hard
case: the fleet can learn the pace only from 429s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from wink.testing import ProviderEmulator, RateLimit, Turn
from wink.testing.redis_server import RedisServer

pytestmark = pytest.mark.slow  # a process, a server or a benchmark: docs/contributing.md

WORKER = str(Path(__file__).with_name("fleet_worker.py"))
PROCESSES, EACH, CONCURRENCY = 4, 40, 20
# A loaded machine can starve a worker's event loop past RedisLimiter's default half
# second: a Redis call that slow is a failure of its own (and warned), not one these tests
# make. Every failure they make (a server killed) is a refused or closed connection.
REDIS_TIMEOUT = 10.0
WAIT = 60.0  # seconds any step may take on a loaded machine before the test fails


@pytest.fixture
def emu() -> Any:
    limit = RateLimit(requests_per_second=100, burst=1, headers=False)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emulator:
        yield emulator


class Fleet:
    """The worker processes, started and ready, and every line each has printed so far
    (read as it comes, so a test can wait for what the workers say rather than for a time)."""

    def __init__(
        self, emu: ProviderEmulator, redis_url: str, namespace: str, count: int, retry_every: float
    ) -> None:
        command = [
            sys.executable,
            WORKER,
            emu.base_url("openai"),
            redis_url,
            namespace,
            str(count),
            str(CONCURRENCY),
            str(retry_every),
            str(REDIS_TIMEOUT),
        ]
        self.workers = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(PROCESSES)
        ]
        self.lines: list[list[str]] = [[] for _ in self.workers]
        self.ended = [False for _ in self.workers]
        self._changed = threading.Condition()
        for index in range(len(self.workers)):
            threading.Thread(target=self._read, args=(index,), daemon=True).start()
        self.wait_for_each(lambda line: line == "ready", "ready")

    def _read(self, index: int) -> None:
        stdout = self.workers[index].stdout
        assert stdout is not None
        for line in stdout:
            with self._changed:
                self.lines[index].append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self.ended[index] = True
            self._changed.notify_all()

    def wait_for_each(self, seen: Callable[[str], bool], what: str) -> None:
        """Until every worker has printed a line `seen` accepts (one that exits first, or a
        wait longer than `WAIT`, fails the test)."""

        def done() -> bool:
            return all(ended or any(map(seen, lines)) for lines, ended in self._state())

        with self._changed:
            self._changed.wait_for(done, timeout=WAIT)
            missing = [lines for lines, _ in self._state() if not any(map(seen, lines))]
        assert not missing, f"a worker printed no {what!r} line: {missing}"

    def _state(self) -> list[tuple[list[str], bool]]:
        return list(zip(self.lines, self.ended, strict=True))

    def send(self, line: str) -> None:
        for worker in self.workers:
            assert worker.stdin is not None
            worker.stdin.write(line + "\n")
            worker.stdin.flush()

    def results(self) -> list[dict[str, Any]]:
        """What each worker printed last, once all have exited (each must exit with 0)."""
        deadline = time.monotonic() + 2 * WAIT
        for worker in self.workers:
            assert worker.wait(timeout=max(deadline - time.monotonic(), 0.1)) == 0
        self.wait_for_each(lambda line: line.startswith("{"), "result")
        return [json.loads(lines[-1]) for lines in self.lines]

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
            worker.wait()
            for pipe in (worker.stdin, worker.stdout):
                if pipe is not None:
                    pipe.close()


@pytest.fixture
def fleets() -> Iterator[Callable[..., Fleet]]:
    """Start fleets (`fleets(emu, redis_url, namespace, count, retry_every)`); all are
    killed after the test, whatever it did."""
    started: list[Fleet] = []

    def start(*args: Any) -> Fleet:
        started.append(Fleet(*args))
        return started[-1]

    yield start
    for fleet in started:
        fleet.close()


def run_fleet(
    fleets: Callable[..., Fleet], emu: ProviderEmulator, redis_url: str, namespace: str
) -> list[dict[str, Any]]:
    """Start the workers, let them go at once (EACH evaluations each), return their results."""
    fleet = fleets(emu, redis_url, namespace, EACH, 1.0)
    emu.clear()
    fleet.send("go")
    return fleet.results()


def wait_for_requests(emu: ProviderEmulator, count: int) -> None:
    deadline = time.monotonic() + WAIT
    while emu.stats.requests < count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_four_processes_sharing_a_namespace_provoke_fewer_429s(
    emu: ProviderEmulator, redis_server: RedisServer, fleets: Callable[..., Fleet]
) -> None:
    alone = run_fleet(fleets, emu, "-", "unused")
    throttled_alone = emu.stats.throttled
    shared = run_fleet(fleets, emu, redis_server.url, "team-a")
    throttled_shared = emu.stats.throttled
    print(f"429s: {throttled_alone} alone, {throttled_shared} sharing Redis")
    for results in (alone, shared):
        assert [result["ok"] for result in results] == [EACH] * PROCESSES
        assert [result["failed"] for result in results] == [0] * PROCESSES
    assert emu.stats.responses[200] == PROCESSES * EACH  # none lost, none sent twice
    assert throttled_shared < throttled_alone / 2
    assert redis_server.keys() == ["wink:limiter:team-a:openai:gpt-4.1"]


def test_a_fleet_keeps_going_when_redis_is_killed_and_restarted(
    emu: ProviderEmulator, redis_server: RedisServer, fleets: Callable[..., Fleet]
) -> None:
    """Each step waits for what the workers say, not for a time or a request count: a
    worker starved of CPU for a while must still see the outage and the way back, and
    none may run out of work before it has."""
    fleet = fleets(emu, redis_server.url, "team-b", 0, 0.05)  # 0: until told to stop
    emu.clear()
    fleet.send("go")
    wait_for_requests(emu, 40)
    redis_server.stop()  # every process loses Redis mid-run...
    fleet.wait_for_each(lambda line: line.startswith("warning: ") and " failed " in line, "failed")
    redis_server.start()  # ...and finds it again, empty, on the same port
    fleet.wait_for_each(lambda line: line.endswith("answers again: pacing is shared again"), "back")
    fleet.send("stop")
    results = fleet.results()
    assert all(result["ok"] > 0 for result in results), results
    assert [result["failed"] for result in results] == [0] * PROCESSES
    # none lost, none sent twice
    assert emu.stats.responses[200] == sum(result["ok"] for result in results)
    for result in results:
        failures = [text for text in result["warnings"] if " failed " in text]
        assert len(failures) == 1, result["warnings"]  # one warning per outage
        assert result["warnings"][-1].endswith("answers again: pacing is shared again")
        assert result["redis"]
    # the restarted server was seeded with what the fleet knew, and is used again
    assert redis_server.keys() == ["wink:limiter:team-b:openai:gpt-4.1"]
