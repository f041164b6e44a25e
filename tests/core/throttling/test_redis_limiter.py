"""`RedisLimiter` against a real redis-server: what is shared, and what happens when Redis
goes away. Two limiter objects on one namespace stand for two processes (each has its own
connections and its own local pacer); `test_fleet_processes.py` runs real processes."""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import math
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from wink import (
    ConfigurationError,
    MarkdownSection,
    Prompt,
    RedisLimiter,
    RetryPolicy,
    Session,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.core.foundation.runtime import portal
from wink.core.throttling.pace_store import PaceChange
from wink.core.throttling.pacing import Permit
from wink.core.throttling.redis import RedisStore
from wink.testing import Fault, ProviderEmulator, RateLimit, Turn
from wink.testing.redis_server import RedisServer

HELLO = Prompt(name="hello", sections=[MarkdownSection(key="t", title="T", template="Hi")])
KEY = "openai:gpt-4.1"
FAST = RetryPolicy(max_attempts=100, initial_delay=0.01, max_delay=0.5)


def adapter(emu: ProviderEmulator, limiter: RedisLimiter) -> ProviderAdapter:
    return create_adapter(
        KEY, base_url=emu.base_url("openai"), api_key="test-key", limiter=limiter, retry_policy=FAST
    )


@pytest.fixture
def emu() -> Iterator[ProviderEmulator]:
    with ProviderEmulator(default_turn=Turn.text("ok")) as emulator:
        yield emulator


def limiter_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "wink.limiter"]


