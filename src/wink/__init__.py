"""wink: one `evaluate()` over OpenAI, Anthropic and Gemini, with one error contract.

Tool failures go back to the model as results; infrastructure failures raise a
`WinkError`. Every public name is imported on first access (PEP 562), so `import wink`
costs a few milliseconds and loads no SDK, and a program pays only for what it uses.

The names and their modules are listed twice, each list checked against the other by
`tests/test_public_api.py`: in `__init__.pyi`, what type checkers read, and here, as a
literal map (pydantic's pattern), so that importing wink reads no file: it works from a
zip (a zipapp, PyInstaller) as from a folder. Namespaces: `wink.errors` (every
exception), `wink.events` (what sessions record and streams yield), `wink.testing` (the
emulator).
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.foundation.version import __version__ as __version__

# name -> the module (relative to this package) that defines it
_DYNAMIC_IMPORTS: dict[str, str] = {
    "WebSource": ".core.foundation.builtin",
    "WebSearch": ".core.foundation.builtin",
    "UserLocation": ".core.foundation.builtin",
    "UrlContext": ".core.foundation.builtin",
    "CodeExecution": ".core.foundation.builtin",
    "Citation": ".core.foundation.builtin",
    "BuiltinToolCall": ".core.foundation.builtin",
    "AdapterOptions": ".adapters.options",
    "CountOptions": ".adapters.base",
    "EvaluateOptions": ".adapters.evaluator",
    "TextOptions": ".adapters.evaluator",
    "function_tool": ".core.prompting.functions",
    "tool": ".core.prompting.functions",
    "AdapterSwitched": ".core.foundation.events",
    "AllAdaptersFailedError": ".core.foundation.errors",
    "AllAdaptersThrottledError": ".core.foundation.errors",
    "AnthropicAdapter": ".adapters.named",
    "BedrockAdapter": ".adapters.named",
    "ApprovalRequired": ".core.foundation.events",
    "CitationDelta": ".core.foundation.events",
    "AsyncPromptStream": ".core.agent.stream",
    "Attachment": ".core.foundation.content",
    "Audio": ".core.foundation.content",
    "AuthenticationError": ".core.foundation.errors",
    "BadRequestError": ".core.foundation.errors",
    "BatchCancelledError": ".core.foundation.errors",
    "BatchExpiredError": ".core.foundation.errors",
    "BatchItem": ".core.agent.batch_job",
    "BatchJob": ".core.agent.batch_job",
    "BatchState": ".core.foundation.batches",
    "BatchStatus": ".core.foundation.batches",
    "Budget": ".core.foundation.limits",
    "UnpricedModelWarning": ".core.foundation.errors",
    "PriceSource": ".core.foundation.cost",
    "Prices": ".core.foundation.cost",
    "Cost": ".core.foundation.cost",
    "BudgetExceededError": ".core.foundation.errors",
    "CircularDependencyError": ".core.foundation.errors",
    "ConfigurationError": ".core.foundation.errors",
    "ContentFilteredError": ".core.foundation.errors",
    "ContextWindowExceededError": ".core.foundation.errors",
    "Deadline": ".core.foundation.limits",
    "DeadlineExceededError": ".core.foundation.errors",
    "Document": ".core.foundation.content",
    "DuplicateBindingError": ".core.foundation.errors",
    "EvaluationPhase": ".core.foundation.errors",
    "FallbackAdapter": ".adapters.fallback",
    "FinishReason": ".core.foundation.messages",
    "GoogleAdapter": ".adapters.named",
    "Image": ".core.foundation.content",
    "InProcessLimiter": ".core.throttling.limiter",
    "InvalidArgumentError": ".core.foundation.errors",
    "Limiter": ".core.throttling.limiter",
    "MarkdownSection": ".core.prompting.sections",
    "ModelSettings": ".core.foundation.settings",
    "NotFoundError": ".core.foundation.errors",
    "OpenAIAdapter": ".adapters.named",
    "OpenAIResponsesAdapter": ".adapters.named",
    "OpenAISettings": ".providers.openai.settings",
    "OutputDelta": ".core.foundation.events",
    "OutputRejected": ".core.foundation.events",
    "OutputTruncatedError": ".core.foundation.errors",
    "PendingToolCall": ".core.foundation.transcript",
    "PermissionDeniedError": ".core.foundation.errors",
    "Prompt": ".core.prompting.prompt",
    "PromptError": ".core.foundation.errors",
    "PromptEvaluationError": ".core.foundation.errors",
    "PromptExecuted": ".core.foundation.events",
    "PromptFailed": ".core.foundation.events",
    "PromptRenderError": ".core.foundation.errors",
    "PromptRendered": ".core.foundation.events",
    "PromptResponse": ".core.agent.loop",
    "PromptStream": ".core.agent.stream",
    "PromptValidationError": ".core.foundation.errors",
    "ProviderAdapter": ".adapters.base",
    "ProviderError": ".core.foundation.errors",
    "RedisLimiter": ".core.throttling.redis",
    "RefusalError": ".core.foundation.errors",
    "RequestRetried": ".core.foundation.events",
    "ResourceBinding": ".core.prompting.resources",
    "ResourceError": ".core.foundation.errors",
    "RestoreFailedError": ".core.foundation.errors",
    "RetryPolicy": ".core.throttling.retry",
    "RoundFinished": ".core.foundation.events",
    "RoundRestarted": ".core.foundation.events",
    "Session": ".core.prompting.session",
    "Snapshot": ".core.prompting.session",
    "SnapshotError": ".core.foundation.errors",
    "SnapshotRestoreError": ".core.foundation.errors",
    "StreamEvent": ".core.foundation.events",
    "StreamNotFinishedError": ".core.foundation.errors",
    "TextDelta": ".core.foundation.events",
    "Thinking": ".core.foundation.settings",
    "ThinkingDelta": ".core.foundation.events",
    "ThinkingReceived": ".core.foundation.events",
    "ThrottleDetails": ".core.foundation.errors",
    "ThrottleError": ".core.foundation.errors",
    "ThrottleKind": ".core.foundation.errors",
    "Tool": ".core.prompting.tools",
    "ToolCallDelta": ".core.foundation.events",
    "ToolCallReady": ".core.foundation.events",
    "ToolCallStarted": ".core.foundation.events",
    "ToolContext": ".core.prompting.tools",
    "ToolInvoked": ".core.foundation.events",
    "ToolResult": ".core.foundation.results",
    "ToolSourceError": ".core.foundation.errors",
    "ToolValidationError": ".core.foundation.errors",
    "TransactionError": ".core.foundation.errors",
    "Transcript": ".core.foundation.transcript",
    "UnboundResourceError": ".core.foundation.errors",
    "UnsendableValueError": ".core.foundation.errors",
    "UnsupportedContentError": ".core.foundation.errors",
    "UnsupportedFeatureError": ".core.foundation.errors",
    "UnsupportedSettingWarning": ".core.foundation.errors",
    "Usage": ".core.foundation.messages",
    "UsageReported": ".core.foundation.events",
    "VisibilityExpansionRequired": ".core.foundation.errors",
    "WinkError": ".core.foundation.errors",
    "apply_visibility": ".core.prompting.visibility",
    "configure_logging": ".core.telemetry.log",
    "create_adapter": ".adapters.registry",
}

__all__ = sorted(_DYNAMIC_IMPORTS)  # pyright: ignore[reportUnsupportedDunderAll]  (listed in the stub)


def __getattr__(name: str) -> Any:
    module = _DYNAMIC_IMPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wink' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
