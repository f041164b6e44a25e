"""`serve()`: the emulator in the foreground, for `wink emulator --port 8099`."""

from __future__ import annotations

import sys
from typing import TextIO

from .emulator import ProviderEmulator
from .faults import RateLimit
from .internal import EmulatorInternalError
from .script_file import EmulatorScript
from .server import RawRequest, Reply, serve_forever
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
    script: EmulatorScript | None = None,
    out: TextIO | None = None,
    errors: TextIO | None = None,
) -> None:
    """Serve until Ctrl-C. Without a `script`, every request gets a final text turn
    (`text`); with one, its turns and faults in order, then its default turn (without
    one, a 400 saying the script is exhausted). `rate_limit` overrides the script's.

    Prints one base URL per provider once the port is bound (to `out`), and each
    internal error of the emulator as it happens (to `errors`, stderr by default).
    """
    if script is None:
        script = EmulatorScript(default_turn=Turn.text(text))
    emulator = ProviderEmulator(
        script.items,
        host=host,
        default_turn=script.default_turn,
        latency=latency,
        rate_limit=rate_limit if rate_limit is not None else script.rate_limit,
        record_limit=1000,
    )
    stream = out if out is not None else sys.stdout
    problems = errors if errors is not None else sys.stderr

    def handle(raw: RawRequest) -> Reply:
        reply = emulator.handle(raw)
        try:
            emulator.check()
        except EmulatorInternalError as error:  # nobody else would hear of it
            problems.write(f"{error}\n")
            problems.flush()
        return reply

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

    serve_forever(handle, host, port, announce)
