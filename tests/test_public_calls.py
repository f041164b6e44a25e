"""Every public call, driven with bad values, either works or raises a `WinkError`.

The calls are found, not listed: every class and function in `wink.__all__`,
`wink.testing.__all__` and `wink.mcp.__all__`, and every public method of those classes
that takes arguments.
Each parameter in turn gets every value of `BAD_VALUES` while the others keep a valid
one (`GOOD`), so a new public name, or a new parameter, is walked without editing this
file; a new required parameter name needs a valid value in `GOOD` (the test says so).

What is not called says why in `NOT_CALLED`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast, is_typeddict

import pytest

import wink
import wink.mcp
import wink.testing
from tests.helpers.adapters import KEY, MODELS, NO_RETRY
from tests.helpers.media import png, wav
from wink import WinkError
from wink.core.prompting.resources import ResourceScope
from wink.testing.scripted import final
from wink.testing.turns import UsageFields

BAD_VALUES: tuple[object, ...] = (
    None,
    "",
    "not-a-valid-value",
    b"bytes",
    -1,
    0,
    10**30,
    -0.5,
    math.nan,
    math.inf,
    -math.inf,
    True,
    object(),
    int,  # a type where a value belongs
    [],
    ["x"],
    {},
    {"x": object()},
    timedelta(seconds=-1),
    print,  # a callable where a value belongs
)

NOT_CALLED: dict[str, str] = {
    "serve": "serves until Ctrl-C; its arguments go to ProviderEmulator, walked there",
    "ProviderEmulator.handle": "the server's entry point, called with the request it parsed",
    "BuiltinToolCall": "built by wink from a provider's answer, never taken as input",
    "Citation": "built by wink from a provider's answer, never taken as input",
    "CitationDelta": "a stream event wink builds from a provider's answer, never taken as input",
    "WebSource": "built by wink from a provider's answer, never taken as input",
}
"""Public calls the walk leaves out, each with its reason. Exception classes, type
aliases, TypedDicts and abstract classes are left out by kind (`_all_targets`): the
concrete classes are walked, and exceptions are built by wink from its own values."""

VAR_KEYWORDS: dict[str, type] = {
    "options": wink.AdapterOptions,
    "usage": UsageFields,
    "call_options": wink.TextOptions,
    "count_options": wink.CountOptions,
}
"""The TypedDict of each `**name` parameter: each of its keys is walked in turn."""


# --- valid values: only the argument under test is wrong


@dataclass(frozen=True)
class City:
    city: str


def weather(city: str) -> str:
    """Today's weather in a city."""
    return "sunny"


def lookup(params: City, *, context: wink.ToolContext) -> wink.ToolResult[None]:
    return wink.ToolResult.ok(None)


async def one() -> int:
    return 1


async def never_started(channel: Any) -> Any:  # a stream's start; the walk never iterates
    raise AssertionError("not started")


def section() -> wink.MarkdownSection:
    return wink.MarkdownSection(key="task", title="Task", template="Say hello.")


def prompt() -> wink.Prompt[None]:
    return wink.Prompt(name="hello", sections=[section()])


# this process's own folder (removed at exit): tests running in parallel processes
# (pytest-xdist) must never write a file another one is reading
FILES = tempfile.TemporaryDirectory(prefix="wink-public-calls-")


def script_file() -> str:
    """A valid script file for `load_script` (one, reused)."""
    path = Path(FILES.name) / "script.json"
    path.write_text('{"script": [{"text": "hi"}]}', encoding="utf-8")
    return str(path)


def media_file() -> str:
    """A valid WAV file for `Audio.from_path` (one, reused)."""
    path = Path(FILES.name) / "audio.wav"
    path.write_bytes(wav())
    return str(path)


def throttled() -> wink.ThrottleError:
    return wink.ThrottleError(
        "slow down", prompt_name="hello", details=wink.ThrottleDetails("rate_limit")
    )


def finished_job(adapter: Any) -> wink.BatchJob:
    """A batch of one item, run to its end on the emulator by `adapter`."""
    job = adapter.submit_batch([prompt()])
    while not job.finished:
        job = adapter.advance_batch(job)
    return job


