"""Emulator throughput: `python tests/testing/bench_emulator.py [requests] [concurrency] [clients]`.

The emulator runs alone in a child process (its own GIL). `clients` further processes
each drive it with one keep-alive `httpx2.AsyncClient` and `concurrency / clients`
concurrent OpenAI Chat requests. Reported: requests per second of wall time, and the
emulator's own CPU time per request (requests per second one fully used core sustains).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import time
from multiprocessing.connection import Connection

import httpx2

BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def _serve(conn: Connection) -> None:
    from wink.testing import ProviderEmulator, Turn

    with ProviderEmulator(default_turn=Turn.text("It is sunny.")) as emu:
        conn.send(emu.port)
        conn.recv()  # clients warmed up
        before = os.times()
        conn.recv()  # measured run done
        after = os.times()
        conn.send((after.user - before.user) + (after.system - before.system))


async def _drive(port: int, total: int, concurrency: int, conn: Connection) -> None:
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    async with httpx2.AsyncClient(limits=limits, timeout=30) as client:
        remaining = 0

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                response = await client.post(url, json=BODY, headers={"authorization": "Bearer k"})
                assert response.status_code == 200, response.text

        remaining = concurrency * 20
        await asyncio.gather(*(worker() for _ in range(concurrency)))  # open the pool
        conn.send("warm")
        conn.recv()  # start together
        remaining = total
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        conn.send("done")


def _client(port: int, total: int, concurrency: int, conn: Connection) -> None:
    asyncio.run(_drive(port, total, concurrency, conn))


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    server, server_end = multiprocessing.Pipe()
    multiprocessing.Process(target=_serve, args=(server_end,), daemon=True).start()
    port = server.recv()
    pipes: list[Connection] = []
    for _ in range(clients):
        mine, theirs = multiprocessing.Pipe()
        args = (port, total // clients, concurrency // clients, theirs)
        multiprocessing.Process(target=_client, args=args, daemon=True).start()
        pipes.append(mine)
    for pipe in pipes:
        pipe.recv()
    server.send("warm")
    start = time.perf_counter()
    for pipe in pipes:
        pipe.send("go")
    for pipe in pipes:
        pipe.recv()
    elapsed = time.perf_counter() - start
    server.send("done")
    busy = server.recv()
    done = (total // clients) * clients
    print(f"{done} requests, concurrency {concurrency}, {clients} client process(es)")
    print(f"  wall: {elapsed:.2f}s = {done / elapsed:,.0f} req/s end to end")
    print(f"  emulator CPU: {busy:.2f}s = {done / busy:,.0f} req/s per fully used core")


if __name__ == "__main__":
    main()
