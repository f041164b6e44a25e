"""wink: one `evaluate()` over OpenAI, Anthropic and Gemini, with one error contract.

Tool failures go back to the model as results; infrastructure failures raise a
`WinkError`. Provider adapters are imported on first use, so `import wink` loads no SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .adapters.base import ModelSettings, ProviderAdapter
from .adapters.registry import create_adapter
from .core.errors import (
    CircularDependencyError,
    DeadlineExceededError,
    DuplicateBindingError,
    PromptError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ProviderError,
    ResourceError,
    RestoreFailedError,
    SnapshotError,
    SnapshotRestoreError,
    ThrottleDetails,
    ThrottleError,
    ThrottleKind,
    ToolValidationError,
    TransactionError,
    UnboundResourceError,
    VisibilityExpansionRequired,
    WinkError,
)
from .core.limits import Budget, Deadline
from .core.log import configure_logging
from .core.loop import PromptResponse
from .core.messages import Usage
from .core.prompt import MarkdownSection, Prompt, apply_visibility
from .core.resources import ResourceBinding
from .core.session import PromptExecuted, PromptRendered, Session, Snapshot, ToolInvoked
from .core.throttle import RetryPolicy
from .core.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from .adapters.anthropic import AnthropicAdapter
    from .adapters.google import GoogleAdapter
    from .adapters.openai import OpenAIAdapter
    from .adapters.openai_responses import OpenAIResponsesAdapter

__version__ = "0.1.0"

__all__ = [
    "AnthropicAdapter",
    "Budget",
    "CircularDependencyError",
    "Deadline",
    "DeadlineExceededError",
    "DuplicateBindingError",
    "GoogleAdapter",
    "MarkdownSection",
    "ModelSettings",
    "OpenAIAdapter",
    "OpenAIResponsesAdapter",
    "Prompt",
    "PromptError",
    "PromptEvaluationError",
    "PromptExecuted",
    "PromptRenderError",
    "PromptRendered",
    "PromptResponse",
    "PromptValidationError",
    "ProviderAdapter",
    "ProviderError",
    "ResourceBinding",
    "ResourceError",
    "RestoreFailedError",
    "RetryPolicy",
    "Session",
    "Snapshot",
    "SnapshotError",
    "SnapshotRestoreError",
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "Tool",
    "ToolContext",
    "ToolInvoked",
    "ToolResult",
    "ToolValidationError",
    "TransactionError",
    "UnboundResourceError",
    "Usage",
    "VisibilityExpansionRequired",
    "WinkError",
    "apply_visibility",
    "configure_logging",
    "create_adapter",
]

# Adapter classes live next to their SDK; resolve them on first access only.
_LAZY = {
    "AnthropicAdapter": "wink.adapters.anthropic",
    "GoogleAdapter": "wink.adapters.google",
    "OpenAIAdapter": "wink.adapters.openai",
    "OpenAIResponsesAdapter": "wink.adapters.openai_responses",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wink' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