JOB_JSON = '{"version":1,"type":"wink.batch_job","id":"b","provider":"openai:gpt-4.1","items":[]}'


Good = Callable[[Any], object]
"""A valid value, made fresh for each call from the instance the method is called on
(None for a constructor or a function)."""

GOOD: dict[str, Good] = {
    "max_uses": lambda _: 3,
    "allowed_domains": lambda _: ["example.com"],
    "blocked_domains": lambda _: None,
    "user_location": lambda _: wink.UserLocation(country="FR"),
    "builtin_tools": lambda _: [wink.WebSearch()],
    "UserLocation.city": lambda _: "Paris",
    "UserLocation.region": lambda _: "IDF",
    "UserLocation.country": lambda _: "FR",
    "UserLocation.timezone": lambda _: "Europe/Paris",
    "EmulatedSearch.query": lambda _: "python 3.14",
    "EmulatedCodeRun.code": lambda _: "print(1)",
    "EmulatedCitation.url": lambda _: "https://example.com/",
    "EmulatedCitation.title": lambda _: "Example",
    "EmulatedCitation.start": lambda _: 0,
    "EmulatedCitation.end": lambda _: 2,
    # by parameter name
    "adapter": lambda _: "openai:gpt-4.1",
    "adapters": lambda _: [ADAPTERS[wink.OpenAIAdapter](), ADAPTERS[wink.GoogleAdapter]()],
    "answer": lambda _: '{"city": 3}',
    "arguments": lambda _: {"city": "Paris"},
    "at": lambda _: 10.0,
    "partial": lambda _: {"city": "Par"},
    "batch_id": lambda _: "batch_1",
    "attempt": lambda _: 1,
    "blocking": lambda _: False,
    "body": lambda _: {},
    "call_id": lambda _: "call_1",
    "callback": lambda _: lambda event: None,
    "calls": lambda _: (wink.PendingToolCall("call_1", "lookup", {"city": "Paris"}),),
    "content": lambda _: "ok",
    "description": lambda _: "Weather by city",
    "default": lambda _: None,
    "dropped": lambda _: 0,
    "entries": lambda _: (),
    "error": lambda _: throttled(),
    "event": lambda _: wink.TextDelta("hi"),
    "event_type": lambda _: wink.TextDelta,
    "factory": lambda _: City,
    "fault": lambda _: wink.testing.Fault.overloaded(),
    "finish_reason": lambda _: "stop",
    "fn": lambda _: one,
    "from_adapter": lambda _: "openai:gpt-4.1",
    "generation": lambda _: 0,
    "handler": lambda _: lookup,
    "headers": lambda _: {},
    "hung": lambda _: 0,
    "id": lambda _: "call_1",
    "index": lambda _: 0,
    "is_error": lambda _: False,
    "items": lambda _: [prompt()],
    "job": lambda adapter: adapter.submit_batch([prompt()]),
    "key": lambda _: "task",
    "kind": lambda _: "rate_limit",
    "limit": lambda _: wink.testing.RateLimit(10.0),
    "access_key": lambda _: "AKIAWINKTESTKEY12345",
    "secret_key": lambda _: "secret",
    "aws_credentials": lambda _: None,
    "bedrock_api_keys": lambda _: (),
    "message": lambda _: "done",
    "method": lambda _: "POST",
    "model": lambda _: "gpt-4.1",
    "name": lambda _: "lookup",
    "names": lambda _: {"temperature": "temperature"},
    "namespace": lambda _: "tests",
    "number": lambda _: 1,
    "output": lambda _: None,
    "overrides": lambda _: {},
    "params": lambda _: City("Paris"),
    "path": lambda _: "/v1/chat/completions",
    "phase": lambda _: "request",
    "plan": lambda _: {1: wink.testing.Fault.overloaded()},
    "port": lambda _: 0,
    "prompt": lambda _: prompt(),
    "problems": lambda _: "city: Input should be a valid string",
    "prompt_name": lambda _: "hello",
    "provider": lambda _: "openai",
    "prices": lambda _: "genai-prices 0.2.3",
    "input": lambda _: "2.5",
    "Prices.output": lambda _: "10",
    "cached_input": lambda _: None,
    "cache_write": lambda _: None,
    "currency": lambda _: "USD",
    "input_tokens": lambda _: 100,
    "cached_tokens": lambda _: 0,
    "cache_write_tokens": lambda _: 0,
    "output_tokens": lambda _: 10,
    "Prices.cost.source": lambda _: wink.PriceSource("prices=", None, "gpt-4.1"),
    "query": lambda _: "",
    "received_at": lambda _: 0.0,
    "reducer": lambda _: lambda current, event: event,
    "requests": lambda _: 1,
    "requests_per_second": lambda _: 10.0,
    "resources": lambda _: ResourceScope.empty(),
    "responses": lambda _: {},
    "result": lambda _: wink.ToolResult.ok(None),
    "role": lambda _: "user",
    "round": lambda _: 1,
    "rounds": lambda _: 1,
    "script": lambda _: [],
    "source": lambda _: "emulator",
    "state": lambda _: "completed",
    "sections": lambda _: [section()],
    "seconds": lambda _: 1.0,
    "sequence": lambda _: 0,
    "session": lambda _: wink.Session(),
    "settings": lambda _: wink.ModelSettings(temperature=0.0),
    "session_id": lambda _: 1,
    "slice_type": lambda _: wink.TextDelta,
    "slices": lambda _: {},
    "spec": lambda _: "openai:gpt-4.1",
    "start": lambda _: never_started,
    "status": lambda _: 500,
    "template": lambda _: "Say hello.",
    "text": lambda _: "hi",
    "throttled": lambda _: 0,
    "title": lambda _: "Task",
    "to_adapter": lambda _: "google:gemini-2.5-flash",
    "traceback": lambda _: "",
    "tool_calls": lambda _: 0,
    "tool_name": lambda _: "lookup",
    "tool_names": lambda _: (),
    "tool_results": lambda _: (),
    "tools": lambda _: (),
    "total": lambda _: 1,
    "url": lambda _: "redis://127.0.0.1:6379/0",
    "usage": lambda _: wink.Usage(),
    "value": lambda _: "high",
    "via": lambda _: "text",
    "wait": lambda _: timedelta(seconds=1),
    "when": lambda _: datetime.now(UTC) + timedelta(minutes=1),
    # where a name means something else on one call: "Owner.method.parameter"
    "Session.restore.snapshot": lambda session: session.snapshot(),
    "Session.rollback.snapshot": lambda session: session.snapshot(),
    "Session.rollback.key": lambda _: "call_1",
    "Session.transaction.key": lambda _: "call_1",
    "ProviderEmulator.base_url.provider": lambda _: "anthropic",
    "ProviderAdapter.provider": lambda _: "openai",  # optional, but needed unless a subclass
    "MCPServerStdio.command": lambda _: "python",  # never started: building connects nothing
    "MCPServerHTTP.url": lambda _: "http://127.0.0.1:9/mcp",
    "Thinking.effort": lambda _: "high",  # optional, but one of effort and budget is not
    "Turn.tool_calls.calls": lambda _: [wink.testing.EmulatedToolCall("lookup")],
    "load_script.path": lambda _: script_file(),
    "media_type": lambda _: "image/png",
    "Image.data": lambda _: png(),
    "Audio.media_type": lambda _: "audio/wav",
    "Audio.data": lambda _: wav(),
    "Audio.from_bytes.data": lambda _: wav(),
    "Audio.from_bytes.media_type": lambda _: "audio/wav",
    "Audio.from_path.path": lambda _: media_file(),
    "Audio.from_url.url": lambda _: "https://example.com/a.wav",
    "Document.media_type": lambda _: "text/plain",
    "Document.data": lambda _: b"Plain words.",
    "Turn.check_parts.received": lambda _: (),
    "parse_script.data": lambda _: {"script": [{"text": "hi"}]},
    "Transcript.from_json.text": lambda _: '{"version": 1, "messages": []}',
    "BatchJob.from_json.text": lambda _: JOB_JSON,
    "AnthropicAdapter.batch_results.job": finished_job,
    "Turn.check_history.history": lambda _: (),
    "ModelSettings.merged.call": lambda _: wink.ModelSettings(temperature=0),
    "function": lambda _: weather,
    "tool.function": lambda _: weather,
}