def test_import_wink_does_not_import_redis() -> None:
    code = (
        "import sys, wink\n"
        "assert wink.RedisLimiter.__name__ == 'RedisLimiter'\n"
        "print('redis' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_redis_py_the_error_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['redis'] = None  # as if redis-py were not installed\n"
        "import wink\n"
        "try:\n"
        "    wink.RedisLimiter('redis://127.0.0.1:6379/0', namespace='n')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "RedisLimiter needs redis-py: pip install 'wink[redis]'"


@pytest.mark.parametrize(
    ("url", "options", "option"),
    [
        ("http://x", {"namespace": "a"}, "url"),
        ("redis://localhost", {"namespace": ""}, "namespace"),
        ("redis://localhost", {"namespace": None}, "namespace"),
        ("redis://localhost", {"namespace": "n", "timeout": -1}, "timeout"),
        ("redis://localhost", {"namespace": "n", "timeout": 0}, "timeout"),
        ("redis://localhost", {"namespace": "n", "refresh": math.nan}, "refresh"),
        ("redis://localhost", {"namespace": "n", "retry_every": "1"}, "retry_every"),
        ("redis://localhost", {"namespace": "n", "prefix": ""}, "prefix"),
    ],
)
def test_bad_arguments_are_configuration_errors(
    url: str, options: dict[str, object], option: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"RedisLimiter\({option}=") as info:
        RedisLimiter(url, **options)  # type: ignore[arg-type]
    assert info.value.option == option
    assert isinstance(info.value, ValueError)  # what `except ValueError` caught before


def test_a_url_that_is_not_redis_says_which_schemes_it_takes() -> None:
    with pytest.raises(ConfigurationError) as info:
        RedisLimiter("http://:s3cret-pw@x", namespace="a")
    assert "redis://, rediss:// or unix://" in str(info.value)
    assert "s3cret-pw" not in str(info.value)


@pytest.mark.parametrize("key", ["", None, 3])
def test_a_pacer_key_is_a_non_empty_string(key: object) -> None:
    limiter = RedisLimiter("redis://localhost", namespace="n")
    with pytest.raises(ConfigurationError, match="a limiter key is a non-empty string"):
        limiter.pacer(key)  # type: ignore[arg-type]


async def test_the_password_never_shows(
    redis_server: RedisServer, emu: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    port = redis_server.port
    redis_server.stop()  # nobody answers there now
    limiter = RedisLimiter(f"redis://:s3cret-pw@127.0.0.1:{port}/0", namespace="n")
    assert "s3cret-pw" not in repr(limiter)
    assert "s3cret-pw" not in limiter.url
    with caplog.at_level(logging.WARNING, logger="wink.limiter"):
        await adapter(emu, limiter).evaluate_async(HELLO, session=Session())
    (warning,) = limiter_warnings(caplog)
    assert "s3cret-pw" not in warning
    assert "[redacted]" in warning


async def test_a_url_redis_py_refuses_fails_no_evaluation(
    redis_server: RedisServer, emu: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    limiter = RedisLimiter("redis://127.0.0.1:not-a-port/0", namespace="n")
    with caplog.at_level(logging.WARNING, logger="wink.limiter"):
        response = await adapter(emu, limiter).evaluate_async(HELLO, session=Session())
    assert response.text == "ok"
    (warning,) = limiter_warnings(caplog)
    assert "pacing in-process" in warning


async def test_a_throttle_in_one_process_holds_the_other(
    redis_server: RedisServer, emu: ProviderEmulator
) -> None:
    first = adapter(emu, RedisLimiter(redis_server.url, namespace="team"))
    second = adapter(emu, RedisLimiter(redis_server.url, namespace="team"))
    elsewhere = RedisLimiter(redis_server.url, namespace="other-key")
    emu.inject(Fault.rate_limit(retry_after=0.3))
    await first.evaluate_async(HELLO, session=Session())  # 429, then the retry succeeds
    throttled_at = emu.requests[0].received_at
    await second.evaluate_async(HELLO, session=Session())
    assert emu.stats.responses == {200: 2, 429: 1}
    # the other process knew nothing by itself; Redis told it to hold until the window ended
    assert emu.requests[-1].received_at >= throttled_at + 0.3
    other = elsewhere.pacer(KEY)  # another namespace (another API key) is not held
    permit = await other.acquire()
    assert permit is not None
    assert not permit.paced
    assert other.interval == 0.0
    assert redis_server.keys() == [f"wink:limiter:team:{KEY}"]


async def test_two_processes_never_take_the_same_slot(redis_server: RedisServer) -> None:
    one, two = (
        RedisStore(RedisLimiter(redis_server.url, namespace="slots"), f"slots:{KEY}")
        for _ in range(2)
    )
    # The fleet now spaces by 2 s. Booking only answers (nothing sleeps), so the interval
    # costs no time; it is long so that all 20 bookings reach Redis before the second slot
    # is due, even on a loaded machine. (At 20 ms, a booking that arrived after its slot
    # had passed went at once, rightly, and the count came out one short.)
    await one.apply(PaceChange(floor=2.0, urgent=True))
    bookings = await asyncio.gather(*(store.book(60.0) for store in (one, two) for _ in range(10)))
    # a slot is `mark` on Redis's clock (nothing held, nothing shifted): 20 distinct
    # slots, one interval apart, whichever process booked them
    assert sum(booking.go for booking in bookings) == 1  # the first went at once
    slots = sorted(booking.mark for booking in bookings if not booking.go)
    assert len(slots) == 19
    gaps = [later - earlier for earlier, later in itertools.pairwise(slots)]
    assert min(gaps) == pytest.approx(2.0)
    assert max(gaps) == pytest.approx(2.0)


async def test_redis_down_at_start_paces_in_process_and_warns_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    port = redis_server.port
    redis_server.stop()
    limiter = RedisLimiter(f"redis://127.0.0.1:{port}/0", namespace="n", retry_every=60)
    limit = RateLimit(requests_per_second=100, burst=1, headers=False)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu:
        with caplog.at_level(logging.WARNING, logger="wink.limiter"):
            runner = adapter(emu, limiter)
            results = await asyncio.gather(
                *(runner.evaluate_async(HELLO, session=Session()) for _ in range(30))
            )
        assert [result.text for result in results] == ["ok"] * 30
        assert emu.stats.responses[200] == 30
    (warning,) = limiter_warnings(caplog)
    assert "failed (ConnectionError" in warning
    assert "pacing in-process" in warning
    assert not limiter.available


@pytest.mark.slow
async def test_redis_killed_mid_run_and_restarted(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    limiter = RedisLimiter(redis_server.url, namespace="n", retry_every=0.05)
    limit = RateLimit(requests_per_second=100, burst=1, headers=False)
    with ProviderEmulator(default_turn=Turn.text("ok"), rate_limit=limit) as emu:
        runner = adapter(emu, limiter)

        async def after(requests: int) -> None:
            while emu.stats.requests < requests:  # noqa: ASYNC110 - the emulator has no event
                await asyncio.sleep(0.005)

        async def outage() -> None:
            await after(30)
            await asyncio.to_thread(redis_server.stop)
            await after(60)
            await asyncio.to_thread(redis_server.start)

        with caplog.at_level(logging.WARNING, logger="wink.limiter"):
            results, _ = await asyncio.gather(
                asyncio.gather(
                    *(runner.evaluate_async(HELLO, session=Session()) for _ in range(120))
                ),
                outage(),
            )
        assert [result.text for result in results] == ["ok"] * 120
        assert emu.stats.responses[200] == 120  # none lost, none sent twice
    warnings = limiter_warnings(caplog)
    assert len(warnings) == 2, warnings
    assert "failed (ConnectionError" in warnings[0]
    assert warnings[1].endswith("answers again: pacing is shared again")
    assert limiter.available
    assert redis_server.keys() == [f"wink:limiter:n:{KEY}"]  # written again after the restart


async def test_a_frozen_redis_times_out_and_the_evaluation_goes_on(
    redis_server: RedisServer, emu: ProviderEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    limiter = RedisLimiter(redis_server.url, namespace="n", timeout=0.05)
    runner = adapter(emu, limiter)
    await runner.evaluate_async(HELLO, session=Session())
    emu.inject(Fault.rate_limit(retry_after=0.01))  # the pacer will need Redis now
    redis_server.pause()
    try:
        with caplog.at_level(logging.WARNING, logger="wink.limiter"):
            response = await runner.evaluate_async(HELLO, session=Session())
    finally:
        redis_server.resume()
    assert response.text == "ok"
    (warning,) = limiter_warnings(caplog)
    assert "failed (TimeoutError" in warning


async def test_a_restarted_redis_learns_what_the_fleet_knew(redis_server: RedisServer) -> None:
    knows = RedisLimiter(redis_server.url, namespace="seed", retry_every=0.0).pacer(KEY)
    limit = {"limit_reached": True}  # the answers said a limit was hit: the fleet holds
    await knows.on_throttle(Permit(time.monotonic()), 30.0, **limit)  # a long window
    redis_server.stop()
    redis_server.start()  # empty
    late = Permit(time.monotonic())
    await knows.on_throttle(late, None, **limit)  # finds its old connection dead: restarted...
    await knows.on_throttle(late, None, **limit)  # ...so this step connects, finds no key, seeds
    newcomer = RedisLimiter(redis_server.url, namespace="seed").pacer(KEY)
    assert await newcomer.acquire(_Deadline(1.0)) is None  # held past the deadline
    assert await newcomer.acquire(_Deadline(29.0)) is None  # by the window from before
    assert redis_server.keys() == [f"wink:limiter:seed:{KEY}"]


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def remaining(self) -> float:
        return self.seconds


@pytest.mark.parametrize("threads", [1, 20], ids=["one-after-another", "all-at-once"])
def test_twenty_sync_evaluations_share_one_redis_connection(
    threads: int, redis_server: RedisServer, emu: ProviderEmulator
) -> None:
    """Every `evaluate()` runs on the portal, where one Redis client serves them all. While
    the fleet is not pacing, a process only reads the shared pace (at most once per
    `refresh`), and the evaluations that ask at once share one read: twenty calls, one
    after another or from twenty threads at once, open one connection in all (they
    opened one per call before the portal, and one per concurrent reader after it), and
    leave no socket behind. One after another, they share one HTTP connection too."""

    def received() -> int:  # connections Redis accepted so far (this query's included)
        info = redis_server.command("INFO", "stats")
        found = re.search(rb"total_connections_received:(\d+)", info)
        assert found is not None
        return int(found.group(1))

    limiter = RedisLimiter(redis_server.url, namespace="sync", refresh=0.001)
    runner = adapter(emu, limiter)
    portal()  # started: its loop's own file descriptors are not what is counted
    gc.collect()
    before_fds, before = len(os.listdir("/proc/self/fd")), received()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        with ThreadPoolExecutor(threads) as pool:
            answers = pool.map(lambda _: runner.evaluate(HELLO, session=Session()), range(20))
            assert [answer.text for answer in answers] == ["ok"] * 20
        if threads == 1:
            assert emu.open_connections == 1
        runner.close()
        gc.collect()
    assert received() - before == 2  # the limiter's one, and the second INFO's own
    assert len(os.listdir("/proc/self/fd")) <= before_fds + 1  # the limiter's connection
