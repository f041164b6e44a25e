"""OpenRouter (openrouter.ai/api/v1): Chat Completions for many models; its thinking comes
in `reasoning` / `reasoning_details`, and the billed cost (`usage.cost`, in credits) is
asked for with `usage: {include: true}` and kept on `Usage.billed_cost`
(docs/hosts/compatible.md)."""

from __future__ import annotations

from typing import Any

from ..openai import ChatHost, OpenAIChat

__all__ = ["OpenRouter"]


class OpenRouter(ChatHost):
    name = "openrouter"
    wire = OpenAIChat
    system = "openrouter"
    telemetry_name = "openrouter"
    api_key_variables = ("OPENROUTER_API_KEY",)
    base_url = "https://openrouter.ai/api/v1"
    offers_batches = False
    no_batches_reason = "OpenRouter has no batch API"

    def adjust_body(self, body: dict[str, Any]) -> dict[str, Any]:
        body.setdefault("usage", {"include": True})
        return body