# --- instances the methods are called on


EMULATOR = wink.testing.ProviderEmulator(default_turn=wink.testing.Turn.text("ok"))


def on_emulator(provider: str) -> Callable[[], Any]:
    return lambda: wink.create_adapter(
        f"{provider}:{MODELS[provider]}",
        api_key=KEY,
        base_url=EMULATOR.base_url(provider),  # type: ignore[arg-type]
        retry_policy=NO_RETRY,
    )


ADAPTERS: dict[type, Callable[[], Any]] = {
    wink.OpenAIAdapter: on_emulator("openai"),
    wink.OpenAIResponsesAdapter: on_emulator("openai-responses"),
    wink.AnthropicAdapter: on_emulator("anthropic"),
    wink.GoogleAdapter: on_emulator("google"),
    wink.FallbackAdapter: lambda: wink.FallbackAdapter(
        [on_emulator("openai")(), on_emulator("google")()]
    ),
    wink.testing.ScriptedAdapter: lambda: wink.testing.ScriptedAdapter([final("hi")]),
}


INSTANCES: dict[str, Callable[[], Any]] = {
    "ProviderEmulator.base_url": lambda: wink.testing.ProviderEmulator().start(),
}
"""Where a method needs an instance in a particular state (closed after each call)."""


@pytest.fixture(scope="module", autouse=True)
def serving() -> Iterator[None]:
    with EMULATOR:
        yield


