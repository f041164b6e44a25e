"""Test against the real wire without the real providers.

`ProviderEmulator` is a local HTTP server that speaks the OpenAI (Chat Completions and
Responses), Anthropic Messages and Gemini `generateContent` wire formats, answers from a
script of `Turn`s, and injects `Fault`s on demand. Point the official SDKs at
`emu.base_url(provider)` with any API key. Importing this package loads no provider SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .emulator import ProviderEmulator, ScriptFunction, ScriptItem
from .faults import Fault, FaultKind, HeaderStyle, RateLimit
from .records import (
    EmulatedRequest,
    EmulatorStats,
    Provider,
    RecordedRequest,
    ToolResultView,
)
from .serve import serve
from .turns import EmulatedToolCall, EmulatedUsage, Finish, Turn

if TYPE_CHECKING:
    from .scripted import ScriptedAdapter

__all__ = [
    "EmulatedRequest",
    "EmulatedToolCall",
    "EmulatedUsage",
    "EmulatorStats",
    "Fault",
    "FaultKind",
    "Finish",
    "HeaderStyle",
    "Provider",
    "ProviderEmulator",
    "RateLimit",
    "RecordedRequest",
    "ScriptFunction",
    "ScriptItem",
    "ScriptedAdapter",
    "ToolResultView",
    "Turn",
    "serve",
]

# The scripted adapter pulls in the evaluation loop; load it only when asked for.
_LAZY = {"ScriptedAdapter": "wink.testing.scripted"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wink.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
