"""Images, documents and audio through the four wire formats, on the emulator: as the
call's attachments and as what a tool returns, each in the exact shape the provider
receives, or refused before anything is sent, naming the provider and the part."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers.adapters import PROVIDERS, make_adapter
from tests.helpers.media import pdf, png, wav
from wink import (
    Attachment,
    Audio,
    BadRequestError,
    Document,
    FallbackAdapter,
    Image,
    MarkdownSection,
    Prompt,
    Session,
    Tool,
    ToolContext,
    ToolResult,
    UnsupportedContentError,
)
from wink.testing import EmulatedToolCall, EmulatorInternalError, ProviderEmulator, Turn

PNG, PDF, WAV = png(), pdf(), wav()
URL = "https://example.com/files/chart.png"
PDF_URL = "https://example.com/files/report.pdf"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


PARTS: dict[str, Attachment] = {
    "image": Image.from_bytes(PNG, "image/png"),
    "image_url": Image.from_url(URL),
    "pdf": Document.from_bytes(PDF, "application/pdf"),
    "pdf_url": Document.from_url(PDF_URL),
    "text": Document.from_text("Plain words."),
    "audio": Audio.from_bytes(WAV, "audio/wav"),
}

# What each provider receives for each part (None: refused before sending).
EXPECTED: dict[str, dict[str, dict[str, Any] | None]] = {
    "openai": {
        "image": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}},
        "image_url": {"type": "image_url", "image_url": {"url": URL}},
        "pdf": {
            "type": "file",
            "file": {
                "filename": "document.pdf",
                "file_data": f"data:application/pdf;base64,{b64(PDF)}",
            },
        },
        "pdf_url": None,  # Chat Completions takes no file URL
        "text": {"type": "text", "text": "Plain words."},
        "audio": {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
    },
    "openai-responses": {
        "image": {"type": "input_image", "image_url": f"data:image/png;base64,{b64(PNG)}"},
        "image_url": {"type": "input_image", "image_url": URL},
        "pdf": {
            "type": "input_file",
            "filename": "document.pdf",
            "file_data": f"data:application/pdf;base64,{b64(PDF)}",
        },
        "pdf_url": {"type": "input_file", "file_url": PDF_URL},
        "text": {
            "type": "input_file",
            "filename": "document.txt",
            "file_data": f"data:text/plain;base64,{b64(b'Plain words.')}",
        },
        "audio": None,  # no audio input on the Responses API
    },
    "anthropic": {
        "image": {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)},
        },
        "image_url": {"type": "image", "source": {"type": "url", "url": URL}},
        "pdf": {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
        },
        "pdf_url": {"type": "document", "source": {"type": "url", "url": PDF_URL}},
        "text": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Plain words."},
        },
        "audio": None,  # no audio input on Anthropic
    },
    "google": {
        "image": {"inlineData": {"mimeType": "image/png", "data": b64(PNG)}},
        "image_url": {"fileData": {"mimeType": "image/png", "fileUri": URL}},
        "pdf": {"inlineData": {"mimeType": "application/pdf", "data": b64(PDF)}},
        "pdf_url": {"fileData": {"mimeType": "application/pdf", "fileUri": PDF_URL}},
        "text": {"inlineData": {"mimeType": "text/plain", "data": b64(b"Plain words.")}},
        "audio": {"inlineData": {"mimeType": "audio/wav", "data": b64(WAV)}},
    },
}
EXPECTED["bedrock"] = {  # bytes only (S3 aside, which wink does not send), no audio
    "image": {"image": {"format": "png", "source": {"bytes": b64(PNG)}}},
    "image_url": None,
    "pdf": {"document": {"format": "pdf", "name": "document", "source": {"bytes": b64(PDF)}}},
    "pdf_url": None,
    "text": {
        "document": {
            "format": "txt",
            "name": "document",
            "source": {"bytes": b64(b"Plain words.")},
        }
    },
    "audio": None,
}
CASES = [(provider, part) for provider in PROVIDERS for part in PARTS]


@dataclass(frozen=True)
class Fetch:
    what: str


def prompt_with_tool(part: Attachment | None = None) -> Prompt[None]:
    def fetch(params: Fetch, *, context: ToolContext) -> ToolResult[Any]:
        return ToolResult.ok(part, "Here it is.")

    tool = Tool(name="fetch", description="Fetch a file", handler=fetch)
    section = MarkdownSection(key="task", title="Task", template="Look.", tools=[tool])
    return Prompt(name="look", sections=[section])


LOOK = Prompt(name="look", sections=[MarkdownSection(key="task", title="Task", template="Look.")])


def user_parts(provider: str, body: dict[str, Any]) -> list[Any]:
    """The parts of the request's first user turn."""
    if provider == "google":
        return body["contents"][0]["parts"]
    key = "input" if provider == "openai-responses" else "messages"
    return body[key][0]["content"]


