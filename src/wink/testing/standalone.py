"""`serve()`: the emulator in the foreground, for `wink emulator --port 8099`."""

from __future__ import annotations

import sys
from typing import TextIO

from .emulator import ProviderEmulator
from .faults import RateLimit
from .server import serve_forever
from .turns import Turn

__all__ = ["DEFAULT_TEXT", "serve"]

DEFAULT_TEXT = "Hello from the wink provider emulator."


def serve(
    port: int,
    host: str = "127.0.0.1",
    *,
    text: str = DEFAULT_TEXT,
    latency: float = 0.0,
    rate_limit: RateLimit | None = None,
    out: TextIO | None = None,
) -> None:
    """Serve until Ctrl-C, answering every request with a final text turn (`text`).

    Prints one base URL per provider once the port is bound.
    """
    emulator = ProviderEmulator(
        host=host,
        default_turn=Turn.text(text),
        latency=latency,
        rate_limit=rate_limit,
        record_limit=1000,
    )
    stream = out if out is not None else sys.stdout

    def announce(bound: int) -> None:
        root = f"http://{host}:{bound}"
        stream.write(
            f"wink provider emulator listening on {root} (Ctrl-C to stop)\n"
            f"  openai            base_url={root}/v1\n"
            f"  openai-responses  base_url={root}/v1\n"
            f"  anthropic         base_url={root}\n"
            f"  google            base_url={root}  (api_version v1 or v1beta)\n"
        )
        stream.flush()

    serve_forever(emulator.handle, host, port, announce)
