"""Content parts as values (`wink.core.foundation.content`), in prompts and tool results,
and the rules each provider carries them by (`wink.core.foundation.carriage`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.media import pdf, png, wav
from wink import (
    Audio,
    ConfigurationError,
    Document,
    Image,
    InvalidArgumentError,
    MarkdownSection,
    Prompt,
    PromptValidationError,
    ToolResult,
    UnsupportedContentError,
)
from wink.core.agent.executor import render_tool_result
from wink.core.foundation.carriage import (
    MB,
    Carriage,
    ContentRules,
    attachments_after_results,
    check_content,
)
from wink.core.foundation.content import CachePoint, TextPart
from wink.core.foundation.messages import (
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

PNG = png()

# --- making parts


def test_a_part_from_bytes_keeps_them_with_the_media_type() -> None:
    image = Image.from_bytes(bytearray(PNG), "IMAGE/PNG", name="dot.png")
    assert (image.media_type, image.data, image.url, image.size) == (
        "image/png",
        PNG,
        None,
        len(PNG),
    )
    assert repr(image) == f"Image('image/png', {len(PNG)} bytes, name='dot.png')"  # no bytes shown
    assert image == Image.from_bytes(PNG, "image/png", name="dot.png")
    assert Audio.from_bytes(wav(), "audio/x-wav").media_type == "audio/wav"  # the one name


def test_a_part_from_a_path_guesses_the_media_type(tmp_path: Path) -> None:
    (tmp_path / "dot.PNG").write_bytes(PNG)
    (tmp_path / "report.pdf").write_bytes(pdf())
    (tmp_path / "notes.md").write_text("# notes")
    image = Image.from_path(tmp_path / "dot.PNG")
    assert (image.media_type, image.name, image.data) == ("image/png", "dot.PNG", PNG)
    assert Document.from_path(str(tmp_path / "report.pdf")).media_type == "application/pdf"
    with pytest.raises(ConfigurationError, match=r"media type of a '\.md' suffix is unknown"):
        Document.from_path(tmp_path / "notes.md")
    notes = Document.from_path(tmp_path / "notes.md", media_type="text/plain")
    assert notes.text == "# notes"
    with pytest.raises(ConfigurationError, match="is application/pdf, not an image"):
        Image.from_path(tmp_path / "report.pdf")  # the guess is refused: not an image
    with pytest.raises(ConfigurationError, match="cannot read"):
        Image.from_path(tmp_path / "missing.png")


def test_a_part_from_a_url() -> None:
    image = Image.from_url("https://example.com/a/dot.webp?size=2")
    assert (image.media_type, image.url, image.data) == (
        "image/webp",
        "https://example.com/a/dot.webp?size=2",
        None,
    )
    with pytest.raises(ConfigurationError, match="pass media_type="):
        Image.from_url("https://example.com/picture")
    assert Image.from_url("https://example.com/picture", media_type="image/jpeg").size is None
    with pytest.raises(ConfigurationError, match="http:// or https://"):
        Image.from_url("file:///etc/passwd", media_type="image/png")


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: Image.from_bytes(b"not a png", "image/png"), "the bytes are not image/png"),
        (lambda: Image.from_bytes(PNG, "image/jpeg"), "they look like image/png"),
        (lambda: Image.from_bytes(PNG, "text/plain"), "takes an image/"),
        (lambda: Document.from_bytes(PNG, "image/png"), "an image is an Image"),
        (lambda: Document.from_bytes(b"\xff\xfe", "text/plain"), "must be UTF-8"),
        (lambda: Audio.from_bytes(b"", "audio/wav"), "is empty"),
        (lambda: Image("image/png"), "exactly one"),
        (lambda: Image("image/png", data=PNG, url="https://e.com/x.png"), "exactly one"),
    ],
)
def test_a_part_that_cannot_be_sent_is_refused_when_made(make: Any, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        make()


@pytest.mark.parametrize(
    "make",
    [
        lambda: Image.from_bytes("text", "image/png"),  # type: ignore[arg-type]
        lambda: Image.from_bytes(PNG, 3),  # type: ignore[arg-type]
        lambda: Image.from_path(3),  # type: ignore[arg-type]
        lambda: Document.from_text(b"bytes"),  # type: ignore[arg-type]
    ],
)
def test_a_part_of_the_wrong_type_is_an_invalid_argument(make: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        make()


# --- parts in a prompt


def test_a_section_places_its_attachments_after_its_text_and_caches_up_to_its_end() -> None:
    image = Image.from_bytes(PNG, "image/png")
    child = MarkdownSection(key="child", title="Child", template="Inner.")
    sections = [
        MarkdownSection(
            key="a", title="A", template="First.", attachments=[image], children=[child], cache=True
        ),
        MarkdownSection(key="b", title="B", template="Last."),
    ]
    rendered = Prompt(name="p", sections=sections).render()
    assert rendered.parts == (
        TextPart("## A\n\nFirst."),
        image,
        TextPart("### Child\n\nInner."),
        CachePoint(),
        TextPart("## B\n\nLast."),
    )
    assert rendered.text == "## A\n\nFirst.\n\n### Child\n\nInner.\n\n## B\n\nLast."


def test_a_summarized_section_hides_its_attachments_until_opened() -> None:
    image = Image.from_bytes(PNG, "image/png")
    section = MarkdownSection(
        key="a", title="A", template="Full.", summary="Short.", attachments=[image]
    )
    prompt = Prompt(name="p", sections=[section])
    assert image not in prompt.render().parts
    assert image in prompt.render(overrides={("a",): "full"}).parts


@pytest.mark.parametrize(
    ("field", "value"), [("attachments", ["a picture"]), ("attachments", "x.png"), ("cache", "yes")]
)
def test_a_section_checks_its_parts_and_cache_flag(field: str, value: object) -> None:
    with pytest.raises(PromptValidationError) as caught:
        MarkdownSection(key="a", title="A", template="T", **{field: value})  # type: ignore[arg-type]
    assert caught.value.section_path == ("a",)


# --- parts a tool returns


def test_a_tool_returns_parts_as_its_value_or_beside_it() -> None:
    image, document = Image.from_bytes(PNG, "image/png"), Document.from_text("notes")
    as_value = ToolResult.ok(image, "the chart")
    assert as_value.parts() == (image,)
    assert render_tool_result(as_value) == "the chart"  # the part is not sent as JSON
    assert ToolResult.ok([image, document]).parts() == (image, document)
    beside = ToolResult.ok({"rows": 3}, "done", attachments=[image])
    assert beside.parts() == (image,)
    assert render_tool_result(beside) == 'done\n{"rows": 3}'
    excluded = ToolResult.ok(image, "kept out", exclude_value_from_context=True)
    assert excluded.parts() == ()
    assert ToolResult.ok([]).parts() == ()
    with pytest.raises(InvalidArgumentError, match="Image, Document or Audio"):
        ToolResult.ok(1, attachments=["x.png"])  # type: ignore[list-item]


# --- what a provider carries


RULES = ContentRules(
    (
        Carriage(
            frozenset({"image/png"}), frozenset({"data"}), "inside", max_bytes=100, max_count=2
        ),
        Carriage(frozenset({"application/pdf"}), frozenset({"url"}), "refused"),
    ),
    max_request_bytes=400,
)


def request(*parts: Image | Document | Audio, tool: bool = False) -> ModelRequest:
    if tool:
        call = ToolCall("c1", "fetch", {})
        messages = (
            UserMessage("go"),
            AssistantMessage(tool_calls=(call,)),
            ToolResultMessage("c1", "fetch", "", attachments=parts),
        )
        return ModelRequest("p", messages)
    return ModelRequest("p", (UserMessage((TextPart("look"), *parts)),))


SMALL = Image.from_bytes(png(), "image/png")


@pytest.mark.parametrize(
    ("parts", "tool", "problem"),
    [
        ((Audio.from_bytes(wav(), "audio/wav"),), False, "it takes application/pdf, image/png"),
        ((Image.from_url("https://e.com/x.png"),), False, "as bytes, not by URL"),
        ((Document.from_bytes(pdf(), "application/pdf"),), False, "by URL only"),
        ((Document.from_url("https://e.com/x.pdf"),), True, "a tool result cannot carry it"),
        (
            (Image.from_bytes(PNG + b"\x00" * 200, "image/png"),),
            False,
            "over the documented limit of 100 bytes each",
        ),
        ((SMALL, SMALL, SMALL), False, "the documented limit is 2 of these in one request"),
    ],
)
def test_a_part_the_provider_cannot_take_is_refused_naming_both(
    parts: tuple[Image, ...], tool: bool, problem: str
) -> None:
    with pytest.raises(UnsupportedContentError) as caught:
        check_content(request(*parts, tool=tool), RULES, "acme")
    error = caught.value
    assert problem in str(error)
    assert str(error).startswith("request failed for prompt 'p': acme cannot take the ")
    assert ("returned by the tool 'fetch'" in str(error)) is tool
    assert error.provider == "acme"
    assert error.part in parts
    assert error.status_code is None


def test_the_request_limit_counts_the_parts_as_sent_in_base64() -> None:
    ninety = Image.from_bytes(PNG + b"\x00" * (90 - len(PNG)), "image/png")
    check_content(request(ninety, ninety), RULES, "acme")  # 2 x 120 characters of base64
    rules = ContentRules(RULES.carriages, max_request_bytes=200)
    with pytest.raises(UnsupportedContentError, match="limit of 200 bytes a request"):
        check_content(request(ninety, ninety), rules, "acme")
    encoded = ContentRules((Carriage(frozenset({"image/png"}), max_bytes=100, encoded=True),))
    with pytest.raises(UnsupportedContentError, match=r"120 bytes in base64, over .* 100 bytes"):
        check_content(request(ninety), encoded, "acme")


def test_a_text_only_request_passes_any_rules() -> None:
    check_content(ModelRequest("p", (UserMessage("hi"),)), ContentRules(), "acme")


# --- the workaround: a tool's parts after the results


def test_the_parts_of_a_run_of_results_follow_it_in_one_user_turn() -> None:
    image, document = Image.from_bytes(PNG, "image/png"), Document.from_text("n")
    calls = (ToolCall("a", "shot", {}), ToolCall("b", "read", {}), ToolCall("c", "plain", {}))
    messages = (
        UserMessage("go"),
        AssistantMessage(tool_calls=calls),
        ToolResultMessage("a", "shot", "", attachments=(image,)),
        ToolResultMessage("b", "read", "the notes", attachments=(document,)),
        ToolResultMessage("c", "plain", "nothing attached"),
        UserMessage("and now?"),
    )
    moved = attachments_after_results(messages)
    assert moved[2:5] == (
        ToolResultMessage("a", "shot", "(what it returned follows in the next message)"),
        ToolResultMessage("b", "read", "the notes"),
        ToolResultMessage("c", "plain", "nothing attached"),
    )
    assert moved[5] == UserMessage(
        (
            TextPart("Returned by the shot tool (result 1 of 2):"),
            image,
            TextPart("Returned by the read tool (result 2 of 2):"),
            document,
        )
    )
    assert moved[6] == UserMessage("and now?")
    plain = (*messages[:2], ToolResultMessage("a", "shot", "x"))
    assert attachments_after_results(plain) is plain


def test_a_user_turn_reads_as_text_and_parts() -> None:
    image = Image.from_bytes(PNG, "image/png")
    turn = UserMessage((TextPart("a"), image, CachePoint(), TextPart("b")))
    assert turn.text == "a\n\nb"
    assert UserMessage("hi").parts == (TextPart("hi"),)


def test_the_size_limits_are_stated_in_megabytes() -> None:
    rules = ContentRules((Carriage(frozenset({"image/png"}), max_bytes=5 * MB),))
    big = Image.from_bytes(PNG + b"\x00" * (5 * MB), "image/png")
    with pytest.raises(
        UnsupportedContentError,
        match=r"it is 5\.0 MB \(\d+ bytes\), over the documented limit of 5 MB each",
    ):
        check_content(request(big), rules, "acme")
