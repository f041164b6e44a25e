"""wink: one `evaluate()` over OpenAI, Anthropic and Gemini, with one error contract.

Tool failures go back to the model as results; infrastructure failures raise a
`WinkError`. The error tree is loaded with the package; every other name is imported on
first access (PEP 562), so `import wink` costs a few milliseconds and loads no SDK, and a
program pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.foundation.errors import (
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
    from .adapters.base import ProviderAdapter
    from .adapters.fallback import FallbackAdapter
    from .adapters.options import AdapterOptions, ModelSettings, Thinking
    from .adapters.registry import create_adapter
    from .core.agent.loop import PromptResponse
    from .core.agent.stream import AsyncPromptStream, PromptStream
    from .core.foundation.events import (
        RoundFinished,
        RoundRestarted,
        StreamEvent,
        TextDelta,
        ThinkingDelta,
        ToolCallReady,
        ToolCallStarted,
        UsageReported,
    )
    from .core.foundation.limits import Budget, Deadline
    from .core.foundation.messages import FinishReason, Usage
    from .core.limiter import InProcessLimiter, Limiter
    from .core.prompting.prompt import MarkdownSection, Prompt, apply_visibility
    from .core.prompting.resources import ResourceBinding
    from .core.prompting.session import (
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
    from .core.prompting.tools import Tool, ToolContext, ToolResult
    from .core.telemetry.log import configure_logging
    from .core.throttling.retry import RetryPolicy
    from .providers.anthropic.messages import AnthropicAdapter
    from .providers.google.generate import GoogleAdapter
    from .providers.openai.chat import OpenAIAdapter
    from .providers.openai.responses import OpenAIResponsesAdapter
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
    "AdapterSwitched": "wink.core.prompting.session",
    "FallbackAdapter": "wink.adapters.fallback",
    "AsyncPromptStream": "wink.core.agent.stream",
    "PromptStream": "wink.core.agent.stream",
    "RoundFinished": "wink.core.foundation.events",
    "RoundRestarted": "wink.core.foundation.events",
    "StreamEvent": "wink.core.foundation.events",
    "TextDelta": "wink.core.foundation.events",
    "ThinkingDelta": "wink.core.foundation.events",
    "ToolCallReady": "wink.core.foundation.events",
    "ToolCallStarted": "wink.core.foundation.events",
    "UsageReported": "wink.core.foundation.events",
    "AnthropicAdapter": "wink.providers.anthropic.messages",
    "Budget": "wink.core.foundation.limits",
    "Deadline": "wink.core.foundation.limits",
    "GoogleAdapter": "wink.providers.google.generate",
    "InProcessLimiter": "wink.core.limiter",
    "Limiter": "wink.core.limiter",
    "MarkdownSection": "wink.core.prompting.prompt",
    "ModelSettings": "wink.adapters.options",
    "AdapterOptions": "wink.adapters.options",
    "OpenAIAdapter": "wink.providers.openai.chat",
    "OpenAIResponsesAdapter": "wink.providers.openai.responses",
    "Prompt": "wink.core.prompting.prompt",
    "OutputRejected": "wink.core.prompting.session",
    "PromptExecuted": "wink.core.prompting.session",
    "PromptFailed": "wink.core.prompting.session",
    "RequestRetried": "wink.core.prompting.session",
    "FinishReason": "wink.core.foundation.messages",
    "PromptRendered": "wink.core.prompting.session",
    "PromptResponse": "wink.core.agent.loop",
    "ProviderAdapter": "wink.adapters.base",
    "RedisLimiter": "wink.redis_limiter",
    "ResourceBinding": "wink.core.prompting.resources",
    "RetryPolicy": "wink.core.throttling.retry",
    "Session": "wink.core.prompting.session",
    "Snapshot": "wink.core.prompting.session",
    "Thinking": "wink.adapters.options",
    "ThinkingReceived": "wink.core.prompting.session",
    "Tool": "wink.core.prompting.tools",
    "ToolContext": "wink.core.prompting.tools",
    "ToolInvoked": "wink.core.prompting.session",
    "ToolResult": "wink.core.prompting.tools",
    "Usage": "wink.core.foundation.messages",
    "apply_visibility": "wink.core.prompting.prompt",
    "configure_logging": "wink.core.telemetry.log",
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