# --- the walk


@dataclass(frozen=True)
class Target:
    """One public call: a class (its constructor), a function, or a class's method."""

    label: str
    obj: Any
    method: str | None = None

    def resolve(self, instance: object) -> Callable[..., Any]:
        if self.method is None:
            return self.obj
        return getattr(self.obj if instance is None else instance, self.method)

    @property
    def on_instance(self) -> bool:
        if self.method is None:
            return False
        raw = inspect.getattr_static(self.obj, self.method)
        return not isinstance(raw, classmethod | staticmethod)


def _all_targets() -> list[Target]:
    """Every public call, each method once: one inherited by several classes (`evaluate`
    of every adapter) is walked on the first of them, in `__all__` order."""
    targets: list[Target] = []
    walked: set[object] = set()
    for module in (wink, wink.testing, wink.mcp):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                targets.append(Target(name, obj))
            elif inspect.isclass(obj) and not _left_out(obj):
                targets.append(Target(name, obj))
                for method, function in _methods(obj):
                    if function not in walked:
                        walked.add(function)
                        targets.append(Target(f"{name}.{method}", obj, method))
            # anything else is a type alias (a Literal, a union): nothing to call
    return targets


def _left_out(cls: type) -> bool:
    return issubclass(cls, BaseException | Warning) or is_typeddict(cls) or inspect.isabstract(cls)


