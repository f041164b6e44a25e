"""The public names of `wink`, each with the module that defines it: the one list.

Type checkers read the names from here; at run time `wink/__init__.py` reads this file
and imports each name on first access. Add a public name here and nowhere else.
"""

__version__: str

from .adapters.base import (
    ProviderAdapter as ProviderAdapter,
)
from .adapters.fallback import (
    FallbackAdapter as FallbackAdapter,
)
from .adapters.named import (
    AnthropicAdapter as AnthropicAdapter,
)
from .adapters.named import (
    GoogleAdapter as GoogleAdapter,
)
from .adapters.named import (
    OpenAIAdapter as OpenAIAdapter,
)
from .adapters.named import (
    OpenAIResponsesAdapter as OpenAIResponsesAdapter,
)
from .adapters.options import (
    AdapterOptions as AdapterOptions,
)
from .adapters.registry import (
    create_adapter as create_adapter,
)
from .core.agent.loop import (
    PromptResponse as PromptResponse,
)
from .core.agent.stream import (
    AsyncPromptStream as AsyncPromptStream,
)
from .core.agent.stream import (
    PromptStream as PromptStream,
)
from .core.foundation.errors import (
    AllAdaptersFailedError as AllAdaptersFailedError,
)
from .core.foundation.errors import (
    AllAdaptersThrottledError as AllAdaptersThrottledError,
)
from .core.foundation.errors import (
    AuthenticationError as AuthenticationError,
)
from .core.foundation.errors import (
    BadRequestError as BadRequestError,
)
from .core.foundation.errors import (
    CircularDependencyError as CircularDependencyError,
)
from .core.foundation.errors import (
    ConfigurationError as ConfigurationError,
)
from .core.foundation.errors import (
    ContentFilteredError as ContentFilteredError,
)
from .core.foundation.errors import (
    ContextWindowExceededError as ContextWindowExceededError,
)
from .core.foundation.errors import (
    DeadlineExceededError as DeadlineExceededError,
)
from .core.foundation.errors import (
    DuplicateBindingError as DuplicateBindingError,
)
from .core.foundation.errors import (
    EvaluationPhase as EvaluationPhase,
)
from .core.foundation.errors import (
    InvalidArgumentError as InvalidArgumentError,
)
from .core.foundation.errors import (
    NotFoundError as NotFoundError,
)
from .core.foundation.errors import (
    OutputTruncatedError as OutputTruncatedError,
)
from .core.foundation.errors import (
    PermissionDeniedError as PermissionDeniedError,
)
from .core.foundation.errors import (
    PromptError as PromptError,
)
from .core.foundation.errors import (
    PromptEvaluationError as PromptEvaluationError,
)
from .core.foundation.errors import (
    PromptRenderError as PromptRenderError,
)
from .core.foundation.errors import (
    PromptValidationError as PromptValidationError,
)
from .core.foundation.errors import (
    ProviderError as ProviderError,
)
from .core.foundation.errors import (
    RefusalError as RefusalError,
)
from .core.foundation.errors import (
    ResourceError as ResourceError,
)
from .core.foundation.errors import (
    RestoreFailedError as RestoreFailedError,
)
from .core.foundation.errors import (
    SnapshotError as SnapshotError,
)
from .core.foundation.errors import (
    SnapshotRestoreError as SnapshotRestoreError,
)
from .core.foundation.errors import (
    StreamNotFinishedError as StreamNotFinishedError,
)
from .core.foundation.errors import (
    ThrottleDetails as ThrottleDetails,
)
from .core.foundation.errors import (
    ThrottleError as ThrottleError,
)
from .core.foundation.errors import (
    ThrottleKind as ThrottleKind,
)
from .core.foundation.errors import (
    ToolValidationError as ToolValidationError,
)
from .core.foundation.errors import (
    TransactionError as TransactionError,
)
from .core.foundation.errors import (
    UnboundResourceError as UnboundResourceError,
)
from .core.foundation.errors import (
    UnsendableValueError as UnsendableValueError,
)
from .core.foundation.errors import (
    UnsupportedSettingWarning as UnsupportedSettingWarning,
)
from .core.foundation.errors import (
    VisibilityExpansionRequired as VisibilityExpansionRequired,
)
from .core.foundation.errors import (
    WinkError as WinkError,
)
from .core.foundation.events import (
    AdapterSwitched as AdapterSwitched,
)
from .core.foundation.events import (
    OutputRejected as OutputRejected,
)
from .core.foundation.events import (
    PromptExecuted as PromptExecuted,
)
from .core.foundation.events import (
    PromptFailed as PromptFailed,
)
from .core.foundation.events import (
    PromptRendered as PromptRendered,
)
from .core.foundation.events import (
    RequestRetried as RequestRetried,
)
from .core.foundation.events import (
    RoundFinished as RoundFinished,
)
from .core.foundation.events import (
    RoundRestarted as RoundRestarted,
)
from .core.foundation.events import (
    StreamEvent as StreamEvent,
)
from .core.foundation.events import (
    TextDelta as TextDelta,
)
from .core.foundation.events import (
    ThinkingDelta as ThinkingDelta,
)
from .core.foundation.events import (
    ThinkingReceived as ThinkingReceived,
)
from .core.foundation.events import (
    ToolCallReady as ToolCallReady,
)
from .core.foundation.events import (
    ToolCallStarted as ToolCallStarted,
)
from .core.foundation.events import (
    ToolInvoked as ToolInvoked,
)
from .core.foundation.events import (
    UsageReported as UsageReported,
)
from .core.foundation.limits import (
    Budget as Budget,
)
from .core.foundation.limits import (
    Deadline as Deadline,
)
from .core.foundation.messages import (
    FinishReason as FinishReason,
)
from .core.foundation.messages import (
    Usage as Usage,
)
from .core.foundation.results import (
    ToolResult as ToolResult,
)
from .core.foundation.settings import (
    ModelSettings as ModelSettings,
)
from .core.foundation.settings import (
    Thinking as Thinking,
)
from .core.limiter import (
    InProcessLimiter as InProcessLimiter,
)
from .core.limiter import (
    Limiter as Limiter,
)
from .core.prompting.prompt import (
    MarkdownSection as MarkdownSection,
)
from .core.prompting.prompt import (
    Prompt as Prompt,
)
from .core.prompting.prompt import (
    apply_visibility as apply_visibility,
)
from .core.prompting.resources import (
    ResourceBinding as ResourceBinding,
)
from .core.prompting.session import (
    Session as Session,
)
from .core.prompting.session import (
    Snapshot as Snapshot,
)
from .core.prompting.tools import (
    Tool as Tool,
)
from .core.prompting.tools import (
    ToolContext as ToolContext,
)
from .core.telemetry.log import (
    configure_logging as configure_logging,
)
from .core.throttling.retry import (
    RetryPolicy as RetryPolicy,
)
from .redis_limiter import (
    RedisLimiter as RedisLimiter,
)
