"""OpenAI Responses API (`POST /v1/responses`) on the wire; errors are Chat's."""

from __future__ import annotations

from typing import Any

from ..faults import Fault
from ..formats import as_list, as_object, as_str, dump
from ..history import HistoryEntry, arguments_text, content_text
from ..parts import FoundPart
from ..records import Provider, ToolResultView
from ..thinking import ReasoningLedger, seal
from ..turns import Turn
from .base import Rendered, WireContext
from .openai import OpenAIWireBase, data_part, prompt_details
from .openai_responses_builtin import builtin_items, tools_refusal, url_annotations
from .openai_responses_stream import responses_stream, responses_stream_error

__all__ = ["OpenAIResponsesWire"]

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
_CONTEXT_WINDOW = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
_TEXT_PARTS = ("input_text", "output_text", "text")
# What `input_tokens` takes; anything else (`max_output_tokens`, `store`, `stream`) is refused
_COUNTED = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "truncation",
        "conversation",
        "previous_response_id",
        "personality",
    }
)


class OpenAIResponsesWire(OpenAIWireBase):
    """`POST /v1/responses`: output items, `call_id`s and `fc_` item ids."""

    provider: Provider = "openai-responses"
    file_field = "file_data"
    context_window = (_CONTEXT_WINDOW, "input")
    path = "/v1/responses"

    def render_stream(
        self, body: dict[str, Any], ctx: WireContext, size: int, turn: Turn
    ) -> list[bytes]:
        return responses_stream(body, ctx, size, turn)

    def stream_error(self, fault: Fault, ctx: WireContext) -> list[bytes]:
        return responses_stream_error(fault, ctx)

    def render_turn(self, turn: Turn, ctx: WireContext) -> Rendered:
        output = self._output(turn, ctx)
        incomplete = _INCOMPLETE.get(turn.finish)
        usage = turn.usage
        request = ctx.body
        body: dict[str, Any] = {
            "id": ctx.ids.response(),
            "object": "response",
            "created_at": int(ctx.now),
            "status": "incomplete" if incomplete else "completed",
            "error": None,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": request.get("instructions"),
            "max_output_tokens": request.get("max_output_tokens"),
            "model": ctx.model,
            "output": output,
            "parallel_tool_calls": request.get("parallel_tool_calls", True),
            "previous_response_id": request.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None, **as_object(request.get("reasoning"))},
            "store": request.get("store", True),
            "temperature": request.get("temperature", 1.0),
            "text": request.get("text", {"format": {"type": "text"}}),
            "tool_choice": request.get("tool_choice", "auto"),
            "tools": request.get("tools", []),
            "top_p": request.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": {
                "input_tokens": usage.input_tokens,
                "input_tokens_details": prompt_details(usage),
                "output_tokens": usage.output_tokens,
                "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                "total_tokens": usage.input_tokens + usage.output_tokens,
            },
            "user": None,
            "metadata": request.get("metadata", {}),
        }
        return Rendered(200, self.headers(ctx), dump(body))

    def _output(self, turn: Turn, ctx: WireContext) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.thinking:
            items.append(self._reasoning(turn, ctx))
        items.extend(builtin_items(turn, ctx))
        if turn.content is not None:
            if turn.finish == "refusal":
                part: dict[str, Any] = {"type": "refusal", "refusal": turn.content}
            else:
                cited = url_annotations(turn.citations)
                part = {"type": "output_text", "text": turn.content, "annotations": cited}
            items.append(
                {
                    "id": ctx.ids.response_item("msg"),
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        items.extend(
            {
                "id": ctx.ids.response_item("fc"),
                "type": "function_call",
                "status": "completed",
                "call_id": call.id or ctx.ids.openai_call(),
                "name": call.name,
                "arguments": call.arguments_json(),
            }
            for call in turn.calls
        )
        if turn.thinking and len(items) > 1 and ctx.ledger is not None:
            # The reasoning item must come back followed by the item it led to, and that
            # item with it (the real API pairs them by id).
            reasoning_id, following_id = items[0]["id"], items[1]["id"]
            ctx.ledger.remember(f"responses:follows:{reasoning_id}", following_id)
            ctx.ledger.remember(f"responses:reasoning_of:{following_id}", reasoning_id)
        return items

    def _reasoning(self, turn: Turn, ctx: WireContext) -> dict[str, Any]:
        """One reasoning item: summary parts when the request asks for a summary, the
        encrypted content when it includes it."""
        request = ctx.body
        summary = as_object(request.get("reasoning")).get("summary") is not None
        shown = [thought.text for thought in turn.thinking if not thought.redacted]
        item: dict[str, Any] = {
            "id": ctx.ids.response_item("rs"),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": text} for text in shown]
            if summary
            else [],
        }
        if "reasoning.encrypted_content" in as_list(request.get("include")):
            item["encrypted_content"] = seal("\n".join(t.text for t in turn.thinking))
        return item

    def wrong_shape(self, ctx: WireContext) -> dict[str, Any]:
        return {"id": ctx.ids.response(), "object": "response", "output": None}

    def validate(self, body: dict[str, Any]) -> str | None:
        if "model" not in body:
            return "Missing required parameter: 'model'."
        return None

    def found_parts(self, body: dict[str, Any]) -> list[FoundPart]:
        found: list[FoundPart] = []
        for index, raw in enumerate(as_list(body.get("input"))):
            item = as_object(raw)
            in_result = item.get("type") == "function_call_output"
            key = "output" if in_result else "content"
            for position, block in enumerate(as_list(item.get(key))):
                where = f"input[{index}].{key}[{position}]"
                part = _responses_part(as_object(block), where, in_result)
                if part is not None:
                    found.append(part)
        return found

    def prompt_items(self, body: dict[str, Any]) -> list[Any]:
        instructions = body.get("instructions")
        return ([instructions] if instructions else []) + as_list(body.get("input"))

    def check_history(
        self, body: dict[str, Any], model: str, ledger: ReasoningLedger
    ) -> Fault | None:
        """A named `tool_choice` among the tools; every `function_call` answered by a
        `function_call_output` after it, and no
        output without its call (unless the conversation is stored: `previous_response_id`);
        a reasoning item the emulator made followed by the item it led to, and that item
        not without it: the real API's 400s."""
        refused = tools_refusal(body) or _named_choice_refusal(body, self.tool_names(body))
        if refused is not None:
            return refused
        items = [as_object(item) for item in as_list(body.get("input"))]
        if body.get("previous_response_id") is None:
            unpaired = _unpaired_call(items)
            if unpaired is not None:
                return unpaired
        for index, item in enumerate(items):
            item_id = as_str(item.get("id"))
            if item_id is None:
                continue
            following = ledger.recall(f"responses:follows:{item_id}")
            after = as_str(items[index + 1].get("id")) if index + 1 < len(items) else None
            if following is not None and after != following:
                return _bad_input(
                    f"Item '{item_id}' of type 'reasoning' was provided without its required "
                    "following item."
                )
            reasoning = ledger.recall(f"responses:reasoning_of:{item_id}")
            before = as_str(items[index - 1].get("id")) if index > 0 else None
            if reasoning is not None and before != reasoning:
                kind = as_str(item.get("type")) or "message"
                return _bad_input(
                    f"Item '{item_id}' of type '{kind}' was provided without its required "
                    f"'reasoning' item: '{reasoning}'."
                )
        return None

    def instructions(self, body: dict[str, Any]) -> str | None:
        texts = [text for text in (as_str(body.get("instructions")),) if text]
        for raw in as_list(body.get("input")):
            item = as_object(raw)
            if item.get("role") in ("system", "developer"):
                texts.append(content_text(item.get("content"), kinds=_TEXT_PARTS))
        return "\n\n".join(texts) if texts else None

    def history(self, body: dict[str, Any]) -> tuple[HistoryEntry, ...]:
        names: dict[str, str] = {}
        entries: list[HistoryEntry] = []
        for raw in as_list(body.get("input")):
            item = as_object(raw)
            kind, role = item.get("type", "message"), item.get("role")
            call_id = as_str(item.get("call_id"))
            if kind == "message" and role in ("user", "assistant"):
                text = content_text(item.get("content"), kinds=_TEXT_PARTS)
                entries.append(HistoryEntry("user" if role == "user" else "assistant", text))
            elif kind == "function_call":
                name = as_str(item.get("name"))
                if call_id is not None and name is not None:
                    names[call_id] = name
                text = arguments_text(item.get("arguments"))
                entries.append(HistoryEntry("call", text, name, call_id))
            elif kind == "function_call_output":
                name = names.get(call_id) if call_id is not None else None
                text = content_text(item.get("output"), kinds=_TEXT_PARTS)
                entries.append(HistoryEntry("result", text, name, call_id))
        return tuple(entries)

    def tool_results(self, body: dict[str, Any]) -> tuple[ToolResultView, ...]:
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for raw in as_list(body.get("input")):
            item = as_object(raw)
            kind = item.get("type")
            call_id = as_str(item.get("call_id"))
            if kind == "function_call" and call_id is not None:
                names[call_id] = as_str(item.get("name")) or ""
            elif kind == "function_call_output":
                name = names.get(call_id) if call_id is not None else None
                results.append(ToolResultView(call_id, name, item.get("output"), None))
        return tuple(results)

    def tool_names(self, body: dict[str, Any]) -> tuple[str, ...]:
        names = (as_str(as_object(tool).get("name")) for tool in as_list(body.get("tools")))
        return tuple(name for name in names if name is not None)

    # --- `POST /v1/responses/input_tokens` (token_counts.py)

    def token_count_model(self, path: str) -> str | None:
        return "" if path == "/v1/responses/input_tokens" else None

    def token_count_problem(self, body: dict[str, Any]) -> Fault | None:
        for key in body:
            if key not in _COUNTED:
                return Fault.bad_request(
                    f"Unknown parameter: '{key}'.", param=key, code="unknown_parameter"
                )
        return None

    def counted_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def token_count_body(self, count: int) -> dict[str, Any]:
        return {"object": "response.input_tokens", "input_tokens": count}


def _named_choice_refusal(body: dict[str, Any], names: tuple[str, ...]) -> Fault | None:
    """The 400 for a `tool_choice` naming a function none of the `tools` is (the Responses
    API takes `tool_choice` and `parallel_tool_calls` without tools)."""
    choice = as_object(body.get("tool_choice"))
    if choice.get("type") != "function" or as_str(choice.get("name")) in names:
        return None
    return Fault.bad_request(
        "Tool choice 'function' not found in 'tools' parameter.", param="tool_choice"
    )


def _bad_input(message: str) -> Fault:
    return Fault.bad_request(message, param="input")


def _unpaired_call(items: list[dict[str, Any]]) -> Fault | None:
    """The 400 for a `function_call_output` before (or without) its call, or a call that
    no output answers."""
    calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        call_id = as_str(item.get("call_id")) or ""
        if item.get("type") == "function_call":
            calls.append(call_id)
        elif item.get("type") == "function_call_output":
            if call_id not in calls:
                return _bad_input(
                    f"No tool call found for function call output with call_id {call_id}."
                )
            answered.add(call_id)
    missing = next((call_id for call_id in calls if call_id not in answered), None)
    if missing is not None:
        return _bad_input(f"No tool output found for function call {missing}.")
    return None


def _responses_part(block: dict[str, Any], path: str, in_tool_result: bool) -> FoundPart | None:
    kind = block.get("type")
    if kind == "input_image":
        return data_part(
            "image", path, as_str(block.get("image_url")), in_tool_result=in_tool_result
        )
    if kind == "input_file":
        value = as_str(block.get("file_data")) or as_str(block.get("file_url"))
        return data_part("document", path, value, in_tool_result=in_tool_result)
    return None
