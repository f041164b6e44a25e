"""Sampling settings every provider understands, and the one portable `thinking=`.

The neutral form of what a caller asks of the model; each provider's translator maps it to
its own request fields (or refuses it, at construction).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, cast, get_args

from .errors import ConfigurationError, InvalidArgumentError

__all__ = [
    "PORTABLE_HINT",
    "SETTING_NAMES",
    "Effort",
    "ModelSettings",
    "Thinking",
    "ToolChoice",
    "check_type",
]

PORTABLE_HINT = "(give both to stay portable)"
"""Said when a model takes only one of `Thinking`'s two forms."""


Effort = Literal["low", "medium", "high"]
"""How hard a reasoning model thinks; the three levels every provider has."""

_EFFORTS: tuple[str, ...] = get_args(Effort)


@dataclass(frozen=True, slots=True)
class Thinking:
    """Turn a model's thinking on, the same way for every provider (docs/reasoning.md).

    `effort` ("low", "medium", "high") and/or `budget_tokens` (the most tokens it may
    spend thinking). Each provider takes the form it has: OpenAI an effort only, Claude
    before 4.6 and Gemini 2.5 a budget only, newer Claude and Gemini 3 either (an effort
    first). Give both to stay portable; a model that can take neither of the forms given
    is a `ConfigurationError` when the adapter is built. `show=True` also asks for
    readable thinking where the API makes it optional (Anthropic `display`, Responses
    reasoning summaries, Gemini `includeThoughts`); it is then in
    `PromptResponse.thinking`.
    """

    effort: Effort | None = None
    budget_tokens: int | None = None
    show: bool = False

    def __post_init__(self) -> None:
        effort = cast(object, self.effort)
        if effort is not None and effort not in _EFFORTS:
            raise ConfigurationError(
                f"thinking effort must be one of {', '.join(_EFFORTS)}, got {effort!r}",
                option="thinking",
            )
        budget = cast(object, self.budget_tokens)
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < 1
        ):
            raise ConfigurationError(
                f"thinking budget_tokens must be an int >= 1, got {budget!r}", option="thinking"
            )
        if effort is None and budget is None:
            raise ConfigurationError(
                "Thinking needs an effort, a budget_tokens, or both", option="thinking"
            )
        if not isinstance(cast(object, self.show), bool):
            raise ConfigurationError(
                f"thinking show must be True or False, got {self.show!r}", option="thinking"
            )

    @classmethod
    def of(cls, value: object) -> Thinking | None:
        """`thinking=` as given: a `Thinking`, an effort ("high"), a budget (2048) or None."""
        if value is None or isinstance(value, Thinking):
            return value
        if isinstance(value, str):
            return cls(effort=cast(Effort, value))
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(budget_tokens=value)
        raise ConfigurationError(
            "thinking must be a Thinking, an effort (low, medium, high) or a token budget "
            f"(an int), got {value!r}",
            option="thinking",
        )


ToolChoice = Literal["auto", "required", "none"] | str
"""Whether the model must, may or must not call a tool: "auto" (it decides), "required"
(at least one call), "none" (no call), or one tool's name (that tool)."""
_CHOICES = ("auto", "required", "none")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")  # as `Tool` checks a name


