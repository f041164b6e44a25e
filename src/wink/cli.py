"""The `wink` command: `wink demo` and `wink emulator`; argument parsing only.

The work is done by the public API (`wink.demo.run_demo`, `wink.testing.serve`); this
module turns arguments into those calls and failures into one line and an exit code.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

_PROVIDERS = ("openai", "openai-responses", "anthropic", "google")

_DESCRIPTION = """\
wink runs one prompt-with-tools loop over OpenAI, Anthropic and Google Gemini with one
error contract: a tool that fails goes back to the model as a failed result, and every
other failure raises a WinkError.

Try it without an API key or network: `wink demo` runs a small agent against wink's
built-in provider emulator and shows each failure on screen; `wink emulator` serves
that emulator over HTTP for any OpenAI, Anthropic or Gemini client."""

_EPILOG = """\
examples:
  wink demo                          the demo against the emulator (Anthropic wire format)
  wink demo --provider google        the same agent on the Gemini wire format
  wink demo --live --provider openai against the real OpenAI API (needs OPENAI_API_KEY)
  wink demo --stream                 the answer streamed, one stream broken and recovered
  wink demo --ask                    you approve (or not) the risky tool of the last step
  wink demo --batch                  five questions as one provider batch, with a tool round
  wink demo --batch --live --resume FILE   go on with a live batch saved as JSON
  wink emulator --port 8099          serve the emulator until Ctrl-C
  wink emulator --script turns.json  ... answering from a script of turns and faults"""

_DEMO = """\
Run a small weather agent. Its model calls a tool with invalid arguments, a tool that
raises and a tool that does not exist, gets throttled twice, and still answers: each
tool failure goes back to the model, the throttles are retried by wink. Then it wants to
send a storm alert, a tool that waits for a person: the demo's policy decides (or you,
with --ask), and the run resumes from its transcript saved as JSON.

With --batch, five questions go as one provider batch instead (about half the price,
answered within 24 hours): a tool round between two batches, a failed tool the model
reads, an item the provider refuses, the job saved as JSON and resumed.

By default the model is wink's provider emulator, scripted to do exactly that, speaking
the chosen provider's wire format; with --live it is the real provider."""

_EMULATOR = """\
Serve wink's provider emulator in the foreground until Ctrl-C. It speaks the OpenAI
(Chat Completions and Responses), Anthropic Messages and Gemini generateContent wire
formats, accepts any API key, and answers every request with a short text, or, with
--script, with the turns and faults of a script file, in order (the JSON format is in
wink's docs, Testing). Once it listens it prints one base URL per provider; an internal
error of the emulator is printed to stderr."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keep the description's paragraphs; each option's help states its default itself."""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in 0..65535 (0: any free port): {port}")
    return port


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="wink", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=_HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"wink {__version__}")
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, metavar="COMMAND"
    )
    demo = commands.add_parser(
        "demo",
        help="run a small agent that shows the error contract (no API key needed)",
        description=_DEMO,
        formatter_class=_HelpFormatter,
    )
    demo.add_argument(
        "--provider",
        choices=_PROVIDERS,
        default="anthropic",
        help="which provider's wire format (with --live: which provider) to use "
        "(default: %(default)s)",
    )
    demo.add_argument(
        "--live",
        action="store_true",
        help="run against the real provider instead of the emulator; needs its key in the "
        "environment, read as the adapter reads it (OPENAI_API_KEY; ANTHROPIC_API_KEY or "
        "ANTHROPIC_AUTH_TOKEN; GOOGLE_API_KEY, then GEMINI_API_KEY) (default: off, the emulator)",
    )
    demo.add_argument(
        "--stream",
        action="store_true",
        help="stream the answer: tokens as they arrive, and (on the emulator) a stream "
        "that breaks mid-answer and is sent again (default: off, evaluate)",
    )
    demo.add_argument(
        "--ask",
        action="store_true",
        help="in the last step, ask you at the terminal whether the risky tool may run "
        "(default: off, the demo's approval policy decides)",
    )
    demo.add_argument(
        "--batch",
        action="store_true",
        help="submit five questions as one batch of the provider's Batch API, run their "
        "tool round, read each item's result or error; not with --stream or --ask "
        "(default: off, evaluate)",
    )
    demo.add_argument(
        "--resume",
        metavar="FILE",
        default=None,
        help="with --batch --live: go on with the batch job saved in FILE by an earlier run "
        "(a live batch may take hours) (default: none, submit a new batch)",
    )
    demo.add_argument(
        "--model",
        default=None,
        help="model name (default: one per provider: gpt-4.1-mini, claude-sonnet-4-6, "
        "gemini-2.5-flash)",
    )
    demo.set_defaults(refuse=demo.error)
    emulator = commands.add_parser(
        "emulator",
        help="serve the provider emulator over HTTP until Ctrl-C",
        description=_EMULATOR,
        formatter_class=_HelpFormatter,
    )
    emulator.add_argument(
        "--port",
        type=_port,
        default=8099,
        help="TCP port to listen on; 0 picks a free one (default: %(default)s)",
    )
    emulator.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    emulator.add_argument(
        "--script",
        metavar="FILE",
        default=None,
        help="a JSON script file: the turns and faults to answer with, in order, and "
        "optionally a default turn and a rate limit (default: none, a short text to "
        "every request)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `wink` command; returns the process exit code.

    A reader that stops early (`wink demo | head`) ends the command quietly, the way
    Python's documentation says to: what is left to print goes to /dev/null, exit code 1.
    """
    try:
        return _run(argv)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the flush at exit must not fail again
        return 1


def _run(argv: Sequence[str] | None) -> int:
    arguments = _parser().parse_args(argv)
    if arguments.command == "demo":
        problem = _demo_problem(arguments)
        if problem is not None:
            arguments.refuse(problem)  # `wink demo`'s usage and the problem; exits with 2
    if arguments.command == "emulator":
        return _serve(arguments.host, arguments.port, arguments.script)
    from .demo import run_demo

    return run_demo(
        provider=arguments.provider,
        live=arguments.live,
        model=arguments.model,
        stream=arguments.stream,
        ask=arguments.ask,
        batch=arguments.batch,
        resume=arguments.resume,
    )


def _demo_problem(arguments: argparse.Namespace) -> str | None:
    """What is wrong with a combination of `wink demo` options, if anything."""
    if arguments.batch and (arguments.stream or arguments.ask):
        return (
            "--batch cannot be combined with --stream or --ask (a batch is never "
            "streamed, and its items do not stop to ask a person)"
        )
    if arguments.resume is not None and not (arguments.batch and arguments.live):
        return (
            "--resume needs --batch --live (the emulator's batches end with "
            "the demo that made them)"
        )
    return None


def _serve(host: str, port: int, script_file: str | None) -> int:
    from .testing import ScriptFileError, load_script, serve

    try:
        script = None if script_file is None else load_script(script_file)
    except ScriptFileError as error:
        print(f"wink emulator: {error}", file=sys.stderr)
        return 1
    try:
        serve(port=port, host=host, script=script)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            problem = (
                f"port {port} on {host} is already in use; stop the program using it, "
                "or choose another port with --port (--port 0 picks a free one)"
            )
        else:
            problem = f"cannot listen on {host}:{port}: {error.strerror or error}"
        print(f"wink emulator: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
