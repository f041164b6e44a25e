"""When the emulator itself fails: a bug in it, or in the test's script callable.

Such a failure must never pass for a provider's. The request gets an answer no provider
sends and nothing retries (`INTERNAL_ERROR_STATUS`, with `INTERNAL_ERROR_HEADER` and a
body naming the exception), the script is left as it was, and the failure is kept until
it is reported: `ProviderEmulator.check()` (and so `close()` and a clean `with` exit)
raises `EmulatorInternalError` for it, and the `wink` pytest plugin makes the test
during which it happened fail at teardown. The log is process-wide so that an emulator a
test forgot to close, or closed while an exception was already on its way, still has
its failures reported.
"""

from __future__ import annotations

import itertools
import json
import threading
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..core.foundation.errors import WinkError
from .records import Provider
from .scripting import ScriptFailure
from .server import Reply
from .turns import ExpectationFailed

__all__ = [
    "INTERNAL_ERROR_HEADER",
    "INTERNAL_ERROR_STATUS",
    "LOG",
    "EmulatorInternalError",
    "InternalError",
    "InternalErrorLog",
    "InternalErrorSource",
    "internal_error_reply",
    "record_of",
]

INTERNAL_ERROR_STATUS = 418
"""A 4xx no provider sends, so its status tells it from any provider's answer, and one
neither wink nor the SDKs retry (a 5xx would be retried as an overloaded provider)."""
INTERNAL_ERROR_HEADER = "x-wink-emulator-error"

InternalErrorSource = Literal["emulator", "script", "expectation"]
"""Whose bug: the emulator's, the script callable's (it raised, or returned neither a
`Turn`, a `Fault` nor None), or the code under test's: a request did not carry the
parts or the history its turn expects (`Turn.expecting`, `Turn.expecting_history`)."""


@dataclass(frozen=True, slots=True)
class InternalError:
    """One request the emulator could not answer: `error` is the exception's repr,
    `traceback` where it was raised."""

    number: int
    provider: Provider | None
    method: str
    path: str
    source: InternalErrorSource
    error: str
    traceback: str

    @property
    def message(self) -> str:
        """One line: what failed, on which request, and that no turn was used up."""
        where = f"request #{self.number} ({self.method} {self.path})"
        if self.source == "expectation":
            return (
                f"wink emulator: {where} did not carry what its turn expects: "
                f"{self.error}. The request used up no turn."
            )
        if self.source == "script":
            return (
                f"wink emulator internal error: the script callable failed on {where}: "
                f"{self.error}. Fix the script; the request used up no turn."
            )
        return (
            f"wink emulator internal error: {self.error} while answering {where}. This is "
            "a bug in the emulator, not a provider fault; the request used up no turn."
        )


class EmulatorInternalError(WinkError, RuntimeError):
    """The emulator failed to answer requests (a bug in it or in the script callable).

    Raised by `ProviderEmulator.check()`, `close()` and a clean `with` exit; `errors` are
    the failures, in order, each with its traceback.
    """

    def __init__(self, errors: Sequence[InternalError]) -> None:
        self.errors = tuple(errors)
        super().__init__(
            "\n\n".join(f"{error.message}\n{error.traceback.rstrip()}" for error in self.errors)
        )


def record_of(
    exc: Exception, number: int, provider: Provider | None, method: str, path: str
) -> InternalError:
    """The record of `exc`, raised while answering request `number`."""
    if isinstance(exc, ExpectationFailed):
        cause, text, source = exc, str(exc), "expectation"
    elif isinstance(exc, ScriptFailure):  # the callable's exception, or what it returned
        cause = exc.__cause__ or exc
        text = repr(cause) if exc.__cause__ else str(exc)
        source: InternalErrorSource = "script"
    else:
        cause, text, source = exc, repr(exc), "emulator"
    trace = "".join(traceback.format_exception(cause))
    return InternalError(number, provider, method, path, source, text, trace)


def internal_error_reply(error: InternalError) -> Reply:
    """The answer to the failed request: one JSON body every SDK reads the message of
    (OpenAI's and Gemini's `error.message`, Anthropic's `type: "error"` envelope)."""
    body = {
        "type": "error",
        "error": {
            "type": "wink_emulator_internal_error",
            "code": INTERNAL_ERROR_STATUS,
            "status": "WINK_EMULATOR_INTERNAL_ERROR",
            "message": error.message,
        },
    }
    headers = {"content-type": "application/json", INTERNAL_ERROR_HEADER: error.source}
    return Reply(INTERNAL_ERROR_STATUS, headers, json.dumps(body).encode())


class InternalErrorLog:
    """Internal errors not reported yet, of every emulator in the process, by owner."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owners = itertools.count(1)
        self._entries: list[tuple[int, InternalError]] = []

    def owner(self) -> int:
        """A token for one emulator's entries."""
        return next(self._owners)

    def add(self, owner: int, error: InternalError) -> None:
        with self._lock:
            self._entries.append((owner, error))

    def pending(self, owner: int) -> tuple[InternalError, ...]:
        with self._lock:
            return tuple(error for key, error in self._entries if key == owner)

    def take(self, owner: int | None = None) -> tuple[InternalError, ...]:
        """Remove and return the entries of `owner` (None: of every emulator)."""
        with self._lock:
            taken = [error for key, error in self._entries if owner in (None, key)]
            self._entries = [entry for entry in self._entries if owner not in (None, entry[0])]
        return tuple(taken)


LOG = InternalErrorLog()
