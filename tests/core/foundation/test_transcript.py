"""`Transcript`: an immutable conversation a provider would take, and its JSON format
(`wink.core.foundation.transcript`)."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest

from wink import Document, Image, InvalidArgumentError, PendingToolCall, ToolResult, Transcript
from wink.core.foundation.content import CachePoint, TextPart
from wink.core.foundation.messages import (
    AssistantMessage,
    NativeOutput,
    SystemMessage,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wink.core.foundation.transcript import check_continuation

ASK = UserMessage("Weather in Paris and Rome?")
CALLS = AssistantMessage(
    "Checking.",
    (
        ToolCall("toolu_1", "weather", {"city": "Paris"}, {"thought_signature": "sig"}),
        ToolCall("toolu_2", "weather", '{"city": "Rome"}'),
    ),
    {"thought_signature": "text-sig"},
    thinking=(
        ThinkingPart("anthropic", "Two cities.", signature="s1", raw={"type": "thinking"}),
        ThinkingPart("anthropic", redacted="opaque"),
    ),
    native=NativeOutput("anthropic", ({"type": "text", "text": "Checking."},)),
    origin="anthropic:claude-sonnet-4-6",
)
PARIS = ToolResultMessage("toolu_1", "weather", "sunny")
ROME = ToolResultMessage("toolu_2", "weather", "no station", success=False)
ANSWER = AssistantMessage("Sunny in Paris.", origin="anthropic:claude-sonnet-4-6")
WHOLE = (ASK, CALLS, PARIS, ROME, ANSWER)


# --- a value


def test_a_transcript_is_an_immutable_sequence_of_its_messages() -> None:
    transcript = Transcript(list(WHOLE))
    assert len(transcript) == 5
    assert list(transcript) == list(WHOLE)
    assert transcript[0] is ASK
    assert transcript[-2:] == (ROME, ANSWER)
    assert transcript.messages == WHOLE  # a tuple: the list given is not kept
    with pytest.raises(dataclasses.FrozenInstanceError):
        transcript.messages = ()  # type: ignore[misc]
    assert transcript == Transcript(WHOLE)
    assert repr(transcript) == "Transcript(5 messages)"
    assert len(Transcript()) == 0


def test_the_calls_a_transcript_ends_with_are_pending() -> None:
    transcript = Transcript((ASK, CALLS, PARIS))
    assert transcript.pending == (PendingToolCall("toolu_2", "weather", {"city": "Rome"}),)
    assert repr(transcript) == "Transcript(3 messages, 1 pending)"
    assert Transcript(WHOLE).pending == ()
    everything = Transcript((ASK, CALLS))
    assert [call.id for call in everything.pending] == ["toolu_1", "toolu_2"]
    assert everything.pending[0].arguments == {"city": "Paris"}  # decoded, a dict


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ((CALLS, PARIS, ROME), "a conversation starts with a user turn"),
        ((ASK, PARIS), "answers no call 'toolu_1'"),
        ((ASK, CALLS, PARIS, PARIS, ROME), "answers again call 'toolu_1'"),
        ((ASK, CALLS, PARIS, UserMessage("and?")), "'toolu_2' have no result before message 3"),
        ((ASK, CALLS, PARIS, ANSWER), "'toolu_2' have no result before message 3"),
        (
            (ASK, CALLS, ToolResultMessage("toolu_1", "forecast", "?"), ROME),
            "answers call 'toolu_1' of 'weather' as 'forecast'",
        ),
        (
            (ASK, AssistantMessage(None, (ToolCall("a", "w", {}), ToolCall("a", "w", {})))),
            "two calls with the id 'a'",
        ),
    ],
)
def test_a_conversation_a_provider_would_refuse_is_refused(
    messages: tuple[Any, ...], problem: str
) -> None:
    with pytest.raises(InvalidArgumentError, match="a provider would refuse") as caught:
        Transcript(messages)
    assert problem in str(caught.value)
    assert caught.value.argument == "messages"


def test_instructions_and_other_values_are_not_messages_of_a_transcript() -> None:
    for stranger in (SystemMessage("Be brief."), "hello", {"role": "user"}):
        with pytest.raises(InvalidArgumentError, match="user, model and tool-result messages"):
            Transcript((ASK, stranger))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"use Transcript\.from_json"):
        Transcript('{"version": 1, "messages": []}')  # type: ignore[arg-type]


# --- the JSON format


def test_json_round_trips_every_field() -> None:
    transcript = Transcript(WHOLE)
    text = transcript.to_json()
    assert isinstance(text, str)
    again = Transcript.from_json(text)
    assert again == transcript
    assert again.messages[1] == CALLS  # thinking, native, provider data, origin, both args
    assert Transcript.from_json(text.encode()) == transcript  # bytes read as well


def test_the_format_is_version_1_with_tagged_messages_and_parts() -> None:
    document = json.loads(Transcript(WHOLE).to_json())
    assert document["version"] == 1
    kinds = [message["type"] for message in document["messages"]]
    assert kinds == ["user", "assistant", "tool_result", "tool_result", "assistant"]
    assert document["messages"][0] == {
        "type": "user",
        "content": [{"type": "text", "text": "Weather in Paris and Rome?"}],
    }
    assert document["messages"][3] == {
        "type": "tool_result",
        "call_id": "toolu_2",
        "name": "weather",
        "content": [{"type": "text", "text": "no station"}],
        "success": False,
    }
    calls = document["messages"][1]["tool_calls"]
    assert calls[0]["arguments"] == {"city": "Paris"}  # an object stays an object
    assert calls[1]["arguments"] == '{"city": "Rome"}'  # a string stays a string


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def test_images_documents_audio_and_cache_points_round_trip() -> None:
    picture = Image.from_bytes(PNG, "image/png", name="pixel.png")
    linked = Image.from_url("https://example.com/cat.jpg")
    notes = Document.from_text("Paris is sunny.", name="notes.txt")
    turn = UserMessage((TextPart("Look."), picture, linked, CachePoint(), TextPart("Well?")))
    calls = AssistantMessage(None, (ToolCall("c1", "chart", {}),))
    result = ToolResultMessage("c1", "chart", "the chart", attachments=(notes,))
    transcript = Transcript((turn, calls, result))
    again = Transcript.from_json(transcript.to_json())
    assert again == transcript
    document = json.loads(transcript.to_json())
    assert document["messages"][0]["content"][1] == {
        "type": "image",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
        "name": "pixel.png",
    }
    assert document["messages"][0]["content"][2] == {
        "type": "image",
        "media_type": "image/jpeg",
        "url": "https://example.com/cat.jpg",
    }
    assert document["messages"][0]["content"][3] == {"type": "cache_point"}
    assert [part["type"] for part in document["messages"][2]["content"]] == ["text", "document"]


def test_the_json_is_always_writable_as_utf8() -> None:
    odd = Transcript((UserMessage("Café \ud800"), AssistantMessage("Noté.")))
    text = odd.to_json()
    text.encode()  # a lone surrogate (JSON can carry one) stays escaped
    assert Transcript.from_json(text) == odd
    assert "Café" in Transcript((UserMessage("Café"),)).to_json()  # readable otherwise


def test_a_writer_leaves_out_every_field_at_its_default() -> None:
    """So a transcript that uses nothing newer reads in any version 1 reader."""
    plain = Transcript((UserMessage("Hi"), AssistantMessage("Hello.")))
    assert json.loads(plain.to_json()) == {
        "version": 1,
        "messages": [
            {"type": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"type": "assistant", "text": "Hello."},
        ],
    }


def document_with(change: Any) -> str:
    document = json.loads(Transcript(WHOLE).to_json())
    change(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "the text is not JSON"),
        ("[]", "the transcript must be a JSON object, got a list"),
        ('{"messages": []}', "the transcript has no 'version'"),
        ('{"version": "1", "messages": []}', "version must be a whole number, got a string"),
        ('{"version": 2, "messages": []}', "version 2 is newer than this wink reads (1)"),
        ('{"version": 1, "messages": [], "title": "x"}', "unknown field 'title'"),
        (
            document_with(lambda d: d["messages"].append({"type": "image"})),
            "messages[5] is of the unknown type 'image'",
        ),
        (
            document_with(lambda d: d["messages"][0]["content"].append({"type": "video"})),
            "messages[0].content[1] is of the unknown part type 'video' (known: text, image, "
            "document, audio, cache_point)",
        ),
        (
            document_with(lambda d: d["messages"][2]["content"].append({"type": "cache_point"})),
            "messages[2].content[1] is of the unknown part type 'cache_point' (known: text, "
            "image, document, audio)",
        ),
        (
            document_with(
                lambda d: d["messages"][0]["content"].append(
                    {"type": "image", "media_type": "image/png", "data": "not base64!"}
                )
            ),
            "messages[0].content[1]: ",
        ),
        (
            document_with(
                lambda d: d["messages"][0]["content"].append(
                    {"type": "image", "media_type": "image/png", "data": "aGVsbG8="}
                )
            ),
            "messages[0].content[1]: Image: the bytes are not image/png",
        ),
        (
            document_with(lambda d: d["messages"][1].update(mood="happy")),
            "messages[1] has the unknown field 'mood'",
        ),
        (
            document_with(lambda d: d["messages"][1]["tool_calls"][0].update(weight=2)),
            "messages[1].tool_calls[0] has the unknown field 'weight'",
        ),
        (
            document_with(lambda d: d["messages"][2].pop("call_id")),
            "messages[2] has no 'call_id'",
        ),
        (
            document_with(lambda d: d["messages"].pop(2)),
            "a provider would refuse this conversation",
        ),
    ],
)
def test_anything_but_a_version_1_transcript_is_refused_saying_where(
    text: str, problem: str
) -> None:
    with pytest.raises(InvalidArgumentError, match="not a wink transcript") as caught:
        Transcript.from_json(text)
    assert problem in str(caught.value)
    assert caught.value.argument == "text"


def test_from_json_takes_text() -> None:
    with pytest.raises(InvalidArgumentError, match="takes JSON text, got a dict"):
        Transcript.from_json({"version": 1})  # type: ignore[arg-type]


# --- history= and approvals=, checked at the call


WAITING = Transcript((ASK, CALLS, PARIS))


def test_a_history_that_ends_in_pending_calls_needs_an_answer_for_each() -> None:
    check_continuation(WAITING, {"toolu_2": True})
    check_continuation(WAITING, {"toolu_2": False})
    check_continuation(WAITING, {"toolu_2": ToolResult.ok("sunny")})
    check_continuation(Transcript(WHOLE), None)
    check_continuation(None, None)
    with pytest.raises(InvalidArgumentError, match="ends in calls awaiting approval") as caught:
        check_continuation(WAITING, None)
    assert caught.value.argument == "approvals"
    with pytest.raises(InvalidArgumentError, match=r"no answer for the call\(s\) 'toolu_2'"):
        check_continuation(WAITING, {})
    with pytest.raises(InvalidArgumentError, match="do not await approval: 'toolu_1'"):
        check_continuation(WAITING, {"toolu_2": True, "toolu_1": True})
    with pytest.raises(InvalidArgumentError, match="the history ends in no such call"):
        check_continuation(Transcript(WHOLE), {"toolu_2": True})
    with pytest.raises(InvalidArgumentError, match="the history ends in no such call"):
        check_continuation(None, {"toolu_2": True})


@pytest.mark.parametrize(
    ("history", "approvals", "problem"),
    [
        ("[]", None, "history must be a wink Transcript"),
        (list(WHOLE), None, "history must be a wink Transcript"),
        (WAITING, [("toolu_2", True)], "approvals must be a mapping"),
        (WAITING, {"toolu_2": "yes"}, "to True, False or a ToolResult"),
        (WAITING, {2: True}, "to True, False or a ToolResult"),
    ],
)
def test_wrong_history_and_approvals_values_are_refused(
    history: object, approvals: object, problem: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=problem):
        check_continuation(history, approvals)
