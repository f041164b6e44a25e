"""A script in a JSON file: turns and faults in order, a default turn, a rate limit.

It lets a test in another language or process script `wink emulator --script FILE`;
the format (docs/testing.md) mirrors the Python constructors: a turn entry is keyed by
what it is (`text`, `tool_calls`, `json`, `refusal`, `paused`), a fault entry is
`{"fault": kind, ...}` with the keyword arguments of `Fault.<kind>(...)`. Every problem
is a `ScriptFileError` naming the file and the entry at fault.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from ..core.foundation.checks import an_instance, kind_of
from ..core.foundation.errors import ConfigurationError, InvalidArgumentError, WinkError
from .builtin import BuiltinRun, EmulatedCitation, EmulatedCodeRun, EmulatedFetch, EmulatedSearch
from .faults import Fault, FaultKind, RateLimit
from .scripting import ScriptItem, checked_items, script_items
from .turns import EmulatedThinking, EmulatedToolCall, Finish, Turn, UsageFields

if TYPE_CHECKING:
    from .emulator import ProviderEmulator

__all__ = ["EmulatorScript", "ScriptFileError", "load_script", "parse_script"]

_TOP = ("script", "default_turn", "rate_limit")
_USAGE = (
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "reasoning_tokens",
    "cache_write_tokens",
)
# A turn entry's kind -> the other keys it may have (besides the usage counts).
_TURNS: dict[str, tuple[str, ...]] = {
    "tool_calls": ("text", "thinking", "finish"),
    "json": ("finish",),
    "refusal": (),
    "paused": ("thinking",),
    "text": ("thinking", "finish", "ran", "citations"),
}
_T = TypeVar("_T")
_FAULTS = tuple(kind for kind in get_args(FaultKind) if callable(getattr(Fault, kind, None)))


class ScriptFileError(ConfigurationError):
    """A script file that cannot be read or does not describe a script.

    `path` is the file (None for a script given as data), `entry` where in it the
    problem is (`script[2]`, `script[0].tool_calls[1]`, `default_turn`, `rate_limit`;
    None for the file as a whole).
    """

    def __init__(self, problem: str, *, path: str | None, entry: str | None = None) -> None:
        where = ": ".join(part for part in (path, entry) if part)
        super().__init__(f"{where}: {problem}" if where else problem, option="script")
        self.path = path
        self.entry = entry


@dataclass(frozen=True, slots=True)
class EmulatorScript:
    """What a script file describes, ready for `ProviderEmulator`."""

    items: tuple[ScriptItem, ...] = ()
    default_turn: Turn | None = None
    rate_limit: RateLimit | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(checked_items(script_items(self.items))))
        if self.default_turn is not None:
            where = "EmulatorScript(default_turn=...)"
            an_instance(self.default_turn, Turn, where, "default_turn", "a Turn or None")
        if self.rate_limit is not None:
            where = "EmulatorScript(rate_limit=...)"
            an_instance(self.rate_limit, RateLimit, where, "rate_limit", "a RateLimit or None")

    def emulator(self) -> ProviderEmulator:
        """A `ProviderEmulator` (not started) answering from this script; for other
        settings, pass `items`, `default_turn` and `rate_limit` to one yourself."""
        from .emulator import ProviderEmulator

        return ProviderEmulator(
            self.items, default_turn=self.default_turn, rate_limit=self.rate_limit
        )


def load_script(path: str | os.PathLike[str]) -> EmulatorScript:
    """Read and check a script file (UTF-8 JSON)."""
    if not isinstance(cast(object, path), str | os.PathLike):
        raise InvalidArgumentError(
            f"load_script(path=...) takes a file path, got {kind_of(path)}", argument="path"
        )
    name = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, a NUL in the path
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ScriptFileError(f"cannot read the script file: {reason}", path=name) from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except ValueError as error:
        raise ScriptFileError(f"not valid JSON: {error}", path=name) from None
    return parse_script(data, path=name)


def parse_script(data: Any, *, path: str | None = None) -> EmulatorScript:
    """Check parsed JSON against the script format and build the script it describes;
    `path` names where it came from in the errors."""
    if not isinstance(cast(object, path), str | None):
        raise InvalidArgumentError(
            f"parse_script(path=...) takes a str or None, got {kind_of(path)}", argument="path"
        )
    top = _object(data, path, None, "a script file holds one JSON object")
    _known_keys(top, _TOP, path, None)
    entries = top.get("script", [])
    if not isinstance(entries, list):
        raise ScriptFileError("`script` must be a list of turns and faults", path=path)
    items = tuple(
        _item(entry, path, f"script[{index}]")
        for index, entry in enumerate(cast(list[Any], entries))
    )
    default = top.get("default_turn")
    default_turn = None if default is None else _turn(default, path, "default_turn")
    limit = top.get("rate_limit")
    rate_limit = None if limit is None else _rate_limit(limit, path)
    return EmulatorScript(items, default_turn, rate_limit)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"the key {repeated[0]!r} appears twice in one object")
    return dict(pairs)


def _item(entry: Any, path: str | None, where: str) -> ScriptItem:
    if isinstance(entry, dict) and "fault" in entry:
        return _fault(cast(dict[str, Any], entry), path, where)
    return _turn(entry, path, where)


def _turn(entry: Any, path: str | None, where: str) -> Turn:
    """A turn entry: its kind key, then only the keys that kind takes."""
    fields_ = _object(entry, path, where, "a turn or fault is a JSON object")
    if "fault" in fields_:
        problem = "the default turn must be a turn, not a fault"
        raise ScriptFileError(problem, path=path, entry=where)
    kinds = [kind for kind in _TURNS if kind in fields_ and kind != "text"]
    if len(kinds) > 1:
        problem = f"one entry is one turn: it cannot be both {kinds[0]!r} and {kinds[1]!r}"
        raise ScriptFileError(problem, path=path, entry=where)
    if not kinds and "text" not in fields_:
        choices = ", ".join(f"`{kind}`" for kind in (*_TURNS, "fault"))
        raise ScriptFileError(f"an entry needs one of {choices}", path=path, entry=where)
    kind = kinds[0] if kinds else "text"
    expectations = ("expect_parts", "expect_history")
    _known_keys(fields_, (kind, *_TURNS[kind], *_USAGE, *expectations), path, where)
    turn = _turn_of(kind, fields_, path, where)
    if "expect_parts" in fields_:
        parts = _lines(fields_["expect_parts"], path, f"{where}.expect_parts", "media types")
        turn = turn.expecting(*parts)
    if "expect_history" in fields_:
        lines = _lines(fields_["expect_history"], path, f"{where}.expect_history", "history lines")
        turn = turn.expecting_history(*lines)
    return turn


def _lines(value: Any, path: str | None, spot: str, what: str) -> list[str]:
    """An `expect_*` entry: a list of strings."""
    if not isinstance(value, list):
        raise ScriptFileError(f"must be a list of {what}", path=path, entry=spot)
    items = cast(list[Any], value)
    return [_string(item, path, f"{spot}[{index}]") for index, item in enumerate(items)]


def _turn_of(kind: str, fields_: dict[str, Any], path: str | None, where: str) -> Turn:
    """The turn a checked entry of `kind` describes."""
    usage = cast(
        UsageFields,
        {key: _count(fields_[key], path, f"{where}.{key}") for key in _USAGE if key in fields_},
    )
    thinking = None
    if "thinking" in fields_:
        thinking = _thinking(fields_["thinking"], path, f"{where}.thinking")
    finish: Finish = "stop"
    if "finish" in fields_:
        finish = _choice(fields_["finish"], get_args(Finish), path, f"{where}.finish")
    value = fields_[kind]
    if kind == "json":
        return Turn.json(value, finish=finish, **usage)
    if kind == "tool_calls":
        calls = _calls(value, path, f"{where}.tool_calls")
        text = fields_.get("text")
        text = None if text is None else _string(text, path, f"{where}.text")
        return Turn.tool_calls(*calls, text=text, thinking=thinking, finish=finish, **usage)
    if kind == "paused":
        text = None if value is None else _string(value, path, f"{where}.paused")
        return Turn.paused(text, thinking=thinking, **usage)
    text = _string(value, path, f"{where}.{kind}")
    if kind == "refusal":
        return Turn.refusal(text, **usage)
    ran = _runs(fields_.get("ran", []), path, f"{where}.ran")
    cited = _citations(fields_.get("citations", []), path, f"{where}.citations")
    try:
        return Turn.text(text, thinking=thinking, finish=finish, ran=ran, citations=cited, **usage)
    except WinkError as error:
        raise ScriptFileError(str(error), path=path, entry=where) from error


def _entries(value: Any, path: str | None, where: str, what: str) -> list[tuple[str, Any]]:
    if not isinstance(value, list):
        raise ScriptFileError(f"must be a list of {what}", path=path, entry=where)
    return [(f"{where}[{index}]", raw) for index, raw in enumerate(cast(list[Any], value))]


def _runs(value: Any, path: str | None, where: str) -> list[BuiltinRun]:
    """`[{"search": query, "sources": [url, ...]}, {"code": code, "output": text},
    {"fetch": url, "title": title, "text": text}, ...]`."""
    runs: list[BuiltinRun] = []
    for spot, raw in _entries(value, path, where, "tool runs"):
        run = _object(
            raw,
            path,
            spot,
            'a run is {"search": ..., "sources": [...]}, {"code": ..., "output": ...} or '
            '{"fetch": ..., "title": ..., "text": ...}',
        )
        try:
            if "search" in run:
                _known_keys(run, ("search", "sources"), path, spot)
                runs.append(EmulatedSearch(run["search"], run.get("sources", [])))
            elif "fetch" in run:
                _known_keys(run, ("fetch", "title", "text"), path, spot)
                runs.append(EmulatedFetch(run["fetch"], run.get("title", ""), run.get("text", "")))
            else:
                _known_keys(run, ("code", "output"), path, spot)
                code = _string(run.get("code"), path, f"{spot}.code")
                runs.append(EmulatedCodeRun(code, run.get("output", "")))
        except WinkError as error:
            if isinstance(error, ScriptFileError):
                raise
            raise ScriptFileError(str(error), path=path, entry=spot) from error
    return runs


def _citations(value: Any, path: str | None, where: str) -> list[EmulatedCitation]:
    """`[{"url": ..., "title": ..., "start": 0, "end": 10}, ...]`."""
    cited: list[EmulatedCitation] = []
    for spot, raw in _entries(value, path, where, "citations"):
        citation = _object(raw, path, spot, 'a citation is {"url", "title", "start", "end"}')
        _known_keys(citation, ("url", "title", "start", "end"), path, spot)
        url = _string(citation.get("url"), path, f"{spot}.url")
        title = _string(citation.get("title"), path, f"{spot}.title")
        start: Any = citation.get("start")  # checked by EmulatedCitation
        end: Any = citation.get("end")
        try:
            cited.append(EmulatedCitation(url, title, start, end))
        except WinkError as error:
            raise ScriptFileError(str(error), path=path, entry=spot) from error
    return cited


def _calls(value: Any, path: str | None, where: str) -> list[EmulatedToolCall]:
    if not isinstance(value, list) or not value:
        raise ScriptFileError("must be a non-empty list of calls", path=path, entry=where)
    calls: list[EmulatedToolCall] = []
    for index, raw in enumerate(cast(list[Any], value)):
        spot = f"{where}[{index}]"
        call = _object(raw, path, spot, 'a call is an object: {"name": ..., "arguments": {...}}')
        _known_keys(call, ("name", "arguments", "id"), path, spot)
        name = _string(call.get("name"), path, f"{spot}.name")
        if not name:
            raise ScriptFileError("a call needs a tool name", path=path, entry=f"{spot}.name")
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict | str):
            problem = "must be an object, or a string sent raw (it may be broken JSON)"
            raise ScriptFileError(problem, path=path, entry=f"{spot}.arguments")
        call_id = call.get("id")
        if call_id is not None:
            call_id = _string(call_id, path, f"{spot}.id")
        calls.append(EmulatedToolCall(name, cast(dict[str, Any] | str, arguments), call_id))
    return calls


def _thinking(value: Any, path: str | None, where: str) -> list[str | EmulatedThinking]:
    """A text, `{"text": ..., "redacted": true}`, or a list of those."""
    many = cast(list[Any], value) if isinstance(value, list) else [value]
    parts: list[str | EmulatedThinking] = []
    for index, raw in enumerate(many):
        spot = f"{where}[{index}]" if isinstance(value, list) else where
        if isinstance(raw, str):
            parts.append(raw)
            continue
        part = _object(raw, path, spot, 'thinking is a text, or {"text": ..., "redacted": true}')
        _known_keys(part, ("text", "redacted"), path, spot)
        redacted = part.get("redacted", False)
        if not isinstance(redacted, bool):
            raise ScriptFileError("must be true or false", path=path, entry=f"{spot}.redacted")
        parts.append(EmulatedThinking(_string(part.get("text"), path, f"{spot}.text"), redacted))
    return parts


def _fault(entry: dict[str, Any], path: str | None, where: str) -> Fault:
    """`{"fault": kind, ...}`: the keyword arguments of `Fault.<kind>`, type-checked."""
    kind = entry["fault"]
    if kind not in _FAULTS:
        problem = f"unknown fault kind {kind!r} (known: {', '.join(sorted(_FAULTS))})"
        raise ScriptFileError(problem, path=path, entry=f"{where}.fault")
    make = cast(Callable[..., Fault], getattr(Fault, kind))
    arguments = {key: value for key, value in entry.items() if key != "fault"}
    return _build(make, arguments, path, where, f"Fault.{kind}()")


def _rate_limit(value: Any, path: str | None) -> RateLimit:
    limit = _object(value, path, "rate_limit", '{"requests_per_second": ..., "burst": ...}')
    return _build(RateLimit, limit, path, "rate_limit", "RateLimit()")


def _build(
    make: Callable[..., _T], arguments: Mapping[str, Any], path: str | None, where: str, what: str
) -> _T:
    """`make(**arguments)` once each argument is one `make` takes, of a type it takes."""
    hints = get_type_hints(make)
    names = [name for name in hints if name != "return"]
    if isinstance(make, type):
        names = [field.name for field in fields(cast(Any, make))]
    for key, value in arguments.items():
        if key not in names:
            takes = ", ".join(names) if names else "no arguments"
            problem = f"{what} takes {takes}; not {key!r}"
            raise ScriptFileError(problem, path=path, entry=where)
        if not _matches(value, hints[key]):
            problem = f"must be {_describe(hints[key])}, not {_shown(value)}"
            raise ScriptFileError(problem, path=path, entry=f"{where}.{key}")
    try:
        return make(**arguments)
    except (TypeError, ValueError) as error:
        raise ScriptFileError(str(error), path=path, entry=where) from None


def _matches(value: Any, hint: Any) -> bool:
    """Whether a JSON value is of the type `hint` names (types JSON cannot name pass:
    the constructor checks them)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return True
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return any(_matches(value, arg) for arg in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint in (int, float):
        number = (int, float) if hint is float else int
        return isinstance(value, number) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (list, tuple):
        items = cast(list[Any], value) if isinstance(value, list) else None
        return items is not None and all(_matches(item, args[0]) for item in items)
    if origin is dict:
        pairs = cast(dict[Any, Any], value) if isinstance(value, dict) else None
        return pairs is not None and all(_matches(item, args[1]) for item in pairs.values())
    return True


def _describe(hint: Any) -> str:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(arg) for arg in args))
    if origin in (list, tuple):
        return f"a list of {_describe(args[0]).split(' ', 1)[-1]}s"
    names: dict[Any, str] = {type(None): "null", bool: "true or false", str: "a string"}
    names.update({int: "an integer", float: "a number"})
    return names.get(hint, "an object" if origin is dict else "a value")


