"""The options of `MCPServerStdio` and `MCPServerHTTP`, checked where they are given: a
wrong type is an `InvalidArgumentError`, a value that cannot be used a
`ConfigurationError`; a secret (an env value, a header value) is never quoted."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import cast
from urllib.parse import urlsplit, urlunsplit

from ..core.foundation.checks import kind_of
from ..core.foundation.errors import ConfigurationError, InvalidArgumentError

__all__ = [
    "ToolFilter",
    "check_prefix",
    "check_string_map",
    "check_strings",
    "check_text",
    "check_timeout",
    "check_tool_filter",
    "check_url",
    "shown_url",
    "url_secrets",
]

ToolFilter = Callable[[str], bool] | Collection[str]
"""Which of a server's tools to offer: their names as the server lists them, or a
function of the name that says yes or no."""

_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,31}$")


def check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string, got {kind_of(value)}", argument=what)
    if not value.strip():
        raise ConfigurationError(f"{what} must not be empty", option=what)
    return value


def check_strings(values: object, what: str) -> tuple[str, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InvalidArgumentError(
            f"{what} must be a list of strings, got {kind_of(values)}", argument=what
        )
    items = tuple(cast(Sequence[object], values))
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgumentError(
                f"{what} must be a list of strings, got an item {kind_of(item)}", argument=what
            )
    return cast(tuple[str, ...], items)


def check_string_map(values: object, what: str) -> dict[str, str]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise InvalidArgumentError(
            f"{what} must be a mapping of strings to strings, got {kind_of(values)}",
            argument=what,
        )
    checked: dict[str, str] = {}
    for key, value in cast(Mapping[object, object], values).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError(  # the key is named, the value never shown
                f"{what} must map strings to strings; the entry {key!r} does not"
                if isinstance(key, str)
                else f"{what} must map strings to strings, got a key {kind_of(key)}",
                argument=what,
            )
        checked[key] = value
    return checked


def check_prefix(prefix: object) -> str | None:
    if prefix is None:
        return None
    if not isinstance(prefix, str):
        raise InvalidArgumentError(
            f"prefix must be a string, got {kind_of(prefix)}", argument="prefix"
        )
    if not _PREFIX.fullmatch(prefix):
        raise ConfigurationError(
            f"prefix {prefix!r} must be 1-32 letters, digits, '_' or '-', starting with a "
            "letter or '_' (it begins every tool name the model sees)",
            option="prefix",
        )
    return prefix


def check_tool_filter(value: object) -> ToolFilter | None:
    if value is None or callable(value):
        return cast(ToolFilter | None, value)
    if isinstance(value, str | bytes) or not isinstance(value, Collection):
        raise InvalidArgumentError(
            "tool_filter must be a collection of tool names or a function of a name, got "
            f"{kind_of(value)}",
            argument="tool_filter",
        )
    names = frozenset(cast(Collection[object], value))
    if not all(isinstance(name, str) for name in names):
        raise InvalidArgumentError("tool_filter names must be strings", argument="tool_filter")
    return cast(frozenset[str], names)


def check_timeout(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgumentError(
            f"{what} must be a number of seconds, got {kind_of(value)}", argument=what
        )
    if not 0 < value < float("inf"):
        raise ConfigurationError(
            f"{what} must be a positive number of seconds, got {value!r}", option=what
        )
    return float(value)


def check_url(value: object) -> str:
    url = check_text(value, "url").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"url must be an http:// or https:// URL, got {shown_url(url)!r}", option="url"
        )
    return url


def shown_url(url: str) -> str:
    """`url` without what may be a secret in it: user info, the query's values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<not a URL>"
    host = parts.netloc.rpartition("@")[2]
    query = "&".join(f"{pair.partition('=')[0]}=***" for pair in parts.query.split("&") if pair)
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def url_secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    found = [parts.password or "", parts.username or ""]
    found += [pair.partition("=")[2] for pair in parts.query.split("&") if pair]
    return [value for value in found if value]
