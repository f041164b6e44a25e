"""How the emulated models sign their thinking, and what they remember of it.

Signatures, encrypted reasoning and thought signatures are opaque tokens bound to what
they sign, so the emulator can tell an intact echo from an altered one; the ledger keeps
what a follow-up must carry back (thinking before a tool round, the item after a
reasoning item, a paused turn) so the emulator refuses a follow-up that drops it, with
the 400 the real API gives.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
from collections import OrderedDict
from typing import Any

__all__ = ["ReasoningLedger", "intact", "opens", "seal"]

_MARK = b"wink-emulator/1\x00"
_PREFIX = base64.b64encode(_MARK).decode()[:20]  # the same in both base64 alphabets
_DIGEST = 32


def seal(text: str) -> str:
    """An opaque token bound to `text`, base64 like the providers' own."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return base64.b64encode(_MARK + digest).decode()


def _unseal(token: str) -> bytes | None:
    """The digest in one of the emulator's tokens; None when `token` is not one, or is
    one that was altered. Both base64 alphabets are read (an SDK may re-encode)."""
    text = token.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw.startswith(_MARK) or len(raw) != len(_MARK) + _DIGEST:
        return None
    return raw[len(_MARK) :]


def intact(token: object) -> bool | None:
    """True for an intact token of the emulator, False for an altered one, None for a
    token the emulator did not make (a recording's: not its to judge)."""
    if not isinstance(token, str) or not token.startswith(_PREFIX):
        return None
    return _unseal(token) is not None


def opens(token: object, text: object) -> bool | None:
    """Whether the emulator's `token` was made for `text` (None: not the emulator's)."""
    if intact(token) is None:
        return None
    if not isinstance(text, str):
        return False
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return _unseal(str(token)) == expected


class ReasoningLedger:
    """What the emulated models produced that a follow-up must carry back.

    Bounded (the oldest entries go first), thread-safe: the server answers requests from
    several threads.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._entries: OrderedDict[str, Any] = OrderedDict()

    def remember(self, key: str, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)

    def recall(self, key: str) -> Any:
        """What was remembered under `key`, or None."""
        with self._lock:
            return self._entries.get(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