def _methods(cls: type) -> Iterator[tuple[str, object]]:
    """The public methods of `cls` (its own and inherited from wink) that take arguments."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        function = raw.__func__ if isinstance(raw, classmethod | staticmethod) else raw
        if inspect.isfunction(function) and function.__module__.startswith("wink."):
            parameters = list(inspect.signature(function).parameters)
            if parameters[0 if isinstance(raw, staticmethod) else 1 :]:
                yield name, function


def _instance(target: Target) -> object:
    """A fresh, valid instance to call the method on (None for anything else)."""
    if not target.on_instance:
        return None
    maker = INSTANCES.get(target.label) or ADAPTERS.get(target.obj)
    if maker is not None:
        return maker()
    owner = target.label.split(".")[0]
    return _call(target.obj, inspect.signature(target.obj), None, owner, None)


def _signature(target: Target) -> inspect.Signature:
    """The parameters a caller passes (`self` aside), read without making an instance."""
    signature = inspect.signature(target.resolve(None))
    if not target.on_instance:
        return signature
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def _good(label: str, parameter: inspect.Parameter, instance: object) -> object:
    for key in (f"{label}.{parameter.name}", parameter.name):
        if key in GOOD:
            return GOOD[key](instance)
    raise LookupError(f"add a valid value for {label}({parameter.name}=...) to GOOD")


def _call(
    function: Callable[..., Any],
    signature: inspect.Signature,
    instance: object,
    label: str,
    bad: tuple[str, object] | None,
) -> object:
    """`function` with a valid value for every required parameter, and `bad` (name, value)."""
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for parameter in signature.parameters.values():
        given = bad is not None and bad[0] == parameter.name
        owned = f"{label}.{parameter.name}"
        if parameter.kind is parameter.VAR_POSITIONAL:
            if given and bad is not None:
                args.append(bad[1])
            elif owned in GOOD:
                args += cast(list[object], GOOD[owned](instance))
        elif parameter.kind is parameter.VAR_KEYWORD:
            keys = VAR_KEYWORDS.get(parameter.name)
            if bad is not None and keys is not None and bad[0] in keys.__annotations__:
                kwargs[bad[0]] = bad[1]
            if keys is wink.AdapterOptions:  # an adapter needs a key (none is an error)
                kwargs.setdefault("api_key", KEY)
        elif given and bad is not None:
            if parameter.kind is parameter.POSITIONAL_ONLY:
                args.append(bad[1])
            else:
                kwargs[parameter.name] = bad[1]
        elif parameter.default is parameter.empty or owned in GOOD:
            value = _good(label, parameter, instance)
            if parameter.kind is parameter.POSITIONAL_ONLY:
                args.append(value)
            else:
                kwargs[parameter.name] = value
    return function(*args, **kwargs)


def _parameters(signature: inspect.Signature) -> list[str]:
    names: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            keys = VAR_KEYWORDS.get(parameter.name)
            assert keys is not None, f"add the keys of **{parameter.name} to VAR_KEYWORDS"
            names += list(keys.__annotations__)
        else:
            names.append(parameter.name)
    return names


@contextlib.contextmanager
def _restored_logging() -> Iterator[None]:
    """`configure_logging` succeeds with some values: leave wink's logger as it was."""
    logger = logging.getLogger("wink")
    level, handlers = logger.level, list(logger.handlers)
    try:
        yield
    finally:
        logger.setLevel(level)
        logger.handlers[:] = handlers


async def _finish(result: Awaitable[object], instance: object) -> object:
    """Await an async call, then close what the instance opened on this event loop."""
    try:
        return await result
    finally:
        aclose = getattr(instance, "aclose", None)
        if aclose is not None:
            await aclose()


def _run(target: Target, bad: tuple[str, object] | None) -> None:
    instance = _instance(target)
    function = target.resolve(instance)
    with _restored_logging():
        try:
            result = _call(function, inspect.signature(function), instance, target.label, bad)
            if inspect.iscoroutine(result):
                asyncio.run(_finish(result, instance))
        finally:
            close = getattr(instance, "close", None)
            if callable(close) and not inspect.iscoroutinefunction(close):
                close()


TARGETS = [target for target in _all_targets() if target.label not in NOT_CALLED]


@pytest.mark.filterwarnings("ignore::wink.UnsupportedSettingWarning")
@pytest.mark.parametrize("target", TARGETS, ids=[t.label for t in TARGETS])
def test_every_bad_argument_raises_a_wink_error(target: Target) -> None:
    _run(target, None)  # every argument valid: the walk below tests one bad one at a time
    escaped: dict[tuple[str, str], list[str]] = {}
    for name in _parameters(_signature(target)):
        for value in BAD_VALUES:
            try:
                _run(target, (name, value))
            except WinkError:
                pass
            except Exception as error:  # what the walk looks for
                key = (name, f"{type(error).__name__}: {error}"[:160])
                escaped.setdefault(key, []).append(repr(value)[:30])
    assert not escaped, "\n".join(
        f"{target.label}({name}=) with {', '.join(values)}: {what}"
        for (name, what), values in escaped.items()
    )


def test_the_walk_covers_the_public_surface() -> None:
    labels = {target.label for target in TARGETS}
    some = {"Prompt", "create_adapter", "AnthropicAdapter.evaluate", "ScriptedAdapter.add"}
    some |= {"Session.restore", "Deadline.after", "ProviderEmulator.inject", "Fault.http"}
    assert some <= labels
    assert set(NOT_CALLED) <= {target.label for target in _all_targets()}  # none stale
