"""What the Messages API refuses in a conversation, in its words: `tool_choice` it does not
take, empty content, `tool_use` and `tool_result` that do not pair, thinking blocks not
echoed intact or missing where thinking is on, a paused turn not sent back unchanged."""

from __future__ import annotations

import re
from typing import Any

from ..faults import Fault
from ..formats import as_list, as_object, as_str
from ..thinking import ReasoningLedger, intact, opens
from .anthropic_builtin import altered_server_block

__all__ = ["blocks_of", "history_problem"]

_THINKING_BLOCKS = ("thinking", "redacted_thinking")
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def history_problem(
    body: dict[str, Any], names: tuple[str, ...], ledger: ReasoningLedger
) -> Fault | None:
    """Why the Messages API refuses the conversation of `body` (its 400), or None:
    `tool_choice` as the API takes it (`names`: the request's tools); the conversation's
    rules (`_empty_content`, `_tool_pairing`); thinking blocks echoed intact; with
    thinking on, the assistant turn of the last tool round starting with the thinking it
    had; a paused turn sent back unchanged."""
    messages = [as_object(message) for message in as_list(body.get("messages"))]
    problem = (
        _tool_choice_refusal(body, names) or _empty_content(messages) or _tool_pairing(messages)
    )
    if problem is not None:
        return Fault.bad_request(problem)
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            blocks = blocks_of(message)
            problem = _altered_block(index, blocks, ledger)
            problem = problem or altered_server_block(index, blocks, ledger)
            if problem is not None:
                return Fault.bad_request(problem)
    last = max(
        (i for i, message in enumerate(messages) if message.get("role") == "assistant"),
        default=None,
    )
    if last is None:
        return None
    blocks = blocks_of(messages[last])
    thinking_on = as_object(body.get("thinking")).get("type") in ("enabled", "adaptive")
    if not thinking_on:
        for position, block in enumerate(blocks):
            if last == len(messages) - 1 and block.get("type") in _THINKING_BLOCKS:
                return Fault.bad_request(
                    f"messages.{last}.content.{position}: When thinking is disabled, an "
                    "`assistant` message in the final position cannot contain `thinking`. "
                    "To use thinking blocks, enable `thinking` in your request."
                )
        return None
    thought = any(  # a call its Claude made thinking, or one another model made
        block.get("type") == "tool_use"
        and ledger.recall(f"anthropic:thought:{block.get('id')}") is not False
        for block in blocks
    )
    first = str(blocks[0].get("type")) if blocks else "nothing"
    if thought and first not in _THINKING_BLOCKS:
        return Fault.bad_request(
            f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, "
            f"but found `{first}`. When `thinking` is enabled, a final `assistant` message "
            "must start with a thinking block (preceeding the lastmost set of `tool_use` "
            "and `tool_result` blocks). We recommend you include thinking blocks from "
            "previous turns. To avoid this requirement, disable `thinking`. Please "
            f"consult our documentation at {_DOCS}"
        )
    return None


def blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks (none for text content)."""
    return [as_object(block) for block in as_list(message.get("content"))]


def _tool_choice_refusal(body: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """The Messages API's 400s for `tool_choice`: without `tools`, naming a tool none of
    them is, `disable_parallel_tool_use` on `none` (which has no such field), or forcing
    a call (`any`, `tool`) with thinking on."""
    if "tool_choice" not in body:
        return None
    if not names:
        return "tool_choice may only be specified while providing tools."
    choice = as_object(body.get("tool_choice"))
    kind = choice.get("type")
    name = as_str(choice.get("name"))
    if kind == "tool" and name not in names:
        return f"tool_choice.name: Tool '{name}' not found in provided tools"
    if kind == "none" and "disable_parallel_tool_use" in choice:
        return "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted"
    thinking = as_object(body.get("thinking")).get("type") in ("enabled", "adaptive")
    if thinking and kind in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def _empty_content(messages: list[dict[str, Any]]) -> str | None:
    """The Messages API's 400 for a message with no content (but a final assistant
    message, a prefill, which may be empty) or a text block with no text or only
    whitespace (what Claude itself may answer beside a `tool_use`), else None."""
    for index, message in enumerate(messages):
        content = message.get("content")
        final_assistant = index == len(messages) - 1 and message.get("role") == "assistant"
        if content in ("", []) and not final_assistant:
            return (
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        texts = (
            [content]
            if isinstance(content, str)
            else [
                as_str(b.get("text")) or "" for b in blocks_of(message) if b.get("type") == "text"
            ]
        )
        for text in texts:
            if text == "" and isinstance(content, list):
                return "messages: text content blocks must be non-empty"
            if text and not text.strip():
                return "messages: text content blocks must contain non-whitespace text"
    return None


def _tool_pairing(messages: list[dict[str, Any]]) -> str | None:
    """Why the conversation breaks the Messages API's rules (its 400 message), or None:
    no `system` role among the messages, `tool_use` ids of its pattern and each used once
    in the conversation, every `tool_use` answered by a `tool_result` in the next message,
    and no `tool_result` that answers no `tool_use` of the message before it."""
    previous: list[str] = []  # the tool_use ids of the message before
    used: set[str] = set()  # every tool_use id so far: ids are unique in a conversation
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            return (
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'
            )
        blocks = blocks_of(message)
        if role == "user":
            for position, block in enumerate(blocks):
                call_id = block.get("tool_use_id")
                if block.get("type") == "tool_result" and call_id not in previous:
                    return (
                        f"messages.{index}.content.{position}: unexpected `tool_use_id` found "
                        f"in `tool_result` blocks: {call_id}. Each `tool_result` block must "
                        "have a corresponding `tool_use` block in the previous message."
                    )
        ids: list[str] = []
        for position, block in enumerate(blocks if role == "assistant" else ()):
            if block.get("type") != "tool_use":
                continue
            call_id = as_str(block.get("id")) or ""
            if not _TOOL_USE_ID.match(call_id):
                return (
                    f"messages.{index}.content.{position}.tool_use.id: String should match "
                    "pattern '^[a-zA-Z0-9_-]+$'"
                )
            if call_id in used:
                return f"messages.{index}.content.{position}: `tool_use` ids must be unique"
            used.add(call_id)
            ids.append(call_id)
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = {
            block.get("tool_use_id")
            for block in blocks_of(following)
            if following.get("role") == "user" and block.get("type") == "tool_result"
        }
        missing = [call_id for call_id in ids if call_id not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
        previous = ids
    return None


def _altered_block(index: int, blocks: list[dict[str, Any]], ledger: ReasoningLedger) -> str | None:
    """Why an assistant message's thinking or paused blocks are not as the emulator sent
    them, or None (blocks it did not make are not its to judge)."""
    for position, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "thinking" and opens(block.get("signature"), block.get("thinking")) is False:
            return f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block"
        if kind == "redacted_thinking" and intact(block.get("data")) is False:
            return (
                f"messages.{index}.content.{position}: Invalid `data` in `redacted_thinking` block"
            )
        if kind == "server_tool_use":
            paused = ledger.recall(f"anthropic:paused:{block.get('id')}")
            if paused is not None and not _contains(blocks, list(paused)):
                return (
                    f"messages.{index}: a paused turn (`pause_turn`) must be sent back "
                    "unchanged to continue it (wink emulator)"
                )
    return None


def _contains(blocks: list[dict[str, Any]], run: list[dict[str, Any]]) -> bool:
    """Whether `run` appears in `blocks`, in order and unbroken."""
    size = len(run)
    return any(blocks[start : start + size] == run for start in range(len(blocks) - size + 1))
