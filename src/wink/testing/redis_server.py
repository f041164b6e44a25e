"""`RedisServer`: a throwaway `redis-server` on a free loopback port, for fleet tests.

No persistence, a temporary directory, stopped on exit. It needs the `redis-server`
program (Debian: `apt-get install redis-server`), not redis-py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from types import TracebackType
from typing import Self

from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

__all__ = ["RedisServer", "redis_server_path"]


def redis_server_path() -> str | None:
    """Where `redis-server` is on PATH, or None."""
    return shutil.which("redis-server")


class RedisServer:
    """A `redis-server` child process on 127.0.0.1: `with RedisServer() as redis: redis.url`.

    `stop()` and `start()` again keep the port, so clients can reconnect to a server
    that was killed and restarted (empty: nothing is saved). `pause()` / `resume()`
    freeze it (SIGSTOP / SIGCONT), a server that has stopped answering.
    """

    def __init__(self, *, port: int = 0, startup_timeout: float = 10.0) -> None:
        path = redis_server_path()
        if path is None:
            raise FileNotFoundError(
                "redis-server is not on PATH (Debian/Ubuntu: apt-get install redis-server)"
            )
        self._path = path
        self._port = port
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"RedisServer(port={self._port}, {state})"

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("the server has not been started")
        return self._port

    @property
    def url(self) -> str:
        """`redis://127.0.0.1:PORT/0`."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> Self:
        """Start (or start again, on the same port) and wait until it answers PING."""
        if self.running:
            return self
        if not self._port:
            self._port = _free_port()
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="wink-redis-")
        self._process = subprocess.Popen(
            [
                self._path,
                "--port",
                str(self._port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._dir.name,
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for attempt in Retrying(
                stop=stop_after_delay(self._startup_timeout),
                wait=wait_fixed(0.02),
                retry=retry_if_exception_type(OSError),
                reraise=True,
            ):
                with attempt:
                    self._ping()
        except OSError as error:
            self.stop()
            raise RuntimeError(f"redis-server did not answer on port {self._port}") from error
        return self

    def stop(self) -> None:
        """Terminate the server (idempotent); what it held is gone."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)  # a paused server cannot exit
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def pause(self) -> None:
        """Freeze the server: connections stay open, nothing is answered."""
        if self._process is not None:
            os.kill(self._process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self._process is not None:
            os.kill(self._process.pid, signal.SIGCONT)

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def keys(self) -> list[str]:
        """Every key the server holds, sorted (what a test checks after a run)."""
        reply = self.command("KEYS", "*")
        if not reply.startswith(b"*"):
            raise ConnectionError(f"redis-server answered KEYS with {reply[:40]!r}")
        return sorted(line.decode() for line in reply.split(b"\r\n")[2::2] if line)

    def command(self, *args: str) -> bytes:
        """Send one command, return the raw RESP reply (no client library needed)."""
        parts = [f"*{len(args)}\r\n".encode()]
        for arg in args:
            data = arg.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        with socket.create_connection(("127.0.0.1", self.port), timeout=5.0) as connection:
            connection.sendall(b"".join(parts))
            connection.shutdown(socket.SHUT_WR)
            chunks: list[bytes] = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)

    def _ping(self) -> None:
        if self._process is None or self._process.poll() is not None:
            raise RuntimeError(f"redis-server exited (port {self._port} taken?)")
        with socket.create_connection(("127.0.0.1", self._port), timeout=1.0) as connection:
            connection.sendall(b"PING\r\n")
            if not connection.recv(64).startswith(b"+PONG"):
                raise ConnectionError("redis-server answered PING with something else")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
