"""`StainlessCalls`: the HTTP calls of the SDKs Stainless generates (openai, anthropic).

Two wire formats' SDKs share it, so it lives beside `base.py` and `host.py` rather than
in either folder (docs/architecture.md); core's transport only knows `HttpCalls`.
"""

from __future__ import annotations

from typing import Any

from ..core.transport.http import EncodedRequest

__all__ = ["StainlessCalls"]


class StainlessCalls:
    """The HTTP calls of a Stainless SDK (openai, anthropic): its documented raw call.

    `client.post(path, cast_to=<its httpx>.Response, content=...)` keeps auth, headers,
    base URL, timeout and exception types the SDK's, and skips `create()`'s walk over the
    whole conversation on every request and its response models. With `stream=True` the
    SDK returns the response once its head is in (an error status raises the SDK's
    exception, read and mapped as for `post`).
    """

    __slots__ = ("_response_type",)

    def __init__(self, response_type: type) -> None:
        self._response_type = response_type

    def post(self, client: Any, wire: EncodedRequest, time_limit: float) -> tuple[bytes, Any]:
        http = client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options=_options(wire, time_limit),
        )
        return http.content, http.headers

    async def post_async(
        self, client: Any, wire: EncodedRequest, time_limit: float
    ) -> tuple[bytes, Any]:
        http = await client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options=_options(wire, time_limit),
        )
        return http.content, http.headers

    def open_stream(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options=_options(wire, time_limit),
            stream=True,
        )

    async def open_stream_async(self, client: Any, wire: EncodedRequest, time_limit: float) -> Any:
        return await client.post(
            wire.path,
            cast_to=self._response_type,
            content=wire.content,
            options=_options(wire, time_limit),
            stream=True,
        )


def _options(wire: EncodedRequest, time_limit: float) -> dict[str, Any]:
    """A Stainless call's request options: its timeout, and the signer's headers."""
    if wire.headers is None:
        return {"timeout": time_limit}
    return {"timeout": time_limit, "headers": wire.headers}
