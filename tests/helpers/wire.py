"""One request through a real adapter (runner, translator, SDK, HTTP) to the emulator, and
the conformance recordings in tests/conformance replayed that way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from wink import PromptEvaluationError, ThrottleError, WinkError, create_adapter
from wink.adapters.base import ProviderAdapter
from wink.core.foundation.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.core.foundation.runtime import portal
from wink.testing import Fault, ProviderEmulator, Turn

from .adapters import KEY, MODELS, NO_RETRY

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"  # recorded traffic, verbatim
HI: tuple[Message, ...] = (UserMessage("hi"),)
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}

Outcome = ModelResponse | WinkError


def load_recording(name: str) -> dict[str, Any]:
    """A recording by its path under tests/conformance, e.g. "google/function_call.json"."""
    return json.loads((CONFORMANCE / name).read_text(encoding="utf-8"))


def failed_round(call: ToolCall, failure: str) -> tuple[Message, ...]:
    """A question, the model's `call` and its failed result: the transcript behind a
    recorded request that carries a failed tool result."""
    return (
        UserMessage("hi"),
        AssistantMessage(tool_calls=(call,)),
        ToolResultMessage(call.id, call.name, failure, success=False),
    )


def send_once(
    adapter: ProviderAdapter, messages: tuple[Message, ...] = HI, *, sync: bool = False
) -> Outcome:
    """One request through `adapter`'s runner; the answer or the `WinkError`. `sync=True`
    sends it as `evaluate()` does (on the portal), else as `evaluate_async()`."""

    async def once() -> Outcome:
        try:
            client = adapter.model_client(blocking=sync)
            return await client.request(ModelRequest("recorded", messages))
        except WinkError as error:
            return error
        finally:
            await adapter.aclose()

    return portal().call(once()) if sync else asyncio.run(once())


def request_once(
    provider: str,
    fault: Fault | None = None,
    messages: tuple[Message, ...] = HI,
    *,
    sync: bool = False,
    **options: Any,
) -> tuple[Outcome, ProviderEmulator, ProviderAdapter]:
    """`send_once` to a fresh emulator that answers with `fault` (else the text "Paris.");
    asserts the request went out exactly once (never retried, whatever the outcome)."""
    options.setdefault("api_key", KEY)
    options.setdefault("retry_policy", NO_RETRY)
    with ProviderEmulator([Turn.text("Paris.")]) as emulator:
        if fault is not None:
            emulator.inject(fault)
        adapter = create_adapter(
            f"{provider}:{MODELS[provider]}", base_url=emulator.base_url(provider), **options
        )
        outcome = send_once(adapter, messages, sync=sync)
    assert len(emulator.requests) == 1
    return outcome, emulator, adapter


def replay(
    provider: str, name: str, messages: tuple[Message, ...] = HI
) -> tuple[Outcome, ProviderEmulator, ProviderAdapter]:
    """`request_once` answered by the recording `name`: its status, headers and body."""
    response = load_recording(name)["response"]
    headers = {
        key: value
        for key, value in (response.get("headers") or {}).items()
        if key not in _HOP_BY_HOP
    }
    return request_once(
        provider, Fault.http(response["status"], response["body"], headers), messages
    )


def ok(outcome: Outcome) -> ModelResponse:
    assert isinstance(outcome, ModelResponse), outcome
    return outcome


def request_error(outcome: Outcome) -> PromptEvaluationError:
    """The outcome as a request-side error: `phase="request"`, not a throttle."""
    assert isinstance(outcome, PromptEvaluationError), outcome
    assert not isinstance(outcome, ThrottleError)
    assert outcome.phase == "request"
    return outcome
