"""Conversations on the four wire formats: a history sent as each provider takes it, a
chat continued on another provider, system instructions in each provider's own field.

The emulator checks every request against the real APIs' rules (a tool call with no
result is its provider's 400) and, with `Turn.expecting`, that each request carried the
whole conversation: a test that passes sent nothing a provider rejects and lost nothing.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import KEY, MODELS, NO_RETRY, PROVIDERS, make_adapter
from wink import (
    FallbackAdapter,
    Image,
    InvalidArgumentError,
    MarkdownSection,
    Prompt,
    PromptResponse,
    Session,
    Thinking,
    Tool,
    ToolContext,
    ToolResult,
    Transcript,
    create_adapter,
)
from wink.adapters.base import ProviderAdapter
from wink.core.foundation.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.testing import EmulatedToolCall, Fault, ProviderEmulator, RecordedRequest, Turn


@dataclass(frozen=True)
class CityParams:
    city: str


def weather(params: CityParams, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"sunny in {params.city}")


WEATHER = Tool("weather", "Weather by city", weather)


def chat(text: str, instructions: str | None = None) -> Prompt:
    section = MarkdownSection(key="m", title="Message", template=text, tools=[WEATHER])
    return Prompt(name="chat", sections=[section], instructions=instructions)


def said(text: str) -> str:
    """A user turn as the history shows it (the rendered section)."""
    return f"user: ## Message\n\n{text}"


# --- every entry point takes a history and gives a transcript


def run(adapter: ProviderAdapter, prompt: Prompt, how: str, **call: Any) -> PromptResponse[Any]:
    if how == "evaluate":
        return adapter.evaluate(prompt, **call)
    if how == "evaluate_async":
        return asyncio.run(adapter.evaluate_async(prompt, **call))
    if how == "stream":
        with adapter.stream(prompt, **call) as stream:
            list(stream)
        return stream.response

    async def streamed() -> PromptResponse[Any]:
        async with adapter.stream_async(prompt, **call) as stream:
            async for _ in stream:
                pass
        return stream.response

    return asyncio.run(streamed())


@pytest.mark.parametrize("how", ["evaluate", "evaluate_async", "stream", "stream_async"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_entry_point_continues_a_history_and_gives_the_transcript(
    provider: str, how: str
) -> None:
    script = [
        Turn.text("Hello, Ada."),
        Turn.text("You are Ada.").expecting_history(
            said("I am Ada."), "assistant: Hello, Ada.", said("Who am I?")
        ),
    ]
    with ProviderEmulator(script) as emu:
        adapter = make_adapter(provider, emu)
        first = run(adapter, chat("I am Ada."), how)
        second = run(adapter, chat("Who am I?"), how, history=first.transcript)
    assert len(first.transcript) == 2
    assert second.text == "You are Ada."
    assert second.transcript[:2] == first.transcript.messages
    assert len(second.transcript) == 4
    assert KEY not in second.transcript.to_json()  # no secret in it


def tool_round_document() -> dict[str, Any]:
    """A saved transcript of one tool round, as JSON data to tamper with."""
    call = ToolCall("call_1", "weather", {"city": "Paris"})
    round_ = (
        UserMessage("Weather?"),
        AssistantMessage(None, (call,)),
        ToolResultMessage("call_1", "weather", "sunny in Paris"),
    )
    return json.loads(Transcript(round_).to_json())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_history_a_provider_would_refuse_is_refused_before_anything_is_sent(
    provider: str,
) -> None:
    unanswered = tool_round_document()
    unanswered["messages"][2] = {"type": "user", "content": [{"type": "text", "text": "?"}]}
    orphan = tool_round_document()
    del orphan["messages"][1]
    with ProviderEmulator() as emu:
        adapter = make_adapter(provider, emu)
        for document, problem in [
            (unanswered, "'call_1' have no result before message 2"),
            (orphan, "answers no call 'call_1'"),
        ]:
            with pytest.raises(InvalidArgumentError, match=problem):
                adapter.evaluate(chat("Hi"), history=Transcript.from_json(json.dumps(document)))
        with pytest.raises(InvalidArgumentError, match="history must be a wink Transcript"):
            adapter.evaluate(chat("Hi"), history=unanswered)  # type: ignore[arg-type]
        assert emu.requests == []


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def test_an_image_in_the_history_travels_to_another_provider() -> None:
    with ProviderEmulator([Turn.text("A red pixel.").expecting("image/png")]) as emu:
        seen = make_adapter("anthropic", emu).evaluate(
            chat("What is it?"), attachments=[Image.from_bytes(PNG, "image/png")]
        )
    saved = Transcript.from_json(seen.transcript.to_json())
    with ProviderEmulator([Turn.text("Red.").expecting("image/png")]) as emu:
        again = make_adapter("openai", emu).evaluate(chat("Its colour?"), history=saved)
    assert again.text == "Red."


def test_attachments_cannot_go_with_answers_to_pending_calls() -> None:
    waiting = Transcript(
        (
            UserMessage("Weather?"),
            AssistantMessage(None, (ToolCall("call_1", "weather", {"city": "Paris"}),)),
        )
    )
    with ProviderEmulator() as emu:
        adapter = make_adapter("openai", emu)
        with pytest.raises(InvalidArgumentError, match="attachments go in a new user turn"):
            adapter.evaluate(
                chat("Go"),
                history=waiting,
                approvals={"call_1": True},
                attachments=[Image.from_bytes(PNG, "image/png")],
            )
        assert emu.requests == []


# --- five turns, switching provider at turn three


THINKING = Thinking(effort="high", budget_tokens=2048, show=True)
THINKING_MODELS = {
    "openai": "o4-mini",
    "openai-responses": "o4-mini",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-3-flash-preview",  # signs every step and checks it
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}


def adapter_on(provider: str, emu: ProviderEmulator, model: str, **options: Any) -> ProviderAdapter:
    return create_adapter(
        f"{provider}:{model}",
        base_url=emu.base_url(provider),  # type: ignore[arg-type]
        api_key=KEY,
        retry_policy=NO_RETRY,
        **options,
        **({"region": "us-east-1"} if provider == "bedrock" else {}),
    )


def thinking_adapter(provider: str, emu: ProviderEmulator) -> ProviderAdapter:
    return adapter_on(provider, emu, THINKING_MODELS[provider], thinking=THINKING)


def five_turns(first: str) -> list[tuple[str, list[Turn]]]:
    """The chat: each user text, and the model's turns answering it. Call ids from a
    provider that allows them are ones another must have rewritten."""
    odd_id = None if first == "anthropic" else "weather.paris/1"
    paris = EmulatedToolCall("weather", {"city": "Paris"}, id=odd_id)
    rome = EmulatedToolCall("weather", {"city": "Rome"})
    return [
        ("I am Ada.", [Turn.text("Hello, Ada.", thinking="Greet her.")]),
        (
            "Weather in Paris?",
            [Turn.tool_calls(paris, thinking="Look it up."), Turn.text("Sunny in Paris.")],
        ),
        (
            "And in Rome?",
            [Turn.tool_calls(rome, thinking="Again."), Turn.text("Sunny in Rome too.")],
        ),
        ("What is my name?", [Turn.text("Ada.", thinking="She said.")]),
        ("Bye.", [Turn.text("Bye, Ada.")]),
    ]


def expected_script(turns: list[tuple[str, list[Turn]]]) -> list[list[Turn]]:
    """Each turn's model turns, each expecting the whole conversation so far."""
    lines: list[str] = []
    script: list[list[Turn]] = []
    for text, answers in turns:
        lines.append(said(text))
        expecting: list[Turn] = []
        for answer in answers:
            expecting.append(answer.expecting_history(*lines))
            if answer.content:
                lines.append(f"assistant: {answer.content}")
            for call in answer.calls:
                lines.append(f"call weather: {json.dumps(call.arguments, separators=(',', ':'))}")
                lines.append(f"result weather: sunny in {call.arguments['city']}")  # type: ignore[index]
        script.append(expecting)
    return script


