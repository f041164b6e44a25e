"""Gemini's built-in tools on the emulated wire: what `googleSearch`, `codeExecution` and
`urlContext` leave in a candidate, and the request the API refuses with them.

The shapes are the API's: `executableCode` / `codeExecutionResult` parts before the answer,
`groundingMetadata` (queries, one page, one support per sentence of the answer, counted in
UTF-8 bytes as Gemini counts them) and `urlContextMetadata` for the URLs the last user text
names. A scripted turn's text is the answer; the code run prints it.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..formats import as_list, as_object, as_str

__all__ = ["builtin_metadata", "builtin_parts", "builtin_refusal"]

_KINDS = {
    "googleSearch": "google_search",
    "codeExecution": "code_execution",
    "urlContext": "url_context",
}
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_SENTENCE = re.compile(r"[^.!?。]+[.!?。]?\s*")
SEARCH_PAGE = ("https://vertexaisearch.cloud.google.com/grounding-api-redirect/", "example.com")


def _asked(body: dict[str, Any]) -> set[str]:
    """The built-in tools the request turns on (the API reads the proto names too)."""
    asked: set[str] = set()
    for tool in as_list(body.get("tools")):
        given = as_object(tool)
        for kind, snake in _KINDS.items():
            if given.get(kind) is not None or given.get(snake) is not None:
                asked.add(kind)
    return asked


def builtin_refusal(body: dict[str, Any], model: str) -> str | None:
    """Gemini 2 models take no built-in tool beside function declarations (Gemini 3 do)."""
    if not _asked(body) or model.removeprefix("models/").startswith("gemini-3"):
        return None
    for tool in as_list(body.get("tools")):
        given = as_object(tool)
        if given.get("functionDeclarations") or given.get("function_declarations"):
            return "Tool use with function calling is unsupported by the model."
    return None


def builtin_parts(body: dict[str, Any], answer: str | None) -> list[dict[str, Any]]:
    """With `codeExecution`, the code the model ran and its result, before the answer."""
    if "codeExecution" not in _asked(body) or answer is None:
        return []
    return [
        {"executableCode": {"language": "PYTHON", "code": f"print({answer!r})\n"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": f"{answer}\n"}},
    ]


def _last_user_text(body: dict[str, Any]) -> str:
    for content in reversed(as_list(body.get("contents"))):
        given = as_object(content)
        if given.get("role", "user") != "user":
            continue
        texts = [as_str(as_object(part).get("text")) for part in as_list(given.get("parts"))]
        found = " ".join(text for text in texts if text)
        if found:
            return found
    return ""


def builtin_metadata(body: dict[str, Any], answer: str | None) -> dict[str, Any]:
    """The candidate's `groundingMetadata` and `urlContextMetadata` for the tools asked."""
    asked = _asked(body)
    question = _last_user_text(body)
    metadata: dict[str, Any] = {}
    if "googleSearch" in asked and answer:
        metadata["groundingMetadata"] = _grounding(question, answer)
    urls = _URL.findall(question) if "urlContext" in asked else []
    if urls:
        metadata["urlContextMetadata"] = {
            "urlMetadata": [
                {"retrievedUrl": url, "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}
                for url in urls
            ]
        }
    return metadata


def _grounding(question: str, answer: str) -> dict[str, Any]:
    redirect, title = SEARCH_PAGE
    token = hashlib.sha256(question.encode()).hexdigest()[:32]
    supports: list[dict[str, Any]] = []
    for match in _SENTENCE.finditer(answer):
        sentence = match.group().rstrip()
        if not sentence.strip():
            continue
        start = len(answer[: match.start()].encode())
        segment: dict[str, Any] = {"endIndex": start + len(sentence.encode()), "text": sentence}
        if start:
            segment["startIndex"] = start  # a proto3 zero is left out
        supports.append({"segment": segment, "groundingChunkIndices": [0]})
    return {
        "searchEntryPoint": {"renderedContent": f'<div class="container">{question}</div>'},
        "groundingChunks": [{"web": {"uri": redirect + token, "title": title}}],
        "groundingSupports": supports,
        "webSearchQueries": [question],
    }
