"""wink: one `evaluate()` over OpenAI, Anthropic and Gemini, with one error contract.

Tool failures go back to the model as results; infrastructure failures raise a
`WinkError`. The error tree is loaded with the package; every other name is imported on
first access (PEP 562), so `import wink` costs a few milliseconds and loads no SDK, and a
program pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.errors import (
    AllAdaptersFailedError,
    AllAdaptersThrottledError,
    AuthenticationError,
    BadRequestError,
    CircularDependencyError,
    ConfigurationError,
    ContentFilteredError,
    ContextWindowExceededError,
    DeadlineExceededError,
    DuplicateBindingError,
    EvaluationPhase,
    InvalidArgumentError,
    NotFoundError,
    OutputTruncatedError,
    PermissionDeniedError,
    PromptError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ProviderError,
    RefusalError,
    ResourceError,
    RestoreFailedError,
    SnapshotError,
    SnapshotRestoreError,
    StreamNotFinishedError,
    ThrottleDetails,
    ThrottleError,
    ThrottleKind,
    ToolValidationError,
    TransactionError,
    UnboundResourceError,
    UnsendableValueError,
    UnsupportedSettingWarning,
    VisibilityExpansionRequired,
    WinkError,
)

if TYPE_CHECKING:
    from .adapters.anthropic import AnthropicAdapter
    from .adapters.base import ProviderAdapter
    from .adapters.fallback import FallbackAdapter
    from .adapters.google import GoogleAdapter
    from .adapters.openai import OpenAIAdapter
    from .adapters.openai_responses import OpenAIResponsesAdapter
    from .adapters.options import AdapterOptions, ModelSettings, Thinking
    from .adapters.registry import create_adapter
    from .core.limiter import InProcessLimiter, Limiter
    from .core.limits import Budget, Deadline
    from .core.log import configure_logging
    from .core.loop import PromptResponse
    from .core.messages import FinishReason, Usage
    from .core.prompt import MarkdownSection, Prompt, apply_visibility
    from .core.resources import ResourceBinding
    from .core.retry import RetryPolicy
    from .core.session import (
        AdapterSwitched,
        OutputRejected,
        PromptExecuted,
        PromptFailed,
        PromptRendered,
        RequestRetried,
        Session,
        Snapshot,
        ThinkingReceived,
        ToolInvoked,
    )
    from .core.stream import AsyncPromptStream, PromptStream
    from .core.stream_events import (
        RoundFinished,
        RoundRestarted,
        StreamEvent,
        TextDelta,
        ThinkingDelta,
        ToolCallReady,
        ToolCallStarted,
        UsageReported,
    )
    from .core.tools import Tool, ToolContext, ToolResult
    from .redis_limiter import RedisLimiter

__version__ = "0.1.0"

__all__ = [
    "AdapterOptions",
    "AdapterSwitched",
    "AllAdaptersFailedError",
    "AllAdaptersThrottledError",
    "AnthropicAdapter",
    "AsyncPromptStream",
    "AuthenticationError",
    "BadRequestError",
    "Budget",
    "CircularDependencyError",
    "ConfigurationError",
    "ContentFilteredError",
    "ContextWindowExceededError",
    "Deadline",
    "DeadlineExceededError",
    "DuplicateBindingError",
    "EvaluationPhase",
    "FallbackAdapter",
    "FinishReason",
    "GoogleAdapter",
    "InProcessLimiter",
    "InvalidArgumentError",
    "Limiter",
    "MarkdownSection",
    "ModelSettings",
    "NotFoundError",
    "OpenAIAdapter",
    "OpenAIResponsesAdapter",
    "OutputRejected",
    "OutputTruncatedError",
    "PermissionDeniedError",
    "Prompt",
    "PromptError",
    "PromptEvaluationError",
    "PromptExecuted",
    "PromptFailed",
    "PromptRenderError",
    "PromptRendered",
    "PromptResponse",
    "PromptStream",
    "PromptValidationError",
    "ProviderAdapter",
    "ProviderError",
    "RedisLimiter",
    "RefusalError",
    "RequestRetried",
    "ResourceBinding",
    "ResourceError",
    "RestoreFailedError",
    "RetryPolicy",
    "RoundFinished",
    "RoundRestarted",
    "Session",
    "Snapshot",
    "SnapshotError",
    "SnapshotRestoreError",
    "StreamEvent",
    "StreamNotFinishedError",
    "TextDelta",
    "Thinking",
    "ThinkingDelta",
    "ThinkingReceived",
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "Tool",
    "ToolCallReady",
    "ToolCallStarted",
    "ToolContext",
    "ToolInvoked",
    "ToolResult",
    "ToolValidationError",
    "TransactionError",
    "UnboundResourceError",
    "UnsendableValueError",
    "UnsupportedSettingWarning",
    "Usage",
    "UsageReported",
    "VisibilityExpansionRequired",
    "WinkError",
    "apply_visibility",
    "configure_logging",
    "create_adapter",
]

_LAZY: dict[str, str] = {
    "AdapterSwitched": "wink.core.session",
    "FallbackAdapter": "wink.adapters.fallback",
    "AsyncPromptStream": "wink.core.stream",
    "PromptStream": "wink.core.stream",
    "RoundFinished": "wink.core.stream_events",
    "RoundRestarted": "wink.core.stream_events",
    "StreamEvent": "wink.core.stream_events",
    "TextDelta": "wink.core.stream_events",
    "ThinkingDelta": "wink.core.stream_events",
    "ToolCallReady": "wink.core.stream_events",
    "ToolCallStarted": "wink.core.stream_events",
    "UsageReported": "wink.core.stream_events",
    "AnthropicAdapter": "wink.adapters.anthropic",
    "Budget": "wink.core.limits",
    "Deadline": "wink.core.limits",
    "GoogleAdapter": "wink.adapters.google",
    "InProcessLimiter": "wink.core.limiter",
    "Limiter": "wink.core.limiter",
    "MarkdownSection": "wink.core.prompt",
    "ModelSettings": "wink.adapters.options",
    "AdapterOptions": "wink.adapters.options",
    "OpenAIAdapter": "wink.adapters.openai",
    "OpenAIResponsesAdapter": "wink.adapters.openai_responses",
    "Prompt": "wink.core.prompt",
    "OutputRejected": "wink.core.session",
    "PromptExecuted": "wink.core.session",
    "PromptFailed": "wink.core.session",
    "RequestRetried": "wink.core.session",
    "FinishReason": "wink.core.messages",
    "PromptRendered": "wink.core.session",
    "PromptResponse": "wink.core.loop",
    "ProviderAdapter": "wink.adapters.base",
    "RedisLimiter": "wink.redis_limiter",
    "ResourceBinding": "wink.core.resources",
    "RetryPolicy": "wink.core.retry",
    "Session": "wink.core.session",
    "Snapshot": "wink.core.session",
    "Thinking": "wink.adapters.options",
    "ThinkingReceived": "wink.core.session",
    "Tool": "wink.core.tools",
    "ToolContext": "wink.core.tools",
    "ToolInvoked": "wink.core.session",
    "ToolResult": "wink.core.tools",
    "Usage": "wink.core.messages",
    "apply_visibility": "wink.core.prompt",
    "configure_logging": "wink.core.log",
    "create_adapter": "wink.adapters.registry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wink' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
