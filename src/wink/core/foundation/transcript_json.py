"""The JSON format of a `Transcript`, version 1 (`wink.core.foundation.transcript`).

Every object is tagged by `type`; a user turn's and a tool result's `content` is a list
of tagged parts: `text`, `image`, `document`, `audio` (a media type, then base64 `data`
or a `url`, and an optional `name`) and, in a user turn, `cache_point`. A writer leaves
out each field at its default; a reader refuses what it does not know, naming where
(`InvalidArgumentError`, "not a wink transcript: ..."), and skips nothing.

    {"version": 1, "messages": [
      {"type": "user", "content": [{"type": "text", "text": "..."},
                                   {"type": "image", "media_type": "image/png", "data": "..."}]},
      {"type": "assistant", "origin": "anthropic:claude-sonnet-4-6", "text": "...",
       "tool_calls": [{"id": "...", "name": "...", "arguments": {...} | "<json>",
                       "provider_data": {...}}],
       "thinking": [{"provider": "anthropic", "text": "...", "signature": "...",
                     "redacted": "...", "raw": {...}}],
       "native": {"provider": "anthropic", "items": [{...}]}, "provider_data": {...},
       "builtin_calls": [{"provider": "anthropic", "tool": "web_search", "id": "...",
                          "queries": ["..."], "sources": [{"url": "...", "title": "..."}],
                          "code": "...", "output": "...", "error": "..."}],
       "citations": [{"cited_text": "...", "url": "...", "title": "...",
                      "document_index": 0, "document_title": "...", "pages": [1, 2],
                      "chars": [0, 10], "span": [0, 42]}]},
      {"type": "tool_result", "call_id": "...", "name": "...",
       "content": [{"type": "text", "text": "..."}], "success": false}]}
"""

from __future__ import annotations

import base64
import json
from typing import Any, cast

from .builtin import BuiltinToolCall, Citation, WebSource
from .checks import kind_of
from .content import Attachment, Audio, CachePoint, Document, Image, TextPart, UserPart
from .errors import InvalidArgumentError, WinkError
from .messages import (
    AssistantMessage,
    NativeOutput,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "TRANSCRIPT_VERSION",
    "JsonReader",
    "TranscriptMessage",
    "dump_transcript",
    "invalid",
    "load_messages",
]

TRANSCRIPT_VERSION = 1
"""The version of the JSON format `dump_transcript` writes and `load_messages` reads."""

TranscriptMessage = UserMessage | AssistantMessage | ToolResultMessage
"""What a transcript holds (instructions are the prompt's, never the conversation's)."""

_MEDIA: dict[str, type[Attachment]] = {"image": Image, "document": Document, "audio": Audio}


def dump_transcript(messages: tuple[TranscriptMessage, ...]) -> str:
    """The messages as version 1 JSON text; always writable as UTF-8 (a lone surrogate
    a provider sent stays escaped)."""
    document = {"version": TRANSCRIPT_VERSION, "messages": [_dump(m) for m in messages]}
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(document, separators=(",", ":"))
    return text


def load_messages(text: str | bytes) -> list[TranscriptMessage]:
    """The messages of version 1 JSON text (not yet checked as a conversation)."""
    if not isinstance(cast(object, text), str | bytes | bytearray):
        raise InvalidArgumentError(
            f"Transcript.from_json takes JSON text, got {kind_of(text)}", argument="text"
        )
    try:
        document = json.loads(text)
    except ValueError as error:
        raise invalid(f"the text is not JSON ({error})") from error
    top = JsonReader(document, "the transcript")
    version = top.take("version", int)
    if version != TRANSCRIPT_VERSION:
        raise invalid(
            f"transcript version {version} "
            + (
                f"is newer than this wink reads ({TRANSCRIPT_VERSION}): upgrade wink"
                if version > TRANSCRIPT_VERSION
                else f"is not one wink wrote (it reads {TRANSCRIPT_VERSION})"
            )
        )
    items = top.take("messages", list)
    top.done()
    return [_load(item, f"messages[{index}]") for index, item in enumerate(items)]