def _object(value: Any, path: str | None, where: str | None, problem: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScriptFileError(f"{problem}, not {_shown(value)}", path=path, entry=where)
    return cast(dict[str, Any], value)


def _known_keys(
    value: Mapping[str, Any], known: tuple[str, ...], path: str | None, where: str | None
) -> None:
    unknown = [key for key in value if key not in known]
    if unknown:
        problem = f"unknown key {unknown[0]!r} (this entry takes: {', '.join(known)})"
        raise ScriptFileError(problem, path=path, entry=where)


def _string(value: Any, path: str | None, where: str) -> str:
    if not isinstance(value, str):
        raise ScriptFileError(f"must be a string, not {_shown(value)}", path=path, entry=where)
    return value


def _count(value: Any, path: str | None, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problem = f"must be a whole number of tokens, not {_shown(value)}"
        raise ScriptFileError(problem, path=path, entry=where)
    return value


def _choice(value: Any, choices: tuple[str, ...], path: str | None, where: str) -> Any:
    if value not in choices:
        problem = f"must be one of {', '.join(choices)}, not {_shown(value)}"
        raise ScriptFileError(problem, path=path, entry=where)
    return value


def _shown(value: Any) -> str:
    """A value as the file spells it (a value given from Python may not be JSON)."""
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return kind_of(value)
