"""The public names of `wink`, each with the module that defines it: the one list.

Type checkers read the names from here; at run time `wink/__init__.py` imports each name
on first access, from its own literal map of the same names. Add a public name to both:
`tests/test_public_api.py` checks that they agree.
"""

__version__: str

from .adapters.base import (
    CountOptions as CountOptions,
    ProviderAdapter as ProviderAdapter,
)
from .adapters.evaluator import (
    EvaluateOptions as EvaluateOptions,
    TextOptions as TextOptions,
)
from .adapters.fallback import (
    FallbackAdapter as FallbackAdapter,
)
from .adapters.named import (
    AnthropicAdapter as AnthropicAdapter,
    BedrockAdapter as BedrockAdapter,
    GoogleAdapter as GoogleAdapter,
    OpenAIAdapter as OpenAIAdapter,
    OpenAIResponsesAdapter as OpenAIResponsesAdapter,
)
from .adapters.options import (
    AdapterOptions as AdapterOptions,
)
from .adapters.registry import (
    create_adapter as create_adapter,
)
from .core.agent.batch_job import (
    BatchItem as BatchItem,
    BatchJob as BatchJob,
)
from .core.agent.loop import (
    PromptResponse as PromptResponse,
)
from .core.agent.stream import (
    AsyncPromptStream as AsyncPromptStream,
    PromptStream as PromptStream,
)
from .core.foundation.batches import (
    BatchState as BatchState,
    BatchStatus as BatchStatus,
)
from .core.foundation.builtin import (
    BuiltinToolCall as BuiltinToolCall,
    Citation as Citation,
    CodeExecution as CodeExecution,
    UrlContext as UrlContext,
    UserLocation as UserLocation,
    WebSearch as WebSearch,
    WebSource as WebSource,
)
from .core.foundation.content import (
    Attachment as Attachment,
    Audio as Audio,
    Document as Document,
    Image as Image,
)
from .core.foundation.cost import (
    Cost as Cost,
    Prices as Prices,
    PriceSource as PriceSource,
)
from .core.foundation.errors import (
    AllAdaptersFailedError as AllAdaptersFailedError,
    AllAdaptersThrottledError as AllAdaptersThrottledError,
    AuthenticationError as AuthenticationError,
    BadRequestError as BadRequestError,
    BatchCancelledError as BatchCancelledError,
    BatchExpiredError as BatchExpiredError,
    BudgetExceededError as BudgetExceededError,
    CircularDependencyError as CircularDependencyError,
    ConfigurationError as ConfigurationError,
    ContentFilteredError as ContentFilteredError,
    ContextWindowExceededError as ContextWindowExceededError,
    DeadlineExceededError as DeadlineExceededError,
    DuplicateBindingError as DuplicateBindingError,
    EvaluationPhase as EvaluationPhase,
    InvalidArgumentError as InvalidArgumentError,
    NotFoundError as NotFoundError,
    OutputTruncatedError as OutputTruncatedError,
    PermissionDeniedError as PermissionDeniedError,
    PromptError as PromptError,
    PromptEvaluationError as PromptEvaluationError,
    PromptRenderError as PromptRenderError,
    PromptValidationError as PromptValidationError,
    ProviderError as ProviderError,
    RefusalError as RefusalError,
    ResourceError as ResourceError,
    RestoreFailedError as RestoreFailedError,
    SnapshotError as SnapshotError,
    SnapshotRestoreError as SnapshotRestoreError,
    StreamNotFinishedError as StreamNotFinishedError,
    ThrottleDetails as ThrottleDetails,
    ThrottleError as ThrottleError,
    ThrottleKind as ThrottleKind,
    ToolSourceError as ToolSourceError,
    ToolValidationError as ToolValidationError,
    TransactionError as TransactionError,
    UnboundResourceError as UnboundResourceError,
    UnpricedModelWarning as UnpricedModelWarning,
    UnsendableValueError as UnsendableValueError,
    UnsupportedContentError as UnsupportedContentError,
    UnsupportedFeatureError as UnsupportedFeatureError,
    UnsupportedSettingWarning as UnsupportedSettingWarning,
    VisibilityExpansionRequired as VisibilityExpansionRequired,
    WinkError as WinkError,
)
from .core.foundation.events import (
    AdapterSwitched as AdapterSwitched,
    ApprovalRequired as ApprovalRequired,
    CitationDelta as CitationDelta,
    OutputDelta as OutputDelta,
    OutputRejected as OutputRejected,
    PromptExecuted as PromptExecuted,
    PromptFailed as PromptFailed,
    PromptRendered as PromptRendered,
    RequestRetried as RequestRetried,
    RoundFinished as RoundFinished,
    RoundRestarted as RoundRestarted,
    StreamEvent as StreamEvent,
    TextDelta as TextDelta,
    ThinkingDelta as ThinkingDelta,
    ThinkingReceived as ThinkingReceived,
    ToolCallDelta as ToolCallDelta,
    ToolCallReady as ToolCallReady,
    ToolCallStarted as ToolCallStarted,
    ToolInvoked as ToolInvoked,
    UsageReported as UsageReported,
)
from .core.foundation.limits import (
    Budget as Budget,
    Deadline as Deadline,
)
from .core.foundation.messages import (
    FinishReason as FinishReason,
    Usage as Usage,
)
from .core.foundation.results import (
    ToolResult as ToolResult,
)
from .core.foundation.settings import (
    ModelSettings as ModelSettings,
    Thinking as Thinking,
)
from .core.foundation.transcript import (
    PendingToolCall as PendingToolCall,
    Transcript as Transcript,
)
from .core.prompting.functions import (
    function_tool as function_tool,
    tool as tool,
)
from .core.prompting.prompt import (
    Prompt as Prompt,
)
from .core.prompting.resources import (
    ResourceBinding as ResourceBinding,
)
from .core.prompting.sections import (
    MarkdownSection as MarkdownSection,
)
from .core.prompting.session import (
    Session as Session,
    Snapshot as Snapshot,
)
from .core.prompting.tools import (
    Tool as Tool,
    ToolContext as ToolContext,
)
from .core.prompting.visibility import apply_visibility as apply_visibility
from .core.telemetry.log import (
    configure_logging as configure_logging,
)
from .core.throttling.limiter import (
    InProcessLimiter as InProcessLimiter,
    Limiter as Limiter,
)
from .core.throttling.redis import (
    RedisLimiter as RedisLimiter,
)
from .core.throttling.retry import (
    RetryPolicy as RetryPolicy,
)
from .providers.openai.settings import (
    OpenAISettings as OpenAISettings,
)
