"""Value formats the providers use on the wire: ids, durations, timestamps, JSON."""

from __future__ import annotations

import json
import math
import random
import string
from datetime import UTC, datetime
from typing import Any, cast

__all__ = [
    "IdSource",
    "as_list",
    "as_object",
    "as_str",
    "dump",
    "ceil_ms",
    "go_duration",
    "proto_duration",
    "rfc3339",
    "seconds_text",
    "split",
]

_ALNUM = string.ascii_letters + string.digits


def ceil_ms(seconds: float) -> int:
    """Whole milliseconds, rounded up so a client that waits that long is never early."""
    return max(0, math.ceil(round(seconds * 1000.0, 6)))


def go_duration(seconds: float) -> str:
    """Go's `time.Duration.String()` ("0s", "120ms", "1.235s", "6m0s") at ms resolution."""
    ms = ceil_ms(seconds)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = seconds_text(rest / 1000.0)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def proto_duration(seconds: float) -> str:
    """A protobuf JSON Duration ("42s", "1.500s"): 0, 3, 6 or 9 fractional digits."""
    nanos = round(seconds * 1e9)
    whole, frac = divmod(nanos, 1_000_000_000)
    if frac == 0:
        return f"{whole}s"
    if frac % 1_000_000 == 0:
        return f"{whole}.{frac // 1_000_000:03d}s"
    if frac % 1000 == 0:
        return f"{whole}.{frac // 1000:06d}s"
    return f"{whole}.{frac:09d}s"


def seconds_text(seconds: float) -> str:
    """Seconds as a header value: "1", "1.5", "0.099" (millisecond precision)."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def rfc3339(epoch: float) -> str:
    """UTC RFC 3339 as Anthropic sends it ("2025-11-04T22:50:55Z"); ms only when needed."""
    moment = datetime.fromtimestamp(epoch, UTC)
    if moment.microsecond == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def dump(value: Any) -> bytes:
    """Compact UTF-8 JSON, as the providers send it (a lone surrogate, which UTF-8 cannot
    carry, escaped: what a provider's JSON encoder sends for one)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()


def as_object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (request bodies are untrusted)."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` if it is a JSON array, else an empty one."""
    return cast(list[Any], value) if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """`value` if it is a string, else None."""
    return value if isinstance(value, str) else None


class IdSource:
    """Generates provider-looking ids; seed it for reproducible bodies."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def alnum(self, length: int) -> str:
        return "".join(self._rng.choices(_ALNUM, k=length))

    def hex(self, length: int) -> str:
        return f"{self._rng.getrandbits(length * 4):0{length}x}"

    def openai_completion(self) -> str:
        return "chatcmpl-" + self.alnum(29)

    def openai_call(self) -> str:
        return "call_" + self.alnum(24)

    def openai_request(self) -> str:
        return "req_" + self.hex(32)

    def response(self) -> str:
        return "resp_" + self.hex(48)

    def response_item(self, prefix: str) -> str:
        return f"{prefix}_" + self.hex(48)

    def fingerprint(self) -> str:
        return "fp_" + self.hex(10)

    def anthropic_message(self) -> str:
        return "msg_01" + self.alnum(22)

    def anthropic_tool_use(self) -> str:
        return "toolu_01" + self.alnum(22)

    def anthropic_request(self) -> str:
        return "req_011C" + self.alnum(20)

    def google_response(self) -> str:
        return self.alnum(23)

    def google_call(self) -> str:
        return "call-" + self.alnum(12)


def split(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (none for an empty text)."""
    return [text[start : start + size] for start in range(0, len(text), size)]
