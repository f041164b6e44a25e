"""What each kind of answer means, the same on all four wire formats (OpenAI Chat, OpenAI
Responses, Anthropic, Gemini): the real SDKs against the emulator, the providers' own
error bodies (as recorded in tests/conformance, or as their public issue trackers quote
them), evaluated and streamed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.adapters import MODELS, PROVIDERS, make_adapter
from tests.helpers.prompts import make_prompt
from tests.helpers.wire import CONFORMANCE, load_recording, replay, request_once
from wink import (
    AuthenticationError,
    BadRequestError,
    ContentFilteredError,
    ContextWindowExceededError,
    NotFoundError,
    OutputTruncatedError,
    PermissionDeniedError,
    PromptEvaluationError,
    RefusalError,
    Session,
    ThrottleError,
    WinkError,
)
from wink.testing import Fault, ProviderEmulator, Turn

# --- answers that end without a usable final answer

PARTIAL = "Paris is the capital and"
REFUSED = "I can't help with that."

# (id, turn, {provider: (class, finish_reason, refusal, partial_text)}); a provider not
# named gets the "*" entry.
Expected = tuple[type[PromptEvaluationError], str, str | None, str | None]
ANSWERS: list[tuple[str, Turn, dict[str, Expected]]] = [
    (
        "cut-off",
        Turn.text(PARTIAL, finish="length"),
        {"*": (OutputTruncatedError, "length", None, PARTIAL)},
    ),
    (
        "refused",
        Turn.refusal(REFUSED),
        {
            "*": (RefusalError, "refusal", REFUSED, None),
            # Gemini has no refusal: the emulator answers it as Gemini does, a prompt
            # blocked by its safety filter (promptFeedback.blockReason)
            "google": (ContentFilteredError, "content_filter", None, None),
            # nor has Bedrock's Converse: a refusal ends as `content_filtered`
            "bedrock": (ContentFilteredError, "content_filter", None, None),
        },
    ),
    (
        "filtered",
        Turn.text(PARTIAL, finish="content_filter"),
        {
            "*": (ContentFilteredError, "content_filter", None, PARTIAL),
            # Anthropic has no content-filter stop reason: its classifiers stop the
            # answer with `refusal` (and no explanation)
            "anthropic": (RefusalError, "refusal", None, PARTIAL),
        },
    ),
]


def _stream_error(adapter: Any) -> WinkError | None:
    with adapter.stream(make_prompt(), session=Session()) as stream:
        try:
            for _ in stream:
                pass
        except WinkError as error:
            return error
    return None


@pytest.mark.parametrize("streamed", [False, True], ids=["evaluate", "stream"])
@pytest.mark.parametrize(("turn", "expected"), [pytest.param(*a[1:], id=a[0]) for a in ANSWERS])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unusable_answer_raises_the_same_class_with_the_same_fields(
    provider: str,
    turn: Turn,
    expected: dict[str, Expected],
    streamed: bool,
    emulator: ProviderEmulator,
) -> None:
    kind, reason, refusal, partial = expected.get(provider, expected["*"])
    emulator.enqueue(turn)
    adapter = make_adapter(provider, emulator)
    if streamed:  # the streamed round rebuilds the body and reuses the same parser
        error = _stream_error(adapter)
    else:
        with pytest.raises(WinkError) as info:
            adapter.evaluate(make_prompt(), session=Session())
        error = info.value
    assert type(error) is kind, error
    assert isinstance(error, PromptEvaluationError)
    assert (error.phase, error.status_code, error.finish_reason) == ("response", 200, reason)
    assert (error.refusal, error.partial_text) == (refusal, partial)
    if refusal is not None:
        assert refusal in str(error)


# --- rejected requests: every provider's own words, one class


def _recorded_stream_body(name: str) -> dict[str, Any]:
    """The JSON body of an error answer recorded on a streaming request."""
    record = json.loads((CONFORMANCE / "streams" / name).read_text(encoding="utf-8"))
    return json.loads(record["response"]["body"])


def _openai(status: int, message: str, code: str | None, **extra: Any) -> dict[str, Any]:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return {"error": {**error, **extra}}


def _anthropic(status: int, kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}


def _gemini(status: int, code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": code}}


AZURE_FILTER = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content "
    "management policy. Please modify your prompt and retry. To learn more about our "
    "content filtering policies please read our documentation: "
    "https://go.microsoft.com/fwlink/?linkid=2198766"
)
FLAGGED = (
    "Invalid prompt: your prompt was flagged as potentially violating our usage policy. "
    "Please try again with a different prompt: "
    "https://platform.openai.com/docs/guides/reasoning#advice-on-prompting"
)

# (id, provider, status, body, class)
REJECTIONS: list[tuple[str, str, int, Any, type[PromptEvaluationError]]] = [
    (
        "openai-context",
        "openai",
        400,
        _openai(
            400,
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 8227 tokens. Please reduce the length of the messages.",
            "context_length_exceeded",
            param="messages",
        ),
        ContextWindowExceededError,
    ),
    (
        "compatible-server-context-without-code",  # vLLM, OpenRouter: the words only
        "openai",
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, you "
                "requested 8203 tokens (7691 in the messages, 512 in the completion). Please "
                "reduce the length of the messages or completion.",
                "type": "BadRequestError",
            }
        },
        ContextWindowExceededError,
    ),
    (
        "responses-context",
        "openai-responses",
        400,
        _openai(
            400,
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again.",
            "context_length_exceeded",
            param="input",
        ),
        ContextWindowExceededError,
    ),
    (
        "azure-content-filter",
        "openai",
        400,
        {
            "error": {
                "message": AZURE_FILTER,
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
                "innererror": {"code": "ResponsibleAIPolicyViolation"},
            }
        },
        ContentFilteredError,
    ),
    (
        "openai-flagged-prompt",
        "openai",
        400,
        _openai(400, FLAGGED, "invalid_prompt"),
        ContentFilteredError,
    ),
    (
        "openai-project-without-the-model",
        "openai",
        403,
        _openai(403, "Project `proj_1` does not have access to model `gpt-4o`", "model_not_found"),
        PermissionDeniedError,
    ),
    (
        "anthropic-context-with-max-tokens",
        "anthropic",
        400,
        _anthropic(
            400,
            "invalid_request_error",
            "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again",
        ),
        ContextWindowExceededError,
    ),
    (
        "anthropic-request-too-large",
        "anthropic",
        413,
        _anthropic(
            413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
        ),
        BadRequestError,
    ),
    (
        "anthropic-permission",
        "anthropic",
        403,
        _anthropic(403, "permission_error", "Permission denied"),
        PermissionDeniedError,
    ),
    (
        "gemini-key-refused-with-a-400",  # recorded: Gemini says a bad key with a 400
        "google",
        400,
        _recorded_stream_body("google/http_400_api_key_invalid.json"),
        AuthenticationError,
    ),
    (
        "gemini-context",
        "google",
        400,
        _gemini(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200293) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
        ContextWindowExceededError,
    ),
    (
        "gemini-leaked-key",
        "google",
        403,
        _gemini(
            403,
            "PERMISSION_DENIED",
            "Your API key was reported as leaked. Please use another API key.",
        ),
        PermissionDeniedError,
    ),
]


@pytest.mark.parametrize(
    ("provider", "status", "body", "kind"), [pytest.param(*r[1:], id=r[0]) for r in REJECTIONS]
)
def test_a_providers_own_words_decide_the_class(
    provider: str, status: int, body: Any, kind: type[PromptEvaluationError]
) -> None:
    outcome, _, _ = request_once(provider, Fault.http(status, body))  # and never retried
    assert type(outcome) is kind, outcome
    assert isinstance(outcome, PromptEvaluationError)
    assert (outcome.phase, outcome.status_code) == ("request", status)
    assert outcome.provider_payload is not None
    assert outcome.provider_payload["status_code"] == status


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (_anthropic(402, "billing_error", "Your credit balance is too low."), 402),
        (
            _anthropic(
                400,
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API. Please go to "
                "Plans & Billing to upgrade or purchase credits.",
            ),
            400,
        ),
    ],
    ids=["402-billing-error", "400-credit-balance"],
)
def test_anthropic_out_of_credit_is_an_exhausted_quota(body: Any, status: int) -> None:
    outcome, _, _ = request_once("anthropic", Fault.http(status, body))
    assert isinstance(outcome, ThrottleError)
    details = outcome.details
    assert (details.kind, details.retry_safe, details.status_code) == (
        "quota_exhausted",
        False,
        status,
    )


@pytest.mark.parametrize(
    ("provider", "body", "kind"),
    [
        # Anthropic's 402 is its billing_error, whatever the body says (a gateway's page)
        ("anthropic", {"error": "Payment Required"}, "quota_exhausted"),
        # OpenRouter's insufficient credits, on the Chat Completions wire
        ("openai", {"error": {"code": 402, "message": "Insufficient credits"}}, "quota_exhausted"),
        # Gemini and Bedrock never answer 402: one from a proxy is a request error
        ("google", {"error": {"code": 402, "message": "Payment Required"}}, None),
        ("bedrock", {"message": "Payment Required"}, None),
    ],
)
def test_what_a_402_means_is_the_wires_word(
    provider: str, body: dict[str, Any], kind: str | None
) -> None:
    outcome, _, _ = request_once(provider, Fault.http(402, body))
    if kind is None:
        assert type(outcome) is BadRequestError, outcome
    else:
        assert isinstance(outcome, ThrottleError), outcome
        assert (outcome.details.kind, outcome.details.retry_safe) == (kind, False)
    assert isinstance(outcome, PromptEvaluationError)
    assert outcome.status_code == 402


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_529_is_an_overload_whoever_sends_it(provider: str) -> None:
    """Anthropic's 529 `overloaded_error` is retried as an overload; so is a 529 from any
    other wire (a 5xx: the server failed, not the request)."""
    body = _anthropic(529, "overloaded_error", "Overloaded") if provider == "anthropic" else {}
    outcome, _, _ = request_once(provider, Fault.http(529, body))
    assert isinstance(outcome, ThrottleError), outcome
    details = outcome.details
    assert (details.kind, details.retry_safe, details.status_code) == ("overloaded", True, 529)


# --- the recorded error answers of tests/conformance

RECORDED: list[tuple[str, str, type[PromptEvaluationError]]] = [
    ("openai", "openai/chat_400_unsupported_value.json", BadRequestError),
    ("openai", "openai/chat_404_model_not_found.json", NotFoundError),
    ("openai-responses", "openai/responses_400_invalid_temperature.json", BadRequestError),
    ("anthropic", "anthropic/400_invalid_request.json", BadRequestError),
    ("anthropic", "anthropic/404_not_found.json", NotFoundError),
    ("google", "google/404_not_found.json", NotFoundError),
]


@pytest.mark.parametrize(("provider", "name", "kind"), RECORDED, ids=[r[1] for r in RECORDED])
def test_each_recorded_rejection_has_its_class(
    provider: str, name: str, kind: type[PromptEvaluationError]
) -> None:
    outcome, _, _ = replay(provider, name)
    assert type(outcome) is kind
    assert outcome.status_code == load_recording(name)["response"]["status"]
    if isinstance(outcome, NotFoundError):  # what to check: the model asked for, named
        assert outcome.model == MODELS[provider]
        assert f"is the model name {MODELS[provider]!r} right?" in str(outcome)