# --- writing


def _dump(message: TranscriptMessage) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"type": "user", "content": [_dump_part(part) for part in message.parts]}
    if isinstance(message, ToolResultMessage):
        parts = [_dump_part(TextPart(message.content))]
        parts += [_dump_part(part) for part in message.attachments]
        out: dict[str, Any] = {
            "type": "tool_result",
            "call_id": message.call_id,
            "name": message.name,
            "content": parts,
        }
        if not message.success:
            out["success"] = False
        return out
    return _dump_assistant(message)


def _dump_part(part: UserPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, CachePoint):
        return {"type": "cache_point"}
    out: dict[str, Any] = {"type": part.kind, "media_type": part.media_type}
    if part.data is not None:
        out["data"] = part.base64()
    else:
        out["url"] = part.url
    if part.name is not None:
        out["name"] = part.name
    if isinstance(part, Document) and part.citations:
        out["citations"] = True
    return out


def _dump_assistant(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "assistant"}
    if message.origin is not None:
        out["origin"] = message.origin
    if message.text is not None:
        out["text"] = message.text
    if message.tool_calls:
        out["tool_calls"] = [_dump_call(call) for call in message.tool_calls]
    if message.thinking:
        out["thinking"] = [_dump_thinking(part) for part in message.thinking]
    if message.native is not None:
        native = message.native
        out["native"] = {"provider": native.provider, "items": [dict(i) for i in native.items]}
    if message.provider_data is not None:
        out["provider_data"] = dict(message.provider_data)
    if message.builtin_calls:
        out["builtin_calls"] = [dump_builtin_call(call) for call in message.builtin_calls]
    if message.citations:
        out["citations"] = [citation.to_json() for citation in message.citations]
    return out


def _dump_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if isinstance(call.arguments, str) else dict(call.arguments)
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": arguments}
    if call.provider_data is not None:
        out["provider_data"] = dict(call.provider_data)
    return out