def provider_only_tokens(transcript: Transcript, origin: str) -> set[str]:
    """The signatures, encrypted reasoning and thought signatures `origin`'s turns carry."""
    found: set[str] = set()
    for message in transcript:
        if not isinstance(message, AssistantMessage) or message.origin != origin:
            continue
        for part in message.thinking:
            found.update(value for value in (part.signature, part.redacted) if value)
        items = json.dumps(message.native.items) if message.native is not None else ""
        for call in message.tool_calls:
            found.update(str(v) for v in (call.provider_data or {}).values() if isinstance(v, str))
        found.update(
            token for token in ("encrypted_content", "thoughtSignature") if f'"{token}"' in items
        )
    return {token for token in found if len(token) > 8}


@pytest.mark.parametrize(
    ("first", "second"),
    [(a, b) for a, b in itertools.product(PROVIDERS, PROVIDERS) if a != b],
)
def test_a_five_turn_chat_continues_on_another_provider_at_turn_three(
    first: str, second: str
) -> None:
    turns = five_turns(first)
    script = expected_script(turns)
    transcript = Transcript()
    with ProviderEmulator([turn for answers in script[:2] for turn in answers]) as before:
        adapter = thinking_adapter(first, before)
        for text, _ in turns[:2]:
            transcript = adapter.evaluate(chat(text), history=transcript).transcript
    foreign = provider_only_tokens(transcript, adapter.name)
    saved = transcript.to_json()  # kept on disk between the two providers
    transcript = Transcript.from_json(saved)
    with ProviderEmulator([turn for answers in script[2:] for turn in answers]) as after:
        adapter = thinking_adapter(second, after)
        for text, _ in turns[2:]:
            response = adapter.evaluate(chat(text), history=transcript)
            transcript = response.transcript
        bodies = json.dumps([request.body for request in after.requests])
    assert response.text == "Bye, Ada."
    assert [str(entry) for entry in after.requests[-1].history][:4] == [
        said("I am Ada."),
        "assistant: Hello, Ada.",
        said("Weather in Paris?"),
        'call weather: {"city":"Paris"}',
    ]
    assert len(transcript) == 14  # 5 user turns, 7 model turns, 2 tool results
    before_switch = Transcript.from_json(saved)
    assert transcript[: len(before_switch)] == before_switch.messages  # nothing lost
    leaked = [token for token in foreign if token in bodies]
    assert leaked == []  # no provider-only part went to the other provider


