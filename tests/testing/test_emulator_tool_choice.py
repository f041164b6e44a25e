"""`tool_choice` and `parallel_tool_calls` the real APIs refuse, refused by the emulator in
their words, through each provider's SDK; what they take, taken."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors, types

from wink.testing import ProviderEmulator, Turn

CHAT_TOOL: Any = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}
RESPONSES_TOOL: Any = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {}},
}
ANTHROPIC_TOOL: Any = {"name": "get_weather", "input_schema": {"type": "object"}}
MESSAGES: Any = [{"role": "user", "content": "Weather in Paris?"}]


def _chat_refusal(client: openai.OpenAI, **fields: Any) -> dict[str, Any]:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4.1", messages=MESSAGES, **fields)
    body = caught.value.body
    assert isinstance(body, dict)
    return body  # type: ignore[return-value]


@pytest.mark.parametrize("field", ["tool_choice", "parallel_tool_calls"])
def test_chat_refuses_tool_settings_without_tools(openai_client: openai.OpenAI, field: str) -> None:
    value: Any = "auto" if field == "tool_choice" else False
    body = _chat_refusal(openai_client, **{field: value})
    assert body["message"] == (
        f"Invalid value for '{field}': '{field}' is only allowed when 'tools' are specified."
    )
    assert (body["type"], body["param"], body["code"]) == ("invalid_request_error", field, None)


def test_chat_refuses_a_choice_it_does_not_define(openai_client: openai.OpenAI) -> None:
    body = _chat_refusal(openai_client, tools=[CHAT_TOOL], tool_choice="any")
    assert body["message"] == (
        "Invalid value: 'any'. Supported values are: 'none', 'auto', and 'required'."
    )
    assert (body["param"], body["code"]) == ("tool_choice", "invalid_value")


def test_chat_refuses_a_named_function_not_among_the_tools(openai_client: openai.OpenAI) -> None:
    choice: Any = {"type": "function", "function": {"name": "get_time"}}
    body = _chat_refusal(openai_client, tools=[CHAT_TOOL], tool_choice=choice)
    assert (
        body["message"]
        == "Invalid value for 'tool_choice': function 'get_time' not found in 'tools'."
    )
    assert body["param"] == "tool_choice"


def test_chat_takes_a_forced_choice_among_its_tools(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    emu.enqueue(Turn.text("ok"), Turn.text("ok"))
    choice: Any = {"type": "function", "function": {"name": "get_weather"}}
    for tool_choice in ("required", choice):
        completion = openai_client.chat.completions.create(
            model="gpt-4.1",
            messages=MESSAGES,
            tools=[CHAT_TOOL],
            tool_choice=tool_choice,
            parallel_tool_calls=False,
        )
        assert completion.choices[0].message.content == "ok"


def test_responses_refuses_a_named_function_not_among_the_tools(
    emu: ProviderEmulator, openai_client: openai.OpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(
            model="gpt-4.1",
            input="Weather?",
            tools=[RESPONSES_TOOL],
            tool_choice={"type": "function", "name": "get_time"},
        )
    body: Any = caught.value.body
    assert body["message"] == "Tool choice 'function' not found in 'tools' parameter."
    assert body["param"] == "tool_choice"
    # the Responses API takes both settings without tools (and echoes them back)
    emu.enqueue(Turn.text("ok"))
    response = openai_client.responses.create(
        model="gpt-4.1", input="Weather?", tool_choice="auto", parallel_tool_calls=False
    )
    assert response.output_text == "ok"
    assert response.parallel_tool_calls is False


def _anthropic_refusal(client: anthropic.Anthropic, **fields: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=2000, messages=MESSAGES, **fields
        )
    body: Any = caught.value.body
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    return body["error"]["message"]


THINKING: Any = {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"tool_choice": {"type": "auto"}},
            "tool_choice may only be specified while providing tools.",
        ),
        (
            {"tools": [ANTHROPIC_TOOL], "tool_choice": {"type": "tool", "name": "get_time"}},
            "tool_choice.name: Tool 'get_time' not found in provided tools",
        ),
        (
            {
                "tools": [ANTHROPIC_TOOL],
                "tool_choice": {"type": "none", "disable_parallel_tool_use": True},
            },
            "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted",
        ),
        (
            {"tools": [ANTHROPIC_TOOL], "tool_choice": {"type": "any"}, "thinking": THINKING},
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            {
                "tools": [ANTHROPIC_TOOL],
                "tool_choice": {"type": "tool", "name": "get_weather"},
                "thinking": {"type": "adaptive"},
            },
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
    ],
    ids=["no tools", "unknown name", "none serial", "any thinking", "tool thinking"],
)
def test_anthropic_refusals(
    anthropic_client: anthropic.Anthropic, fields: dict[str, Any], message: str
) -> None:
    assert _anthropic_refusal(anthropic_client, **fields) == message


def test_anthropic_takes_auto_with_thinking_and_a_forced_choice_without(
    emu: ProviderEmulator, anthropic_client: anthropic.Anthropic
) -> None:
    emu.enqueue(Turn.text("ok"), Turn.text("ok"))
    serial: Any = {"type": "auto", "disable_parallel_tool_use": True}
    forced: Any = {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}
    for extra in ({"tool_choice": serial, "thinking": THINKING}, {"tool_choice": forced}):
        message = anthropic_client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=2000,
            messages=MESSAGES,
            tools=[ANTHROPIC_TOOL],
            **extra,
        )
        assert message.content[-1].type == "text"


def _gemini_config(
    mode: Any, names: list[str] | None = None, *, declare: bool = True
) -> types.GenerateContentConfig:
    declaration = types.FunctionDeclaration(name="get_weather", description="Weather")
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])] if declare else None,
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=mode, allowed_function_names=names
            )
        ),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            _gemini_config("ANY", declare=False),
            "Function calling config is set without function_declarations.",
        ),
        (_gemini_config("AUTO", ["get_weather"]), "Request contains an invalid argument."),
        (_gemini_config("ANY", ["get_time"]), "Request contains an invalid argument."),
    ],
    ids=["no declarations", "names with AUTO", "undeclared name"],
)
def test_gemini_refusals(
    google_client: genai.Client, config: types.GenerateContentConfig, message: str
) -> None:
    with pytest.raises(genai_errors.ClientError) as caught:
        google_client.models.generate_content(
            model="gemini-2.5-flash", contents="Weather?", config=config
        )
    assert (caught.value.code, caught.value.status) == (400, "INVALID_ARGUMENT")
    assert caught.value.message == message


def test_gemini_takes_allowed_names_with_any(
    emu: ProviderEmulator, google_client: genai.Client
) -> None:
    emu.enqueue(Turn.text("ok"), Turn.text("ok"))
    for config in (_gemini_config("ANY", ["get_weather"]), _gemini_config("NONE")):
        response = google_client.models.generate_content(
            model="gemini-2.5-flash", contents="Weather?", config=config
        )
        assert response.text == "ok"
    sent = emu.requests[0].body["toolConfig"]["functionCallingConfig"]
    assert sent == {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}


def test_gemini_refuses_a_mode_it_does_not_know(emu: ProviderEmulator, make_google: Any) -> None:
    """An unknown mode is refused as the API parses the body (sent raw: the SDK's enum
    would not carry it)."""
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Weather?"}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "REQUIRED"}},
    }
    url = f"{emu.base_url('google')}/v1beta/models/gemini-2.5-flash:generateContent"
    answer = httpx.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=5)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"] == (
        "Invalid value at 'tool_config.function_calling_config.mode' "
        "(type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "
        '"REQUIRED"'
    )