def dump_builtin_call(call: BuiltinToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": call.provider, "tool": call.tool}
    for name in ("id", "code", "output", "error"):
        value = getattr(call, name)
        if value is not None:
            out[name] = value
    if call.queries:
        out["queries"] = list(call.queries)
    if call.sources:
        out["sources"] = [
            {"url": source.url, **({"title": source.title} if source.title is not None else {})}
            for source in call.sources
        ]
    return out


def _dump_thinking(part: ThinkingPart) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": part.provider}
    for name in ("text", "signature", "redacted"):
        value = getattr(part, name)
        if value is not None:
            out[name] = value
    if part.raw is not None:
        out["raw"] = dict(part.raw)
    return out


# --- reading


class JsonReader:
    """One JSON object of a document wink wrote (`what`: a transcript, a batch job): its
    fields taken one by one, the rest refused, each problem an `InvalidArgumentError`
    that names the place."""

    def __init__(self, value: object, where: str, what: str = "transcript") -> None:
        self.what = what
        if not isinstance(value, dict):
            raise self.invalid(f"{where} must be a JSON object, got {_json_kind(value)}")
        self.fields = cast(dict[str, Any], value)
        self.where = where
        self.taken: set[str] = set()

    def invalid(self, problem: str) -> InvalidArgumentError:
        return invalid(problem, self.what)

    def within(self, name: str) -> JsonReader:
        """The reader of the object in field `name`."""
        return JsonReader(self.take(name, dict), f"{self.where}.{name}", self.what)

    def take(self, name: str, kind: type[Any]) -> Any:
        if name not in self.fields:
            raise self.invalid(f"{self.where} has no {name!r}")
        return self.optional(name, kind)

    def optional(self, name: str, kind: type[Any], default: Any = None) -> Any:
        self.taken.add(name)
        if name not in self.fields:
            return default
        value = self.fields[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            expected = _KINDS.get(kind, kind.__name__)
            raise self.invalid(f"{self.where}.{name} must be {expected}, got {_json_kind(value)}")
        return value

    def done(self) -> None:
        unknown = sorted(set(self.fields) - self.taken)
        if unknown:
            known = ", ".join(sorted(self.taken))
            raise self.invalid(
                f"{self.where} has the unknown field {unknown[0]!r} (known: {known}); it was "
                "written by a newer wink, or edited"
            )


_KINDS: dict[type[Any], str] = {
    str: "a string",
    int: "a whole number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
}


_JSON_KINDS: dict[type[Any], str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _json_kind(value: object) -> str:
    return _JSON_KINDS.get(type(value)) or kind_of(value)


def invalid(problem: str, what: str = "transcript") -> InvalidArgumentError:
    """`problem` with a document wink reads: "not a wink transcript: ..."."""
    return InvalidArgumentError(f"not a wink {what}: {problem}", argument="text")


def _load(item: object, where: str) -> TranscriptMessage:
    reader = JsonReader(item, where)
    kind = reader.take("type", str)
    if kind == "user":
        parts = _load_parts(reader.take("content", list), where, ("cache_point",))
        first = parts[0] if len(parts) == 1 else None
        text = first.text if isinstance(first, TextPart) else None
        message: TranscriptMessage = UserMessage(text if text is not None else parts)
    elif kind == "tool_result":
        parts = _load_parts(reader.take("content", list), where, ())
        message = ToolResultMessage(
            call_id=reader.take("call_id", str),
            name=reader.take("name", str),
            content="".join(part.text for part in parts if isinstance(part, TextPart)),
            success=reader.optional("success", bool, True),
            attachments=tuple(p for p in parts if isinstance(p, Image | Document | Audio)),
        )
    elif kind == "assistant":
        message = _load_assistant(reader)
    else:
        raise invalid(
            f"{where} is of the unknown type {kind!r} (known: assistant, tool_result, user)"
        )
    reader.done()
    return message


def _load_parts(items: list[Any], where: str, more: tuple[str, ...]) -> tuple[UserPart, ...]:
    """A `content` list: text and media parts, and the `more` kinds this message takes."""
    known = ("text", *_MEDIA, *more)
    parts: list[UserPart] = []
    for index, item in enumerate(items):
        reader = JsonReader(item, f"{where}.content[{index}]")
        kind = reader.take("type", str)
        if kind not in known:
            listed = ", ".join(known)
            raise invalid(f"{reader.where} is of the unknown part type {kind!r} (known: {listed})")
        if kind == "text":
            parts.append(TextPart(reader.take("text", str)))
        elif kind == "cache_point":
            parts.append(CachePoint())
        else:
            parts.append(_load_media(reader, _MEDIA[kind]))
        reader.done()
    return tuple(parts)


def _load_media(reader: JsonReader, kind: type[Attachment]) -> Attachment:
    media_type = reader.take("media_type", str)
    encoded, url = reader.optional("data", str), reader.optional("url", str)
    name = reader.optional("name", str)
    cited = reader.optional("citations", bool) if kind is Document else None
    try:
        data = base64.b64decode(encoded, validate=True) if encoded is not None else None
        if kind is Document:
            return Document(media_type, data=data, url=url, name=name, citations=bool(cited))
        return kind(media_type, data=data, url=url, name=name)
    except (ValueError, WinkError) as error:  # bad base64, or a part its class refuses
        raise invalid(f"{reader.where}: {error}") from error


def _load_assistant(reader: JsonReader) -> AssistantMessage:
    where = reader.where
    calls = reader.optional("tool_calls", list, [])
    thinking = reader.optional("thinking", list, [])
    native = reader.optional("native", dict)
    builtin = reader.optional("builtin_calls", list, [])
    cited = reader.optional("citations", list, [])
    return AssistantMessage(
        text=reader.optional("text", str),
        tool_calls=tuple(_load_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
        provider_data=reader.optional("provider_data", dict),
        thinking=tuple(_load_thinking(t, f"{where}.thinking[{i}]") for i, t in enumerate(thinking)),
        native=_load_native(native, f"{where}.native") if native is not None else None,
        origin=reader.optional("origin", str),
        builtin_calls=tuple(
            load_builtin_call(c, f"{where}.builtin_calls[{i}]") for i, c in enumerate(builtin)
        ),
        citations=tuple(load_citation(c, f"{where}.citations[{i}]") for i, c in enumerate(cited)),
    )


def _load_call(item: object, where: str) -> ToolCall:
    reader = JsonReader(item, where)
    arguments = reader.take("arguments", object)
    if not isinstance(arguments, str | dict):
        raise invalid(f"{where}.arguments must be an object or a string")
    call = ToolCall(
        id=reader.take("id", str),
        name=reader.take("name", str),
        arguments=cast(str | dict[str, Any], arguments),
        provider_data=reader.optional("provider_data", dict),
    )
    reader.done()
    return call


def _load_thinking(item: object, where: str) -> ThinkingPart:
    reader = JsonReader(item, where)
    part = ThinkingPart(
        provider=reader.take("provider", str),
        text=reader.optional("text", str),
        signature=reader.optional("signature", str),
        redacted=reader.optional("redacted", str),
        raw=reader.optional("raw", dict),
    )
    reader.done()
    return part


def _load_native(item: dict[str, Any], where: str) -> NativeOutput:
    reader = JsonReader(item, where)
    provider = reader.take("provider", str)
    items = reader.take("items", list)
    for index, entry in enumerate(items):
        if not isinstance(entry, dict):
            raise invalid(f"{where}.items[{index}] must be an object")
    reader.done()
    return NativeOutput(provider, tuple(cast(list[dict[str, Any]], items)))


_BUILTIN_TOOLS = ("web_search", "code_execution", "url_context")


def load_builtin_call(item: object, where: str) -> BuiltinToolCall:
    reader = JsonReader(item, where)
    tool = reader.take("tool", str)
    if tool not in _BUILTIN_TOOLS:
        raise invalid(f"{where}.tool must be one of {', '.join(_BUILTIN_TOOLS)}, got {tool!r}")
    queries = reader.optional("queries", list, [])
    if not all(isinstance(query, str) for query in queries):
        raise invalid(f"{where}.queries must be a list of strings")
    sources: list[WebSource] = []
    for index, entry in enumerate(reader.optional("sources", list, [])):
        source = JsonReader(entry, f"{where}.sources[{index}]")
        sources.append(WebSource(source.take("url", str), source.optional("title", str)))
        source.done()
    call = BuiltinToolCall(
        provider=reader.take("provider", str),
        tool=tool,
        id=reader.optional("id", str),
        queries=tuple(cast(list[str], queries)),
        sources=tuple(sources),
        code=reader.optional("code", str),
        output=reader.optional("output", str),
        error=reader.optional("error", str),
    )
    reader.done()
    return call


def load_citation(item: object, where: str) -> Citation:
    reader = JsonReader(item, where)

    def pair(name: str) -> tuple[int, int] | None:
        value = reader.optional(name, list)
        if value is None:
            return None
        if len(value) != 2 or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in value
        ):
            raise invalid(f"{where}.{name} must be two whole numbers")
        return (value[0], value[1])

    citation = Citation(
        cited_text=reader.optional("cited_text", str),
        url=reader.optional("url", str),
        title=reader.optional("title", str),
        document_index=reader.optional("document_index", int),
        document_title=reader.optional("document_title", str),
        pages=pair("pages"),
        chars=pair("chars"),
        span=pair("span"),
        blocks=pair("blocks"),
    )
    reader.done()
    return citation
