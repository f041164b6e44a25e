"""The emulated prompt cache: a second request that repeats a cached prefix reads it.

Each wire says which prefixes of a request its provider caches (`cache_prefixes`):
Anthropic the ones ending at a `cache_control` breakpoint, OpenAI and Gemini every
prefix ending at a message (they cache on their own). A prefix shorter than the
providers' minimum (1024 tokens, estimated at four characters a token) is never cached,
as on the real APIs. The answer to a request then reports the longest cached prefix as
read and what it adds up to its longest prefix as written (docs/testing.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .turns import Turn

__all__ = ["MIN_CACHED_TOKENS", "CachePrefix", "PromptCache", "prefixes"]

MIN_CACHED_TOKENS = 1024
"""The shortest prefix a provider caches (Claude Sonnet, OpenAI, Gemini 2.5 Flash)."""
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class CachePrefix:
    """A prefix of a request's prompt: its digest and its estimated token count."""

    key: str
    tokens: int


def prefixes(items: Iterable[tuple[Any, bool]]) -> tuple[CachePrefix, ...]:
    """The prefixes of a prompt given as (item, ends a prefix) in order: a running
    digest of each item's JSON, and its length in estimated tokens."""
    digest = hashlib.sha256()
    characters = 0
    found: list[CachePrefix] = []
    for item, ends in items:
        text = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
        characters += len(text)
        if ends:
            found.append(CachePrefix(digest.hexdigest(), -(-characters // _CHARS_PER_TOKEN)))
    return tuple(found)


class PromptCache:
    """The prefixes cached so far (for the emulator's lifetime, or until `clear`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: set[str] = set()

    def use(self, found: tuple[CachePrefix, ...]) -> tuple[int, int]:
        """(tokens read, tokens written) for a request with these prefixes; they are
        cached from now on."""
        eligible = [prefix for prefix in found if prefix.tokens >= MIN_CACHED_TOKENS]
        if not eligible:
            return 0, 0
        with self._lock:
            read = max((p.tokens for p in eligible if p.key in self._cached), default=0)
            longest = max(eligible, key=lambda prefix: prefix.tokens)
            written = 0 if longest.key in self._cached else longest.tokens - read
            self._cached.update(prefix.key for prefix in eligible)
        return read, written

    def counted(self, turn: Turn, found: tuple[CachePrefix, ...]) -> Turn:
        """`turn` with what this request read from the cache and wrote to it in its usage
        (added to `input_tokens`); a turn that gives its own cache counts keeps them."""
        usage = turn.usage
        if usage.cached_tokens or usage.cache_write_tokens:
            return turn
        read, written = self.use(found)
        if not read and not written:
            return turn
        counted = dataclasses.replace(
            usage,
            input_tokens=usage.input_tokens + read + written,
            cached_tokens=read,
            cache_write_tokens=written,
        )
        return dataclasses.replace(turn, usage=counted)

    def clear(self) -> None:
        with self._lock:
            self._cached.clear()
