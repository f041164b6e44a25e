"""Test against the real wire without the real providers.

`ProviderEmulator` is a local HTTP server that speaks the OpenAI (Chat Completions and
Responses), Anthropic Messages and Gemini `generateContent` wire formats, answers from a
script of `Turn`s, and injects `Fault`s on demand. Point the official SDKs at
`emu.base_url(provider)` with any API key.

Every name is imported on first access (PEP 562): the `wink` pytest plugin imports this
package in every pytest run of an environment where wink is installed, and that must not
load the emulator. Importing this package loads no provider SDK either.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .builtin import EmulatedCitation, EmulatedCodeRun, EmulatedFetch, EmulatedSearch
    from .emulator import ProviderEmulator, ScriptFunction, ScriptItem
    from .faults import Fault, FaultKind, HeaderStyle, RateLimit
    from .history import HistoryEntry, HistoryRole
    from .internal import EmulatorInternalError, InternalError
    from .parts import ReceivedPart
    from .records import (
        EmulatedRequest,
        EmulatorStats,
        Provider,
        RecordedRequest,
        ToolResultView,
    )
    from .script_file import EmulatorScript, ScriptFileError, load_script, parse_script
    from .scripted import ScriptedAdapter
    from .standalone import serve
    from .turns import EmulatedThinking, EmulatedToolCall, EmulatedUsage, Finish, Turn
    from .wire.bedrock import AwsCredentials

__all__ = [
    "AwsCredentials",
    "EmulatedCitation",
    "EmulatedCodeRun",
    "EmulatedFetch",
    "EmulatedRequest",
    "EmulatedSearch",
    "EmulatedThinking",
    "EmulatedToolCall",
    "EmulatedUsage",
    "EmulatorInternalError",
    "EmulatorScript",
    "EmulatorStats",
    "Fault",
    "FaultKind",
    "Finish",
    "HeaderStyle",
    "HistoryEntry",
    "HistoryRole",
    "InternalError",
    "Provider",
    "ProviderEmulator",
    "RateLimit",
    "ReceivedPart",
    "RecordedRequest",
    "ScriptFileError",
    "ScriptFunction",
    "ScriptItem",
    "ScriptedAdapter",
    "ToolResultView",
    "Turn",
    "load_script",
    "parse_script",
    "serve",
]

_LAZY: dict[str, str] = {
    "AwsCredentials": "wink.testing.wire.bedrock",
    "EmulatedCitation": "wink.testing.builtin",
    "EmulatedCodeRun": "wink.testing.builtin",
    "EmulatedFetch": "wink.testing.builtin",
    "EmulatedRequest": "wink.testing.records",
    "EmulatedSearch": "wink.testing.builtin",
    "EmulatedThinking": "wink.testing.turns",
    "EmulatedToolCall": "wink.testing.turns",
    "EmulatedUsage": "wink.testing.turns",
    "EmulatorInternalError": "wink.testing.internal",
    "EmulatorScript": "wink.testing.script_file",
    "EmulatorStats": "wink.testing.records",
    "Fault": "wink.testing.faults",
    "FaultKind": "wink.testing.faults",
    "Finish": "wink.testing.turns",
    "HeaderStyle": "wink.testing.faults",
    "HistoryEntry": "wink.testing.history",
    "HistoryRole": "wink.testing.history",
    "InternalError": "wink.testing.internal",
    "Provider": "wink.testing.records",
    "ProviderEmulator": "wink.testing.emulator",
    "RateLimit": "wink.testing.faults",
    "ReceivedPart": "wink.testing.parts",
    "RecordedRequest": "wink.testing.records",
    "ScriptFileError": "wink.testing.script_file",
    "ScriptFunction": "wink.testing.emulator",
    "ScriptItem": "wink.testing.emulator",
    "ScriptedAdapter": "wink.testing.scripted",
    "ToolResultView": "wink.testing.records",
    "Turn": "wink.testing.turns",
    "load_script": "wink.testing.script_file",
    "parse_script": "wink.testing.script_file",
    "serve": "wink.testing.standalone",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wink.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
