"""Which content parts a provider can carry, where, and within which limits: the facts
(`ContentRules`, an attribute of each `Provider`) and the check written once
(`check_content`), which refuses a request before anything is sent.

Also the known workaround for a wire format whose tool results carry text only:
`attachments_after_results` moves what tools returned into a user turn right after
their results (docs/multimodal.md has the table, per provider).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from .content import Attachment, Audio, Document, Image, TextPart, UserPart
from .errors import UnsupportedContentError
from .messages import Message, ModelRequest, ToolResultMessage, UserMessage

__all__ = [
    "MB",
    "Carriage",
    "ContentRules",
    "InToolResult",
    "NO_CONTENT",
    "Source",
    "attachments_after_results",
    "check_content",
]

MB = 1024 * 1024

Source = Literal["data", "url"]
"""How a part is given: its bytes, or a URL the provider fetches."""
InToolResult = Literal["inside", "after", "refused"]
"""Where a tool's part goes: inside the tool result, in a user turn right after the
results (the workaround), or nowhere (refused before sending)."""


@dataclass(frozen=True, slots=True)
class Carriage:
    """How a provider carries the parts of some media types: given how, where, how big.

    `max_bytes` is its documented limit per part (`encoded`: counted as sent, in
    base64), `max_total_bytes` and `max_count` per request for all the parts of this row
    together (docs/adapters/<provider>.md).
    """

    media_types: frozenset[str]
    sources: frozenset[Source] = frozenset({"data"})
    in_tool_result: InToolResult = "refused"
    max_bytes: int | None = None
    max_total_bytes: int | None = None
    max_count: int | None = None
    encoded: bool = False


@dataclass(frozen=True, slots=True)
class ContentRules:
    """What one provider can carry: a `Carriage` per group of media types (a type in no
    row is refused), and its limit on all inline parts of a request together, counted as
    sent (in base64): `max_request_bytes`; whether it can cite a `Document(citations=True)`:
    `cites_documents`."""

    carriages: tuple[Carriage, ...] = ()
    max_request_bytes: int | None = None
    cites_documents: bool = False
    _by_type: dict[str, Carriage] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_type = {kind: row for row in self.carriages for kind in row.media_types}
        object.__setattr__(self, "_by_type", by_type)

    def carriage(self, media_type: str) -> Carriage | None:
        """How parts of `media_type` travel (None: they cannot)."""
        return self._by_type.get(media_type)

    @property
    def media_types(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_type))


NO_CONTENT = ContentRules()
"""A provider that takes no attachment (text only)."""


@dataclass(slots=True)
class _Tally:
    """What the parts of a request add up to: per carriage row, and inline in all."""

    rows: dict[int, tuple[int, int]] = field(default_factory=dict[int, tuple[int, int]])
    inline: int = 0


def _sized(size: int) -> str:
    return f"{size / MB:.1f} MB ({size} bytes)" if size >= MB else f"{size} bytes"


def _limit(size: int) -> str:
    return f"{size // MB} MB" if size % MB == 0 else f"{size} bytes"


def _located(request: ModelRequest) -> Iterable[tuple[Attachment, str | None]]:
    """Every attachment of the request, with the tool that returned it (None: the user)."""
    for message in request.messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for part in message.content:
                if isinstance(part, Image | Document | Audio):
                    yield part, None
        elif isinstance(message, ToolResultMessage):
            for part in message.attachments:
                yield part, message.name


def check_content(request: ModelRequest, rules: ContentRules, provider: str) -> None:
    """Raise `UnsupportedContentError` for the first part `provider` cannot take as and
    where it is, or over its documented limits; the message names both."""
    tally = _Tally()
    for part, tool in _located(request):
        problem = _problem(part, tool, rules, tally)
        if problem is not None:
            where = f"returned by the tool {tool!r}" if tool else "in the user turn"
            raise UnsupportedContentError(
                f"{provider} cannot take {part.describe()} {where}: {problem}",
                prompt_name=request.prompt_name,
                provider=provider,
                part=part,
            )


def _problem(part: Attachment, tool: str | None, rules: ContentRules, tally: _Tally) -> str | None:
    row = rules.carriage(part.media_type)
    if row is None:
        return f"it takes {', '.join(rules.media_types) or 'no attachments'}"
    if isinstance(part, Document) and part.citations and not rules.cites_documents:
        return (
            "it cannot cite documents, and wink does not send one without the citations "
            "asked for (Document(citations=True) works on the Anthropic Messages and Bedrock "
            "Converse wires)"
        )
    if part.url is not None and "url" not in row.sources:
        return "it takes these as bytes, not by URL (Image.from_bytes, .from_path)"
    if part.data is not None and "data" not in row.sources:
        return "it takes these by URL only"
    if tool is not None and row.in_tool_result == "refused":
        return "a tool result cannot carry it; attach it to the call instead"
    size = part.size or 0
    sent = (size + 2) // 3 * 4  # in base64
    if row.max_bytes is not None and (sent if row.encoded else size) > row.max_bytes:
        measured = f"{_sized(sent)} in base64" if row.encoded else _sized(size)
        return f"it is {measured}, over the documented limit of {_limit(row.max_bytes)} each"
    count, total = tally.rows.get(id(row), (0, 0))
    count, total = count + 1, total + size
    tally.rows[id(row)] = (count, total)
    tally.inline += sent
    if row.max_count is not None and count > row.max_count:
        return f"the documented limit is {row.max_count} of these in one request"
    if row.max_total_bytes is not None and total > row.max_total_bytes:
        limit = _limit(row.max_total_bytes)
        return f"with the others, over the documented limit of {limit} of these a request"
    if rules.max_request_bytes is not None and tally.inline > rules.max_request_bytes:
        limit = _limit(rules.max_request_bytes)
        return f"with the others, over the documented limit of {limit} a request (in base64)"
    return None


# --- the workaround: what tools returned, in a user turn after their results


def attachments_after_results(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """`messages` with the attachments of each run of tool results moved into one user
    turn right after the run (the results keep their text), for wire formats whose tool
    results carry text only. `messages` itself when no result has any."""
    if not any(isinstance(m, ToolResultMessage) and m.attachments for m in messages):
        return messages
    out: list[Message] = []
    run: list[ToolResultMessage] = []
    for message in (*messages, None):
        if isinstance(message, ToolResultMessage):
            run.append(message)
            continue
        out.extend(replace(result, attachments=(), content=_text_of(result)) for result in run)
        moved = _moved(run)
        if moved:
            out.append(UserMessage(moved))
        run = []
        if message is not None:
            out.append(message)
    return tuple(out)


def _text_of(result: ToolResultMessage) -> str:
    if result.attachments and not result.content:
        return "(what it returned follows in the next message)"
    return result.content


def _moved(run: list[ToolResultMessage]) -> tuple[UserPart, ...]:
    """The run's attachments, each result's after a line naming its tool (and which of
    the run's results it is, when several have some)."""
    carrying = [result for result in run if result.attachments]
    parts: list[UserPart] = []
    for number, result in enumerate(carrying, start=1):
        which = f" (result {number} of {len(carrying)})" if len(carrying) > 1 else ""
        parts += [TextPart(f"Returned by the {result.name} tool{which}:"), *result.attachments]
    return tuple(parts)