# --- instructions


INSTRUCTIONS_FIELDS = {
    "openai": lambda body: body["messages"][0],
    "openai-responses": lambda body: body["instructions"],
    "anthropic": lambda body: body["system"],
    "google": lambda body: body["systemInstruction"],
    "bedrock": lambda body: body["system"],
}
EXPECTED_FIELDS = {
    "openai": {"role": "system", "content": "Answer in French."},
    "openai-responses": "Answer in French.",
    "anthropic": "Answer in French.",
    "google": {"parts": [{"text": "Answer in French."}]},
    "bedrock": [{"text": "Answer in French."}],
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_instructions_go_in_each_providers_own_field(provider: str) -> None:
    with ProviderEmulator([Turn.text("Bonjour.")]) as emu:
        make_adapter(provider, emu).evaluate(chat("Hi", instructions="Answer in French."))
        (request,) = emu.requests
    assert INSTRUCTIONS_FIELDS[provider](request.body) == EXPECTED_FIELDS[provider]
    assert request.instructions == "Answer in French."
    assert [str(entry) for entry in request.history] == [said("Hi")]  # not a user turn


@pytest.mark.parametrize(
    ("model", "first"),
    [
        ("gpt-4.1", {"role": "system", "content": "Be brief."}),
        ("o4-mini", {"role": "developer", "content": "Be brief."}),
        ("o1-mini", {"role": "user", "content": "Be brief.\n\n## Message\n\nHi"}),
    ],
)
def test_chat_completions_takes_instructions_in_the_role_the_model_takes(
    model: str, first: dict[str, str]
) -> None:
    """o1-mini refuses the system and developer roles (the emulator answers its 400): its
    instructions go at the head of the first user turn."""
    with ProviderEmulator([Turn.text("Hi.")]) as emu:
        adapter_on("openai", emu, model).evaluate(chat("Hi", instructions="Be brief."))
        (request,) = emu.requests
    assert request.body["messages"][0] == first
    assert request.body["messages"][-1]["role"] == "user"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_current_prompts_instructions_apply_in_a_continued_conversation(
    provider: str,
) -> None:
    with ProviderEmulator([Turn.text("Bonjour."), Turn.text("Hallo.")]) as emu:
        adapter = make_adapter(provider, emu)
        first = adapter.evaluate(chat("Hi", instructions="Answer in French."))
        adapter.evaluate(chat("Again", instructions="Answer in German."), history=first.transcript)
        instructions = [request.instructions for request in emu.requests]
    assert instructions == ["Answer in French.", "Answer in German."]


# --- a history on a fallback chain


def test_a_fallback_chain_continues_a_history_on_the_adapter_that_serves() -> None:
    with ProviderEmulator() as emu:
        emu.enqueue(
            Turn.text("Hello, Ada."),
            Fault.overloaded(),
            Turn.text("You are Ada.").expecting_history(
                said("I am Ada."), "assistant: Hello, Ada.", said("Who am I?")
            ),
        )
        first = make_adapter("anthropic", emu).evaluate(chat("I am Ada."))
        chain = FallbackAdapter([make_adapter("anthropic", emu), make_adapter("google", emu)])
        response = chain.evaluate(chat("Who am I?"), history=first.transcript, session=Session())
        served = [request.provider for request in emu.requests]
    assert served == ["anthropic", "anthropic", "google"]
    assert response.text == "You are Ada."
    last = response.transcript[-1]
    assert isinstance(last, AssistantMessage)
    assert last.origin == f"google:{MODELS['google']}"


def test_two_adapters_of_one_name_in_a_chain_do_not_share_their_turns() -> None:
    """Two accounts of one model: reasoning one made is foreign to the other."""
    with ProviderEmulator() as emu:
        one, two = (make_adapter("openai-responses", emu) for _ in range(2))
        chain = FallbackAdapter([one, two])
        emu.enqueue(
            Turn.tool_calls(EmulatedToolCall("weather", {"city": "Paris"})),
            Fault.overloaded(),
            Turn.text("Sunny."),
        )
        response = chain.evaluate(chat("Weather?"))
    origins = [m.origin for m in response.transcript if isinstance(m, AssistantMessage)]
    name = f"openai-responses:{MODELS['openai-responses']}"
    assert origins == [f"{name}#1", f"{name}#2"]


def request_history(request: RecordedRequest) -> list[str]:
    return [str(entry) for entry in request.history]
