"""tests/conformance/multimodal: real requests with images, documents and audio, tool
results with media, prompt-cache traffic and the providers' 400s for refused media.

Each translator must produce the part shapes the real API accepted (built from the
recording's own bytes and URLs), parse each recorded answer under wink's one usage rule
(`input_tokens` counts cached and cache-write tokens too), and the recorded 400s must
become `BadRequestError`s; the emulator must answer the recorded bad requests with the
recorded 400s.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.helpers.wire import replay, request_error
from wink import Audio, BadRequestError, Document, Image, UnsupportedContentError
from wink.core.foundation.content import CachePoint, TextPart
from wink.core.foundation.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from wink.core.foundation.settings import ModelSettings
from wink.providers.anthropic import messages as anthropic
from wink.providers.google import generate as google
from wink.providers.openai import chat, responses
from wink.providers.openai.settings import OpenAISettings
from wink.testing import ProviderEmulator

MULTIMODAL = Path(__file__).resolve().parents[1] / "conformance" / "multimodal"
NO_SETTINGS = ModelSettings()


def load(name: str) -> dict[str, Any]:
    return json.loads((MULTIMODAL / name).read_text(encoding="utf-8"))


def sent(name: str) -> dict[str, Any]:
    return load(name)["request"]["body"]


def decoded(text: str) -> bytes:
    """Base64 or base64url (the google-genai SDK sends the latter), as bytes."""
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "==")


def from_data_url(url: str) -> bytes:
    return decoded(url.split(",", 1)[1])


def body_of(builder: str, *messages: Message, settings: ModelSettings = NO_SETTINGS) -> Any:
    request = ModelRequest("recorded", messages)
    if builder == "chat":
        return chat.build_request(request, "gpt-4o", settings)
    if builder == "responses":
        return responses.build_request(request, "gpt-4o", settings)
    if builder == "anthropic":
        return anthropic.build_request(request, "claude-sonnet-4-5", settings)
    return google.build_request(request, settings, "gemini-2.5-flash")


def without(block: Any, *keys: str) -> Any:
    """`block` without `keys` at any depth (optional fields wink leaves to their default)."""
    if isinstance(block, dict):
        return {k: without(v, *keys) for k, v in block.items() if k not in keys}
    if isinstance(block, list):
        return [without(item, *keys) for item in block]
    return block


# --- the user turn: each part as the API took it


def test_chat_image_by_url_and_as_data() -> None:
    by_url = sent("openai/chat_image_url_https.json")["messages"][-1]
    text, image = by_url["content"]
    url = image["image_url"]["url"]
    message = UserMessage((TextPart(text["text"]), Image.from_url(url, media_type="image/jpeg")))
    assert body_of("chat", message)["messages"] == [by_url]

    as_data = sent("openai/chat_image_url_base64.json")["messages"][-1]
    text, image = as_data["content"]
    png = Image.from_bytes(from_data_url(image["image_url"]["url"]), "image/png")
    assert body_of("chat", UserMessage((TextPart(text["text"]), png)))["messages"] == [as_data]


def test_chat_pdf_and_audio() -> None:
    pdf_turn = sent("openai/chat_file_pdf_base64.json")["messages"][0]
    text, file = pdf_turn["content"]
    pdf = Document.from_bytes(
        from_data_url(file["file"]["file_data"]), "application/pdf", name="filename.pdf"
    )
    assert body_of("chat", UserMessage((TextPart(text["text"]), pdf)))["messages"] == [pdf_turn]

    audio_turn = sent("openai/chat_input_audio_mp3.json")["messages"][0]
    text, audio = audio_turn["content"]
    mp3 = Audio.from_bytes(decoded(audio["input_audio"]["data"]), "audio/mpeg")
    assert body_of("chat", UserMessage((TextPart(text["text"]), mp3)))["messages"] == [audio_turn]


def test_responses_image_and_pdf() -> None:
    by_url = sent("responses/input_image_url.json")["input"][0]
    text, image = by_url["content"]
    jpeg = Image.from_url(image["image_url"])
    built = body_of("responses", UserMessage((TextPart(text["text"]), jpeg)))["input"]
    assert built == [without(by_url, "detail")]  # `detail` left out: it defaults to "auto"

    as_data = sent("responses/input_image_base64.json")["input"][0]
    text, image = as_data["content"]
    png = Image.from_bytes(from_data_url(image["image_url"]), "image/png")
    assert body_of("responses", UserMessage((TextPart(text["text"]), png)))["input"] == [as_data]

    pdf_turn = sent("responses/input_file_pdf_base64.json")["input"][0]
    text, file = pdf_turn["content"]
    pdf = Document.from_bytes(
        from_data_url(file["file_data"]), "application/pdf", name=file["filename"]
    )
    assert body_of("responses", UserMessage((TextPart(text["text"]), pdf)))["input"] == [pdf_turn]


@pytest.mark.parametrize(
    "name",
    [
        "anthropic/image_base64.json",
        "anthropic/image_url_source.json",
        "anthropic/document_pdf_base64.json",
        "anthropic/document_pdf_url_source.json",
    ],
)
def test_anthropic_image_and_document_blocks(name: str) -> None:
    turn = sent(name)["messages"][0]
    text, block = turn["content"]
    source = block["source"]
    kind = Image if block["type"] == "image" else Document
    if source["type"] == "url":
        media_type = "image/jpeg" if kind is Image else "application/pdf"
        part = kind.from_url(source["url"], media_type=media_type)
    else:
        part = kind.from_bytes(decoded(source["data"]), source["media_type"])
    built = body_of("anthropic", UserMessage((TextPart(text["text"]), part)))
    assert built["messages"] == [turn]


@pytest.mark.parametrize(
    "name",
    [
        "google/inline_data_image_png.json",
        "google/inline_data_pdf.json",
        "google/inline_data_audio_wav.json",
        "google/file_data_image_https_url.json",
    ],
)
def test_gemini_inline_and_file_data(name: str) -> None:
    content = sent(name)["contents"][0]
    text, media = content["parts"]
    if "fileData" in media:
        given = media["fileData"]
        part: Image | Document | Audio = Image.from_url(
            given["fileUri"], media_type=given["mimeType"]
        )
    else:
        given = media["inlineData"]
        kind = {"image": Image, "audio": Audio}.get(given["mimeType"].split("/")[0], Document)
        part = kind.from_bytes(decoded(given["data"]), given["mimeType"])
    [built] = body_of("google", UserMessage((TextPart(text["text"]), part)))["contents"]
    [built_text, built_media] = built["parts"]
    assert built_text == text
    if "fileData" in media:
        assert built_media == media
        return
    # wink sends standard base64 (the recording: the SDK's base64url) and the one name of
    # WAV (audio/x-wav is its alias): the same bytes, the same type
    inline = built_media["inlineData"]
    assert decoded(inline["data"]) == decoded(given["data"])
    assert inline["mimeType"] == given["mimeType"].replace("audio/x-wav", "audio/wav")


# --- media returned by a tool


def tool_round(call_id: str, name: str, text: str, *parts: Image | Document) -> tuple[Message, ...]:
    return (
        UserMessage("Use the tool."),
        AssistantMessage(tool_calls=(ToolCall(call_id, name, {}),)),
        ToolResultMessage(call_id, name, text, attachments=parts),
    )


def test_chat_puts_a_tools_image_in_a_user_message_after_the_results() -> None:
    recorded = sent("openai/chat_image_in_user_message_after_tool.json")["messages"]
    call = recorded[1]["tool_calls"][0]
    image = recorded[3]["content"][1]
    transcript = tool_round(
        call["id"], "get_file", recorded[2]["content"], Image.from_url(image["image_url"]["url"])
    )
    built = body_of("chat", *transcript)["messages"]
    assert [m["role"] for m in built] == [
        m["role"] for m in recorded
    ]  # user, assistant, tool, user
    assert built[2] == recorded[2]  # the tool message: its text only
    assert [part["type"] for part in built[3]["content"]] == ["text", "image_url"]
    assert built[3]["content"][1] == image


def test_responses_function_call_output_carries_the_image() -> None:
    recorded = sent("responses/function_call_output_input_image.json")["input"]
    output = recorded[-1]
    image = Image.from_url(output["output"][0]["image_url"])
    built = body_of("responses", *tool_round(output["call_id"], "get_file", "", image))
    assert built["input"][-1] == without(output, "detail")


@pytest.mark.parametrize(
    "name", ["anthropic/tool_result_image_url.json", "anthropic/tool_result_document_pdf.json"]
)
def test_anthropic_tool_result_carries_the_part(name: str) -> None:
    [result] = sent(name)["messages"][-1]["content"]
    [block] = result["content"]
    source = block["source"]
    part: Image | Document = (
        Image.from_url(source["url"])
        if source["type"] == "url"
        else Document.from_bytes(decoded(source["data"]), source["media_type"])
    )
    built = body_of("anthropic", *tool_round(result["tool_use_id"], "get_file", "", part))
    assert built["messages"][-1]["content"] == [without(result, "is_error")]


def test_anthropic_tool_result_text_then_image() -> None:
    [result] = sent("anthropic/tool_result_text_image_text.json")["messages"][-1]["content"]
    text, image, _value = result["content"]  # wink sends the text, then the parts
    jpeg = Image.from_bytes(decoded(image["source"]["data"]), "image/jpeg")
    built = body_of("anthropic", *tool_round(result["tool_use_id"], "t", text["text"], jpeg))
    assert built["messages"][-1]["content"][0]["content"] == [text, image]


def test_anthropic_image_beside_a_tool_result_is_the_form_wink_does_not_need() -> None:
    """Claude also took the image as a block after the `tool_result`; wink puts it
    inside, as the two recordings above show accepted."""
    [result, image] = sent("anthropic/image_beside_tool_result.json")["messages"][-1]["content"]
    assert result["type"] == "tool_result"
    assert image["type"] == "image"
    assert anthropic.CONTENT_RULES.carriage("image/png").in_tool_result == "inside"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name",
    [
        "google/file_data_pdf_after_function_response.json",
        "google/image_after_function_response_implicit_cache.json",
    ],
)
def test_gemini_puts_a_tools_part_in_the_next_user_content(name: str) -> None:
    recorded = sent(name)["contents"]
    response = recorded[2]["parts"][0]["functionResponse"]
    media = recorded[3]["parts"][1]
    if "fileData" in media:
        given = media["fileData"]
        part: Image | Document = Document.from_url(given["fileUri"], media_type=given["mimeType"])
    else:
        part = Image.from_bytes(decoded(media["inlineData"]["data"]), "image/jpeg")
    transcript = tool_round(response["id"], response["name"], "See the file.", part)
    built = body_of("google", *transcript)["contents"]
    assert [c["role"] for c in built] == [c["role"] for c in recorded]  # user, model, user, user
    assert list(built[2]["parts"][0]) == ["functionResponse"]
    assert [list(p) for p in built[3]["parts"]] == [list(p) for p in recorded[3]["parts"]]


@pytest.mark.parametrize(
    "name",
    [
        "google/function_response_parts_inline_image.json",
        "google/function_response_parts_file_data_not_seen.json",
    ],
)
def test_gemini_3_parts_inside_a_function_response_are_read_by_the_emulator(name: str) -> None:
    """wink does not send this form (a Files API part there went unseen, as recorded),
    but the emulator reads it as the API does: a part inside a tool result."""
    from wink.testing.parts import received_parts
    from wink.testing.wire import WIRES

    [part] = received_parts(WIRES["google"], sent(name))
    assert (part.kind, part.media_type, part.in_tool_result) == ("image", "image/jpeg", True)


# --- prompt caching


def test_anthropic_cache_points_mark_the_blocks_as_recorded() -> None:
    recorded = sent("anthropic/cache_write_image_document.json")
    assert recorded == sent("anthropic/cache_read_image_document.json")
    text, image, document = recorded["messages"][0]["content"]
    turn = (
        TextPart(text["text"]),
        Image.from_bytes(decoded(image["source"]["data"]), "image/png"),
        CachePoint(),
        Document.from_bytes(decoded(document["source"]["data"]), "application/pdf"),
        CachePoint(),
    )
    built = body_of("anthropic", SystemMessage(recorded["system"]), UserMessage(turn))
    assert built["system"] == recorded["system"]
    assert built["messages"] == recorded["messages"]


@pytest.mark.parametrize("builder", ["chat", "responses"])
def test_openai_prompt_cache_key_goes_as_recorded(builder: str) -> None:
    name = {
        "chat": "openai/chat_cached_tokens_prompt_cache_key.json",
        "responses": "responses/cached_tokens_prompt_cache_key.json",
    }[builder]
    key = sent(name)["prompt_cache_key"]
    settings = OpenAISettings(prompt_cache_key=key, prompt_cache_retention="24h")
    built = body_of(builder, UserMessage("hi"), settings=settings)
    assert (built["prompt_cache_key"], built["prompt_cache_retention"]) == (key, "24h")


# --- the usage rule, on every recorded answer


def _usage(name: str) -> Usage:
    body = load(name)["response"]["body"]
    parse = {
        "openai": chat.parse_response,
        "responses": responses.parse_response,
        "anthropic": anthropic.parse_response,
        "google": google.parse_response,
    }[name.split("/")[0]]
    return parse(body).usage


# name -> (input_tokens, cached_tokens, cache_write_tokens), by wink's rule: the whole
# prompt, cached and written tokens included.
USAGE: dict[str, tuple[int, int, int]] = {
    "openai/chat_cached_tokens_automatic.json": (1220, 1152, 0),
    "openai/chat_cached_tokens_prompt_cache_key.json": (4020, 4012, 0),
    "openai/chat_image_url_base64.json": (14184, 0, 0),
    "openai/chat_input_audio_mp3.json": (64, 0, 0),
    "responses/cached_tokens_prompt_cache_key.json": (4020, 4012, 0),
    "responses/input_image_base64.json": (14181, 0, 0),
    "anthropic/cache_write_image_document.json": (3 + 2091, 0, 2091),
    "anthropic/cache_read_image_document.json": (3 + 2091, 2091, 0),
    "anthropic/cache_write_system_1h_ttl.json": (17 + 2056, 0, 2056),
    "anthropic/cache_write_tools.json": (147 + 4602, 0, 4602),
    "anthropic/document_pdf_base64.json": (1615, 0, 0),
    "google/cached_content_explicit.json": (3520, 3512, 0),
    "google/image_after_function_response_implicit_cache.json": (345, 191, 0),
    "google/inline_data_image_png.json": (1300, 0, 0),
}


@pytest.mark.parametrize("name", sorted(USAGE))
def test_input_tokens_count_cached_and_written_tokens_on_every_format(name: str) -> None:
    usage = _usage(name)
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == USAGE[name]
    assert usage.cached_tokens + usage.cache_write_tokens <= usage.input_tokens


def _answers() -> list[str]:
    return sorted(
        str(path.relative_to(MULTIMODAL))
        for path in MULTIMODAL.rglob("*.json")
        if load(str(path.relative_to(MULTIMODAL)))["response"]["status"] == 200
    )


@pytest.mark.parametrize("name", _answers())
def test_every_recorded_answer_parses(name: str) -> None:
    body = load(name)["response"]["body"]
    parse = {
        "openai": chat.parse_response,
        "responses": responses.parse_response,
        "anthropic": anthropic.parse_response,
        "google": google.parse_response,
    }[name.split("/")[0]]
    response = parse(body)
    assert response.text or response.tool_calls


# --- refused media


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai", "openai/chat_400_invalid_image_format.json"),
        ("openai-responses", "responses/400_input_file_unsupported_mime.json"),
    ],
)
def test_a_recorded_400_for_media_is_a_bad_request(provider: str, name: str) -> None:
    recorded = load(name)
    outcome, _, _ = replay(provider, f"multimodal/{name}")
    error = request_error(outcome)
    assert type(error) is BadRequestError  # the provider's refusal, not wink's own
    assert not isinstance(error, UnsupportedContentError)
    assert error.status_code == 400
    assert error.provider_payload is not None
    assert error.provider_payload["code"] == recorded["response"]["body"]["error"]["code"]


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai", "openai/chat_400_invalid_image_format.json"),
        ("openai-responses", "responses/400_input_file_unsupported_mime.json"),
    ],
)
def test_the_emulator_refuses_the_recorded_request_as_recorded(provider: str, name: str) -> None:
    recorded = load(name)
    with ProviderEmulator() as emulator:
        path = "/chat/completions" if provider == "openai" else "/responses"
        answer = httpx2.post(emulator.base_url(provider) + path, json=recorded["request"]["body"])
    assert answer.status_code == 400
    assert answer.json() == recorded["response"]["body"]


def test_every_multimodal_recording_is_used_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    names = {str(p.relative_to(MULTIMODAL)) for p in MULTIMODAL.rglob("*.json")}
    unused = {name for name in names if name not in source and name not in _answers()}
    assert unused == set()
