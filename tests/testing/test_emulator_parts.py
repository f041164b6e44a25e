"""The emulator reads images, documents and audio as the real APIs do: it refuses what they
refuse with their own 400 (through the real SDKs), shows a script the parts a request
carried, lets a turn expect them, and caches prompt prefixes as the providers do."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from tests.helpers.media import pdf, png, wav
from wink.testing import (
    EmulatedRequest,
    EmulatorInternalError,
    ProviderEmulator,
    ReceivedPart,
    Turn,
    load_script,
)
from wink.testing.caching import MIN_CACHED_TOKENS, CachePrefix, PromptCache

PNG = base64.b64encode(png()).decode()
TEXT_AS_JPEG = base64.b64encode(b"Please set a user-agent.").decode()


def data_url(media_type: str, encoded: str) -> str:
    return f"data:{media_type};base64,{encoded}"


# --- OpenAI: what it refuses, in its words


@pytest.mark.parametrize("encoded", [TEXT_AS_JPEG, "%%% not base64 %%%"])
def test_openai_refuses_an_image_that_is_not_one(
    emu: ProviderEmulator, openai_client: openai.OpenAI, encoded: str
) -> None:
    image = {"type": "image_url", "image_url": {"url": data_url("image/jpeg", encoded)}}
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": [image]}]
        )
    assert caught.value.code == "invalid_image_format"
    assert "['png', 'jpeg', 'gif', 'webp']" in caught.value.message
    assert emu.stats.responses == {400: 1}


def test_openai_refuses_a_file_of_a_type_it_does_not_read(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    audio = base64.b64encode(wav()).decode()
    output = [
        {"type": "input_file", "filename": "a.wav", "file_data": data_url("audio/wav", audio)}
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(
            model="gpt-5-mini",
            input=[
                {"role": "user", "content": "go"},
                {"type": "function_call", "call_id": "c1", "name": "get", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": output},  # type: ignore[typeddict-item]
            ],
        )
    assert caught.value.code == "invalid_value"
    assert caught.value.param == "input[2].output[0].file_data"
    assert "unsupported MIME type 'audio/wav'" in caught.value.message


def test_openai_takes_wav_and_mp3_audio_only(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    encoded = base64.b64encode(wav()).decode()
    audio = {"type": "input_audio", "input_audio": {"data": encoded, "format": "ogg"}}
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(
            model="gpt-4o-audio-preview",
            messages=[{"role": "user", "content": [audio]}],  # type: ignore[list-item]
        )
    assert caught.value.param == "messages[0].content[0].input_audio.format"


# --- Anthropic


def _anthropic_image(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            _anthropic_image("image/bmp", PNG),
            "messages.0.content.0.image.source.base64.media_type: Input should be "
            "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
        ),
        (
            _anthropic_image("image/png", "%%%"),
            "messages.0.content.0.image.source.base64: invalid base64 data",
        ),
        (
            _anthropic_image("image/jpeg", PNG),
            "messages.0.content.0.image.source.base64.data: Image does not match the "
            "provided media type image/jpeg",
        ),
        (
            _anthropic_image("image/png", PNG + "A" * (5 * 1024 * 1024)),
            "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: "
            f"{len(PNG) + 5 * 1024 * 1024} bytes > 5242880 bytes",
        ),
        (
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [_anthropic_image("image/png", "%%%")],
            },
            "messages.0.content.0.tool_result.content.0.image.source.base64: invalid base64 data",
        ),
    ],
)
def test_anthropic_refuses_a_bad_image_in_its_words(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic, block: Any, message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": [block]}],
        )
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": message}  # type: ignore[index]


def test_anthropic_takes_at_most_four_cache_breakpoints(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    marked = [
        {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
        for n in range(5)
    ]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        anthropic_client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": marked}],  # type: ignore[typeddict-item]
        )


# --- Gemini (REST)


def _gemini(emu: ProviderEmulator, part: dict[str, Any]) -> httpx.Response:
    body = {"contents": [{"role": "user", "parts": [{"text": "look"}, part]}]}
    url = f"{emu.url}/v1beta/models/gemini-2.5-flash:generateContent"
    return httpx.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=5)


def test_gemini_refuses_base64_it_cannot_decode(emu: ProviderEmulator) -> None:
    answer = _gemini(emu, {"inlineData": {"mimeType": "image/png", "data": "%%%"}})
    error = answer.json()["error"]
    assert (answer.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["message"] == (
        "Invalid value at 'contents[0].parts[1].inline_data.data' (TYPE_BYTES), Base64 "
        'decoding failed for "%%%"'
    )


def test_gemini_refuses_a_media_type_it_does_not_read(emu: ProviderEmulator) -> None:
    answer = _gemini(emu, {"inlineData": {"mimeType": "image/bmp", "data": PNG}})
    assert answer.json()["error"]["message"] == "Unsupported MIME type: image/bmp"


def test_gemini_reads_base64url_as_the_sdk_sends_it(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(Turn.text("A red pixel.").expecting("image/png"))
    answer = google_client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[types.Part.from_bytes(data=png(), mime_type="image/png"), "What is it?"],
    )
    assert answer.text == "A red pixel."


# --- what a script sees


def test_a_script_sees_the_parts_a_request_carried(emu: ProviderEmulator) -> None:
    seen: list[tuple[ReceivedPart, ...]] = []

    def script(request: EmulatedRequest) -> Turn:
        seen.append(request.parts)
        return Turn.text("ok")

    emu.set_script(script)
    pdf_data = base64.b64encode(pdf()).decode()
    content = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "url", "url": "https://e.com/x.png"}},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": pdf_data},
                }
            ],
        },
    ]
    call = {"type": "tool_use", "id": "toolu_1", "name": "chart", "input": {}}
    conversation = [
        {"role": "user", "content": "Chart it."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": content},
    ]
    body = {"model": "m", "max_tokens": 5, "messages": conversation}
    assert httpx.post(f"{emu.url}/v1/messages", json=body, timeout=5).status_code == 200
    assert seen == [
        (
            ReceivedPart("image", None, url="https://e.com/x.png"),
            ReceivedPart("document", "application/pdf", pdf(), in_tool_result=True),
        )
    ]


def test_a_turn_expecting_other_parts_is_an_internal_error(emu: ProviderEmulator) -> None:
    emu.enqueue(Turn.text("ok").expecting())
    image = {"type": "image_url", "image_url": {"url": data_url("image/png", PNG)}}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": [image]}]}
    answer = httpx.post(f"{emu.url}/v1/chat/completions", json=body, timeout=5)
    assert answer.status_code == 418
    with pytest.raises(EmulatorInternalError, match=r"expected the parts \[\], the request"):
        emu.check()
    assert emu.pending == 1  # the turn is kept


def test_a_script_file_turn_expects_parts_and_counts_cache_writes(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    entry = {"text": "ok", "expect_parts": ["image/png"], "cache_write_tokens": 7}
    path.write_text(json.dumps({"script": [entry]}))
    [turn] = load_script(path).items
    assert isinstance(turn, Turn)
    assert (turn.expect_parts, turn.usage.cache_write_tokens) == (("image/png",), 7)


# --- the emulated prompt cache


def test_the_prompt_cache_reads_the_longest_prefix_it_holds_and_writes_the_rest() -> None:
    cache = PromptCache()
    short, long = CachePrefix("a", MIN_CACHED_TOKENS + 10), CachePrefix("b", 3000)
    assert cache.use((short,)) == (0, MIN_CACHED_TOKENS + 10)
    assert cache.use((short, long)) == (MIN_CACHED_TOKENS + 10, 3000 - MIN_CACHED_TOKENS - 10)
    assert cache.use((short, long)) == (3000, 0)
    assert cache.use((CachePrefix("c", MIN_CACHED_TOKENS - 1),)) == (0, 0)  # under the minimum
    cache.clear()
    assert cache.use((long,)) == (0, 3000)


def test_reset_empties_the_prompt_cache(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    system = [{"type": "text", "text": "rule " * 2000, "cache_control": {"type": "ephemeral"}}]

    def ask() -> tuple[int, int]:
        emu.enqueue(Turn.text("ok"))
        usage = anthropic_client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=5,
            system=system,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "hi"}],
        ).usage
        return usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0

    first, second = ask(), ask()
    assert first[0] == 0
    assert first[1] > MIN_CACHED_TOKENS
    assert second == (first[1], 0)
    emu.reset()
    assert ask() == first
