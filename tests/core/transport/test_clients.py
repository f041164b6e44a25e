"""The client pool (`wink.core.transport.clients`): one async client per event loop, the
portal's serving every sync call until `close()` (or exit); a caller's client used, never
closed.

First the pool alone, with stand-in clients; then through adapters and the real SDKs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers.adapters import KEY, MODELS, PROVIDERS, callers_client, make_adapter
from tests.helpers.prompts import HELLO, make_prompt
from wink import (
    ConfigurationError,
    FallbackAdapter,
    PromptEvaluationError,
    Session,
    create_adapter,
)
from wink.core.foundation.runtime import portal
from wink.core.transport.clients import ClientPool, close_client
from wink.testing import Fault, ProviderEmulator, Turn
from wink.testing.scripted import ScriptedAdapter, final


class SyncClient:
    """A stand-in sync SDK client: `close()` is a plain call."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class AsyncClient:
    """A stand-in async SDK client: `aclose()` must be awaited."""

    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


class Maker:
    """The pool's `make`: records every client it builds."""

    def __init__(self) -> None:
        self.made: list[tuple[bool, Any]] = []

    def __call__(self, sync: bool) -> Any:
        client = SyncClient() if sync else AsyncClient()
        self.made.append((sync, client))
        return client


async def get_twice(pool: ClientPool, *, blocking: bool) -> tuple[Any, Any]:
    return pool.get(blocking=blocking), pool.get(blocking=blocking)


# --- the pool on its own


def test_sync_calls_share_the_portals_one_async_client_until_close() -> None:
    maker = Maker()
    pool = ClientPool(maker)
    (first, sync), (again, _) = portal().call(get_twice(pool, blocking=True))
    (later, _), _ = portal().call(get_twice(pool, blocking=True))  # another evaluate() call
    assert sync is False
    assert first is again is later
    assert maker.made == [(False, first)]
    assert pool.held(sync=True) is first
    pool.close_sync()
    assert first.closed
    assert pool.open_clients == 0


def test_the_portals_client_of_a_pool_dropped_unclosed_is_closed_on_the_portal() -> None:
    import gc
    import time

    maker = Maker()
    pool = ClientPool(maker)
    (client, _), _ = portal().call(get_twice(pool, blocking=True))
    del pool
    gc.collect()
    deadline = time.monotonic() + 5
    while not client.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.closed


def test_each_event_loop_gets_its_own_async_client() -> None:
    maker = Maker()
    pool = ClientPool(maker)
    (first, sync), (again, _) = asyncio.run(get_twice(pool, blocking=False))
    (other, _), _ = asyncio.run(get_twice(pool, blocking=False))
    assert sync is False
    assert first is again  # one per loop
    assert other is not first  # the first belongs to a closed loop
    assert [sync for sync, _ in maker.made] == [False, False]


def test_an_async_evaluation_inside_a_sync_one_shares_the_portals_client() -> None:
    """An async tool awaiting a sub-evaluation under `evaluate()` runs on the portal too:
    the same client, kept for the next call."""
    maker = Maker()
    pool = ClientPool(maker)

    async def evaluate_like() -> tuple[Any, Any]:
        (blocking, _), (spawned, _) = pool.get(blocking=True), pool.get(blocking=False)
        return blocking, spawned

    blocking, spawned = portal().call(evaluate_like())
    assert blocking is spawned
    assert not blocking.closed
    assert pool.open_clients == 1
    pool.close_sync()


def test_an_async_client_on_the_callers_loop_waits_for_aclose() -> None:
    maker = Maker()
    pool = ClientPool(maker)

    async def use_then_close() -> tuple[bool, bool]:
        client, _ = pool.get(blocking=False)
        assert pool.held(sync=False) is client
        open_before = not client.closed
        await pool.aclose()
        return open_before, client.closed

    assert asyncio.run(use_then_close()) == (True, True)
    assert pool.open_clients == 0


def test_prepare_makes_the_client_the_first_request_then_uses() -> None:
    maker = Maker()
    pool = ClientPool(maker)

    async def prepare_then_get() -> tuple[Any, Any]:
        pool.prepare(sync=False)
        made = pool.held(sync=False)
        return made, pool.get(blocking=False)[0]

    made, used = asyncio.run(prepare_then_get())
    assert made is not None
    assert used is made
    pool.prepare(sync=True)  # the portal's client
    assert pool.held(sync=True) is maker.made[-1][1]
    assert [sync for sync, _ in maker.made] == [False, False]
    pool.close_sync()


def test_prepare_leaves_a_client_that_cannot_be_made_to_the_first_request() -> None:
    def refuse(sync: bool) -> Any:
        raise ConfigurationError("no API key for test: set TEST_KEY", option="api_key")

    pool = ClientPool(refuse)
    pool.prepare(sync=True)  # nothing to report yet: no request was asked for
    with pytest.raises(ConfigurationError, match="TEST_KEY"):
        portal().call(get_twice(pool, blocking=True))


def test_a_given_sync_client_serves_every_call_and_is_never_made_or_closed() -> None:
    maker = Maker()
    given = SyncClient()
    pool = ClientPool(maker, given=given)
    blocking, _ = portal().call(get_twice(pool, blocking=True))
    on_a_loop, _ = asyncio.run(get_twice(pool, blocking=False))
    assert blocking == (given, True)
    assert on_a_loop == (given, True)  # the transport runs it off the loop
    asyncio.run(pool.aclose())
    assert maker.made == []
    assert not given.closed

    pool.prepare(sync=False)
    assert maker.made == []