SETTING_NAMES = (
    "temperature",
    "max_tokens",
    "top_p",
    "stop",
    "seed",
    "thinking",
    "tool_choice",
    "parallel_tool_calls",
)
"""The `ModelSettings` fields a caller may also pass one by one (`extra` aside); a wire's
own settings (a subclass's fields, `OpenAISettings`) come on top."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling settings every provider understands; `extra` goes into the body as is.

    A setting a provider cannot honour (Anthropic has no `seed`) is not silently
    dropped: building that adapter warns with `UnsupportedSettingWarning`. `thinking`
    (a `Thinking`, or its shorthand: an effort like "high" or a budget like 2048) turns
    reasoning on; a model that cannot take it is a `ConfigurationError`.

    A wire's own settings are a subclass's fields (`OpenAISettings`: OpenAI's prompt
    cache, docs/caching.md); a provider whose wire has no such field warns that it
    cannot honour it, as for any setting it lacks.

    `tool_choice` and `parallel_tool_calls` say whether and how the model calls tools,
    mapped to each provider's own fields (docs/tools.md#tool-choice). "required" or a
    tool's name holds for an evaluation's first round only, so the loop still ends.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])
    thinking: Thinking | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thinking", Thinking.of(self.thinking))
        choice = cast(object, self.tool_choice)
        if choice is not None and not (
            isinstance(choice, str) and (choice in _CHOICES or _TOOL_NAME.fullmatch(choice))
        ):
            raise ConfigurationError(
                f'tool_choice must be "auto", "required", "none" or a tool\'s name, got {choice!r}',
                option="tool_choice",
            )
        parallel = cast(object, self.parallel_tool_calls)
        if parallel is not None and not isinstance(parallel, bool):
            raise ConfigurationError(
                f"parallel_tool_calls must be True, False or None, got {parallel!r}",
                option="parallel_tool_calls",
            )
        for name in ("temperature", "top_p"):
            check_type(name, getattr(self, name), (int, float), "a number")
        for name in ("max_tokens", "seed"):
            check_type(name, getattr(self, name), (int,), "an int")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be >= 1, got {self.max_tokens}")
        stop = cast(object, self.stop)
        if isinstance(stop, str):
            object.__setattr__(self, "stop", (stop,))
        elif stop is not None:
            if not isinstance(stop, tuple | list) or not all(
                isinstance(item, str) for item in cast(list[object], stop)
            ):
                raise ConfigurationError(f"stop must be a list of strings, got {stop!r}")
            object.__setattr__(self, "stop", tuple(cast(list[str], stop)))
        if not isinstance(cast(object, self.extra), Mapping):
            raise ConfigurationError(f"extra_body must be a mapping, got {self.extra!r}")

    def merged(self, call: ModelSettings | None) -> ModelSettings:
        """These settings with a call's over them: each setting the call sets wins, and
        `extra` is merged key by key (the call's keys win). A call's wire settings
        (`OpenAISettings` over a `ModelSettings`) make the result of its class."""
        if call is None:
            return self
        if not isinstance(cast(object, call), ModelSettings):
            raise InvalidArgumentError(
                f"settings must be a ModelSettings or None, got {type(call).__name__}",
                argument="settings",
            )
        changes: dict[str, Any] = {
            f.name: value
            for f in fields(call)
            if f.name != "extra" and (value := getattr(call, f.name)) is not None
        }
        if call.extra:
            changes["extra"] = {**self.extra, **call.extra}
        if type(call) is not type(self) and isinstance(call, type(self)):
            kept = {f.name: getattr(self, f.name) for f in fields(self)}
            return type(call)(**{**kept, **changes})
        unknown = changes.keys() - {f.name for f in fields(self)}
        if unknown:  # the adapter's wire settings and the call's are of different wires
            raise InvalidArgumentError(
                f"settings of {type(call).__name__} cannot be merged over "
                f"{type(self).__name__}'s ({', '.join(sorted(unknown))})",
                argument="settings",
            )
        return replace(self, **changes) if changes else self

    def set_fields(self) -> frozenset[str]:
        """The names of the settings that are set (`extra` aside; a subclass's too)."""
        return frozenset(
            f.name for f in fields(self) if f.name != "extra" and getattr(self, f.name) is not None
        )

    def to_fields(self, names: Mapping[str, str]) -> dict[str, Any]:
        """The settings that are set, under the provider's names (`names`: ours -> theirs;
        a wire's own setting, a subclass's field, is sent when these settings have it)."""
        if not isinstance(cast(object, names), Mapping) or not _known(names.keys()):
            known = _known_names()
            raise InvalidArgumentError(
                "ModelSettings.to_fields(names=...) maps setting names "
                f"({', '.join(sorted(known))}) to a provider's, got {names!r}",
                argument="names",
            )
        fields: dict[str, Any] = {}
        for ours, theirs in names.items():
            value = getattr(self, ours, None)
            if value is not None:
                fields[theirs] = (
                    list(cast(tuple[str, ...], value)) if isinstance(value, tuple) else value
                )
        return fields


_CHECKED: set[frozenset[str]] = set()  # name sets already found known: checked once


def _known(names: Collection[str]) -> bool:
    """Whether every one of `names` is a setting's name. A provider maps the same names
    on every request: once known they stay known (subclasses only add names), so each
    set is looked up once, not walked over every settings class per request."""
    key = frozenset(names)
    if key in _CHECKED:
        return True
    if not key <= _known_names():
        return False
    _CHECKED.add(key)
    return True


def _known_names() -> frozenset[str]:
    """Every setting's name: `ModelSettings`' fields and its subclasses' (`extra` aside)."""
    classes: list[type[ModelSettings]] = [ModelSettings]
    names: set[str] = set()
    while classes:
        kind = classes.pop()
        names.update(f.name for f in fields(kind) if f.name != "extra")
        classes.extend(kind.__subclasses__())
    return frozenset(names)


def check_type(name: str, value: object, kinds: tuple[type, ...], what: str) -> None:
    if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
        raise ConfigurationError(f"{name} must be {what}, got {value!r}", option=name)
