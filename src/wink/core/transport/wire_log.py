"""The `wink.wire` logger: what went to the provider and what came back, at DEBUG.

Off unless the application asks for it (`logging.getLogger("wink.wire").setLevel(DEBUG)`
with a handler, or `configure_logging("DEBUG")`); when off, each request costs one
`isEnabledFor` check. What it shows is redacted: no auth header is ever logged (they are
not seen here), every key the adapter knows is masked in the bodies, and a long body is
cut (docs/troubleshooting.md).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from .errors import redact_secrets

__all__ = ["MAX_BODY", "log_error", "log_request", "log_response", "logged_pieces", "wire_logger"]

wire_logger = logging.getLogger("wink.wire")

MAX_BODY = 4000
"""Characters of a body shown; the rest is counted, not shown."""

# The response headers worth reading when something goes wrong: ids to quote to the
# provider's support, rate-limit state, the content type. Cookies and the rest stay out.
_SHOWN_PREFIXES = (
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "x-request-id",
    "request-id",
    "retry-after",
    "content-type",
    "openai-processing-ms",
    "x-goog-",
)


def enabled() -> bool:
    return wire_logger.isEnabledFor(logging.DEBUG)


def cut(text: str) -> str:
    if len(text) <= MAX_BODY:
        return text
    return f"{text[:MAX_BODY]}... ({len(text) - MAX_BODY} more characters)"


def _text(body: bytes | str, secrets: tuple[str, ...]) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return cut(str(redact_secrets(text, secrets)))


def _headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower().startswith(_SHOWN_PREFIXES)
    }


def log_request(provider: str, url: str, body: bytes, secrets: tuple[str, ...]) -> None:
    wire_logger.debug("%s request: POST %s\n%s", provider, url, _text(body, secrets))


def log_response(
    provider: str,
    status: int,
    headers: Mapping[str, str] | None,
    body: bytes | str | None,
    secrets: tuple[str, ...],
) -> None:
    shown = "(streamed)" if body is None else _text(body, secrets)
    wire_logger.debug("%s response: %s %s\n%s", provider, status, _headers(headers), shown)


def log_error(provider: str, error: BaseException, secrets: tuple[str, ...]) -> None:
    """A request that failed: the provider's status and words as wink read them (already
    redacted by the error mapping), or the transport's failure."""
    status = getattr(error, "status_code", None)
    payload: Any = getattr(error, "provider_payload", None)
    detail = f"\n{cut(str(redact_secrets(payload, secrets)))}" if payload else ""
    wire_logger.debug(
        "%s response: %s %s: %s%s",
        provider,
        status if status is not None else "no answer",
        type(error).__name__,
        redact_secrets(str(error), secrets),
        detail,
    )


async def logged_pieces(
    provider: str, pieces: AsyncIterator[bytes], secrets: tuple[str, ...]
) -> AsyncGenerator[bytes]:
    """A streamed body passed through, logged once it ends (cut like any body)."""
    seen: list[bytes] = []
    kept = total = 0
    try:
        async for piece in pieces:
            total += len(piece)
            if kept < MAX_BODY * 4:  # enough for MAX_BODY characters of UTF-8
                seen.append(piece)
                kept += len(piece)
            yield piece
    finally:
        wire_logger.debug(
            "%s streamed body (%d bytes):\n%s", provider, total, _text(b"".join(seen), secrets)
        )
