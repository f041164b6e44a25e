"""`wink demo` and `wink emulator`: parse arguments, call the public API, nothing more."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]

_PROVIDERS = ("openai", "openai-responses", "anthropic", "google")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wink", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run a small agent that shows the error contract, against the emulator"
    )
    demo.add_argument("--provider", choices=_PROVIDERS, default="anthropic")
    demo.add_argument(
        "--live",
        action="store_true",
        help="run against the real provider (needs OPENAI_API_KEY, ANTHROPIC_API_KEY or "
        "GEMINI_API_KEY)",
    )
    demo.add_argument("--model", default=None, help="model name (default: one per provider)")
    emulator = commands.add_parser("emulator", help="serve the provider emulator over HTTP")
    emulator.add_argument("--port", type=int, default=8099)
    emulator.add_argument("--host", default="127.0.0.1")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    if arguments.command == "emulator":
        from .testing import serve

        serve(port=arguments.port, host=arguments.host)
        return 0
    try:
        from .demo import run_demo
    except ImportError as error:  # an optional dependency of the demo is missing
        print(f"wink demo needs: pip install 'wink[all]' ({error})", file=sys.stderr)
        return 1
    return run_demo(provider=arguments.provider, live=arguments.live, model=arguments.model)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