def test_a_given_async_client_is_refused_to_a_sync_call_with_the_reason() -> None:
    given = AsyncClient()
    pool = ClientPool(Maker(), given=given, given_is_async=True, describe="test client")
    with pytest.raises(ConfigurationError, match="async test client") as info:
        portal().call(get_twice(pool, blocking=True))
    assert info.value.option == "client"
    assert "evaluate_async()" in str(info.value)
    got, _ = asyncio.run(get_twice(pool, blocking=False))
    assert got == (given, False)


async def test_close_client_awaits_aclose_calls_close_and_skips_neither() -> None:
    asynchronous, synchronous = AsyncClient(), SyncClient()

    class AwaitableClose:
        closed = False

        async def close(self) -> None:
            AwaitableClose.closed = True

    for client in (asynchronous, synchronous, AwaitableClose(), object()):
        await close_client(client)
    assert asynchronous.closed
    assert synchronous.closed
    assert AwaitableClose.closed


# --- through an adapter


async def test_adapter_closes_the_clients_it_created() -> None:
    closed: list[str] = []

    class Client:
        async def close(self) -> None:
            closed.append("async")

    adapter = ScriptedAdapter([final("one")])
    adapter.api.make_client = lambda *, sync: Client()  # type: ignore[method-assign]
    async with adapter:
        await adapter.evaluate_async(make_prompt(), session=Session())
    assert closed == ["async"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_entering_an_adapter_opens_its_client_before_the_first_request(
    provider: str, ok_emulator: ProviderEmulator
) -> None:
    adapter = make_adapter(provider, ok_emulator)
    async with adapter:
        opened = adapter._clients.held(sync=False)
        assert opened is not None
        assert (await adapter.evaluate_async(HELLO, session=Session())).text == "ok"
        assert adapter._clients.held(sync=False) is opened  # the request used it
    assert adapter._clients.open_clients == 0
    with adapter:
        assert adapter._clients.held(sync=True) is not None
        assert adapter.evaluate(HELLO, session=Session()).text == "ok"
    assert adapter._clients.open_clients == 0


async def test_entering_a_fallback_opens_every_adapters_client(
    ok_emulator: ProviderEmulator,
) -> None:
    first, second = (
        create_adapter(f"{p}:{MODELS[p]}", base_url=ok_emulator.base_url(p), api_key=KEY)
        for p in ("openai", "anthropic")
    )
    async with FallbackAdapter([first, second]):
        assert first._clients.held(sync=False) is not None
        assert second._clients.held(sync=False) is not None
    assert first._clients.open_clients == second._clients.open_clients == 0


async def test_a_key_gone_after_the_adapter_was_made_fails_its_request_as_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A `ConfigurationError`, not wrapped into `PromptEvaluationError(phase="request")`:
    `except ConfigurationError` catches it, at the first request as at construction."""
    monkeypatch.setenv("OPENAI_API_KEY", "set-when-built")
    adapter = create_adapter("openai:gpt-4.1", base_url=None)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY") as info:
        await adapter.evaluate_async(HELLO, session=Session())
    await adapter.aclose()
    assert type(info.value) is ConfigurationError
    assert info.value.option == "api_key"


def test_a_client_passed_in_is_left_open() -> None:
    class Client:
        def close(self) -> None:
            raise AssertionError("the caller's client must not be closed")

    with ScriptedAdapter([final("one")], client=Client()) as adapter:
        assert adapter.evaluate(make_prompt(), session=Session()).text == "one"


def test_evaluate_inside_a_running_loop_closes_what_it_opened(
    ok_emulator: ProviderEmulator,
) -> None:
    adapter = create_adapter(
        "anthropic:claude-sonnet-4-6", base_url=ok_emulator.base_url("anthropic"), api_key=KEY
    )

    async def notebook_cell() -> str | None:
        return adapter.evaluate(HELLO, session=Session()).text  # Jupyter-style call

    assert asyncio.run(notebook_cell()) == "ok"
    assert adapter._clients.open_clients == 1  # the portal's only: none for the cell's loop
    adapter.close()
    assert adapter._clients.open_clients == 0


# --- a caller's SDK client


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_callers_sync_client_serves_evaluate_async_without_blocking_the_loop(
    provider: str, emulator: ProviderEmulator
) -> None:
    mine = callers_client(provider, emulator)
    emulator.set_script(lambda request: Turn.text("ok"))
    emulator.inject(Fault.latency(0.2))
    adapter = create_adapter(f"{provider}:{MODELS[provider]}", client=mine)
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def main() -> str | None:
        beat = asyncio.create_task(heartbeat())
        response = await adapter.evaluate_async(make_prompt(), session=Session())
        beat.cancel()
        return response.text

    assert asyncio.run(main()) == "ok"
    assert ticks >= 5  # the loop kept running while the sync SDK call was in flight
    mine.close()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_callers_async_client_is_refused_by_sync_evaluate_with_the_reason(
    provider: str, emulator: ProviderEmulator
) -> None:
    mine = callers_client(provider, emulator, asynchronous=True)
    emulator.set_script(lambda request: Turn.text("ok"))
    adapter = create_adapter(f"{provider}:{MODELS[provider]}", client=mine)
    with pytest.raises(PromptEvaluationError, match="evaluate_async") as info:
        adapter.evaluate(make_prompt(), session=Session())
    assert info.value.phase == "request"
    assert emulator.requests == []  # nothing was sent

    async def twice() -> list[str | None]:  # the same client, on its own loop, works
        first = await adapter.evaluate_async(make_prompt(), session=Session())
        second = await adapter.evaluate_async(make_prompt(), session=Session())
        await mine.close()
        return [first.text, second.text]

    assert asyncio.run(twice()) == ["ok", "ok"]