def tool_parts(provider: str, body: dict[str, Any]) -> list[Any]:
    """Where the tool's part went: inside the result, or in the user turn after it."""
    if provider == "openai":
        *_, tool, after = body["messages"]
        assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "Here it is."}
        return after["content"]
    if provider == "openai-responses":
        output = body["input"][-1]
        assert output["type"] == "function_call_output"
        return output["output"]
    if provider == "anthropic":
        [result] = body["messages"][-1]["content"]
        assert result["type"] == "tool_result"
        return result["content"]
    if provider == "bedrock":
        [block] = body["messages"][-1]["content"]
        assert block["toolResult"]["status"] == "success"
        return block["toolResult"]["content"]
    *_, results, after = body["contents"]
    assert [list(part) for part in results["parts"]] == [["functionResponse"]]
    return after["parts"]


# --- the call's attachments


@pytest.mark.parametrize(("provider", "name"), CASES)
def test_an_attachment_reaches_each_provider_in_its_shape(provider: str, name: str) -> None:
    expected = EXPECTED[provider][name]
    with ProviderEmulator([Turn.text("Seen.")]) as emulator:
        adapter = make_adapter(provider, emulator)
        if expected is None:
            with pytest.raises(UnsupportedContentError) as caught:
                adapter.evaluate(LOOK, attachments=[PARTS[name]])
            assert emulator.requests == []  # refused before anything was sent
            error = caught.value
            assert error.provider == adapter.api.name
            assert error.part is PARTS[name]
            assert adapter.api.name in str(error)
            assert PARTS[name].media_type in str(error)
            assert error.phase == "request"
            assert isinstance(error, BadRequestError)
            return
        assert adapter.evaluate(LOOK, attachments=[PARTS[name]]).text == "Seen."
    parts = user_parts(provider, emulator.requests[0].body)
    assert parts[1:] == [expected]  # after the rendered prompt's text


@pytest.mark.parametrize(("provider", "name"), CASES)
def test_a_tools_part_reaches_each_provider_in_its_shape(provider: str, name: str) -> None:
    expected = EXPECTED[provider][name]
    script = [
        Turn.tool_calls(EmulatedToolCall("fetch", {"what": "x"}, id="call_1")),
        Turn.text("Ok."),
    ]
    with ProviderEmulator(script) as emulator:
        adapter = make_adapter(provider, emulator)
        if expected is None:
            with pytest.raises(UnsupportedContentError) as caught:
                adapter.evaluate(prompt_with_tool(PARTS[name]))
            assert len(emulator.requests) == 1  # the first round only: the result is not sent
            assert "returned by the tool 'fetch'" in str(caught.value)
            return
        assert adapter.evaluate(prompt_with_tool(PARTS[name])).text == "Ok."
    parts = tool_parts(provider, emulator.requests[1].body)
    text = {
        "openai": {"type": "text", "text": "Returned by the fetch tool:"},
        "openai-responses": {"type": "input_text", "text": "Here it is."},
        "anthropic": {"type": "text", "text": "Here it is."},
        "google": {"text": "Returned by the fetch tool:"},
        "bedrock": {"text": "Here it is."},
    }[provider]
    assert parts == [text, expected]


# --- the whole body, once per provider


IMAGE_B64 = b64(PNG)
WHOLE: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "openai": (
        "messages",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "## Task\n\nLook."},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{IMAGE_B64}"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "fetch", "arguments": '{"what":"x"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Here it is."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Returned by the fetch tool:"},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{IMAGE_B64}"},
                    },
                ],
            },
        ],
    ),
    "openai-responses": (
        "input",
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "## Task\n\nLook."},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{IMAGE_B64}"},
                ],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "fetch",
                "arguments": '{"what":"x"}',
            },
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": [
                    {"type": "input_text", "text": "Here it is."},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{IMAGE_B64}"},
                ],
            },
        ],
    ),
    "anthropic": (
        "messages",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "## Task\n\nLook."},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": IMAGE_B64},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "call_1", "name": "fetch", "input": {"what": "x"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": [
                            {"type": "text", "text": "Here it is."},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": IMAGE_B64,
                                },
                            },
                        ],
                    }
                ],
            },
        ],
    ),
    "google": (
        "contents",
        [
            {
                "role": "user",
                "parts": [
                    {"text": "## Task\n\nLook."},
                    {"inlineData": {"mimeType": "image/png", "data": IMAGE_B64}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "fetch", "args": {"what": "x"}, "id": "call_1"}}
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "fetch",
                            "response": {"output": "Here it is."},
                            "id": "call_1",
                        }
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"text": "Returned by the fetch tool:"},
                    {"inlineData": {"mimeType": "image/png", "data": IMAGE_B64}},
                ],
            },
        ],
    ),
}


IMAGE_BLOCK = {"image": {"format": "png", "source": {"bytes": IMAGE_B64}}}
WHOLE["bedrock"] = (
    "messages",
    [
        {"role": "user", "content": [{"text": "## Task\n\nLook."}, IMAGE_BLOCK]},
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "call_1", "name": "fetch", "input": {"what": "x"}}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call_1",
                        "content": [{"text": "Here it is."}, IMAGE_BLOCK],
                        "status": "success",
                    }
                }
            ],
        },
    ],
)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_exact_transcript_a_provider_receives(provider: str) -> None:
    image = PARTS["image"]
    script = [
        Turn.tool_calls(EmulatedToolCall("fetch", {"what": "x"}, id="call_1")),
        Turn.text("A red pixel, twice.").expecting("image/png", "image/png"),
    ]
    with ProviderEmulator(script, google_function_call_ids=True) as emulator:
        adapter = make_adapter(provider, emulator)
        response = adapter.evaluate(prompt_with_tool(image), attachments=[image])
    assert response.text == "A red pixel, twice."
    key, expected = WHOLE[provider]
    assert emulator.requests[1].body[key] == expected


# --- streamed and async calls, and a fallback


def test_the_stream_and_async_entry_points_send_the_attachments() -> None:
    image = PARTS["image"]
    with ProviderEmulator(default_turn=Turn.text("Seen.").expecting("image/png")) as emulator:
        adapter = make_adapter("anthropic", emulator)
        with adapter.stream(LOOK, attachments=[image]) as stream:
            list(stream)
        assert stream.response.text == "Seen."

        async def both() -> None:
            assert (await adapter.evaluate_async(LOOK, attachments=[image])).text == "Seen."
            async with adapter.stream_async(LOOK, attachments=[image]) as streamed:
                async for _ in streamed:
                    pass
            assert streamed.response.text == "Seen."

        asyncio.run(both())
    assert len(emulator.requests) == 3


def test_fallback_moves_on_from_a_provider_that_cannot_take_the_part() -> None:
    audio = PARTS["audio"]
    with ProviderEmulator(default_turn=Turn.text("Heard.").expecting("audio/wav")) as emulator:
        fallback = FallbackAdapter(
            [make_adapter("anthropic", emulator), make_adapter("google", emulator)]
        )
        session = Session()
        response = fallback.evaluate(LOOK, session=session, attachments=[audio])
    assert response.text == "Heard."
    assert [request.provider for request in emulator.requests] == ["google"]


def test_a_part_the_turn_did_not_expect_fails_the_test() -> None:
    with ProviderEmulator([Turn.text("Seen.").expecting("image/jpeg")]) as emulator:
        adapter = make_adapter("openai", emulator)
        with pytest.raises(BadRequestError, match="418"):  # nothing retries it
            adapter.evaluate(LOOK, attachments=[PARTS["image"]])
        expected = r"expected the parts \['image/jpeg'\], the request carried \['image/png'\]"
        with pytest.raises(EmulatorInternalError, match=expected):
            emulator.check()
        assert emulator.pending == 1  # the turn waits for a request that carries its part


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_part_over_the_providers_limit_is_refused_naming_the_limit(provider: str) -> None:
    limits = {
        "anthropic": "5 MB each",
        "google": "20 MB a request",
        "bedrock": "3932160 bytes each",
    }
    if provider not in limits:  # OpenAI's limits are per request, in bytes of images
        big = [Image.from_bytes(PNG + b"\x00" * (26 * 1024 * 1024), "image/png")] * 2
        limit = "50 MB of these a request"
    else:
        size = 21 * 1024 * 1024 if provider == "google" else 6 * 1024 * 1024
        big = [Image.from_bytes(PNG + b"\x00" * size, "image/png")]
        limit = limits[provider]
    with ProviderEmulator([Turn.text("Seen.")]) as emulator:
        adapter = make_adapter(provider, emulator)
        with pytest.raises(UnsupportedContentError, match=limit):
            adapter.evaluate(LOOK, attachments=big)
    assert emulator.requests == []
