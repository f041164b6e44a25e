"""Every exception class an SDK defines maps to a WinkError with its cause chained."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType

import httpx2
import pytest

from wink import PromptEvaluationError, ThrottleError, WinkError
from wink.adapters import anthropic as anthropic_adapter
from wink.adapters import google as google_adapter
from wink.adapters import openai as openai_adapter

_REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/x")


def _instance(cls: type[BaseException], status: int) -> BaseException:
    response = httpx2.Response(status, request=_REQUEST, json={"error": {"message": "m"}})
    attempts: list[Callable[[], BaseException]] = [
        lambda: cls("m", response=response, body={"error": {"message": "m"}}),  # type: ignore[call-arg]
        lambda: cls(response=response, body=None),  # type: ignore[call-arg]
        lambda: cls(request=_REQUEST),  # type: ignore[call-arg]
        lambda: cls(message="m", request=_REQUEST),  # type: ignore[call-arg]
        lambda: cls("m"),
    ]
    for attempt in attempts:
        try:
            return attempt()
        except TypeError:
            continue
    error = cls.__new__(cls)
    Exception.__init__(error, "m")
    return error


def _sdk_classes(module: ModuleType, base: type[BaseException]) -> list[type[BaseException]]:
    return sorted(
        {
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if issubclass(value, base)
        },
        key=lambda cls: cls.__name__,
    )


def _check(
    mapper: Callable[[str], AbstractContextManager[None]], error: BaseException
) -> WinkError:
    with pytest.raises(WinkError) as info, mapper("p"):
        raise error
    assert info.value.__cause__ is error
    return info.value


def test_every_openai_exception_is_mapped() -> None:
    import openai

    classes = _sdk_classes(openai, openai.OpenAIError)
    assert len(classes) > 10
    for cls in classes:
        status = (
            getattr(cls, "status_code", 500)
            if isinstance(getattr(cls, "status_code", None), int)
            else 500
        )
        _check(lambda name: openai_adapter.map_openai_errors(name), _instance(cls, status))


def test_every_anthropic_exception_is_mapped() -> None:
    import anthropic

    classes = _sdk_classes(anthropic, anthropic.AnthropicError)
    assert len(classes) > 10
    for cls in classes:
        _check(lambda name: anthropic_adapter._map_errors(name), _instance(cls, 500))


def test_every_google_exception_is_mapped() -> None:
    """The Gemini adapter speaks REST over httpx2: its exceptions, and its error answers."""
    classes = _sdk_classes(httpx2, Exception)
    assert len(classes) > 10
    for cls in classes:
        _check(lambda name: google_adapter._map_errors(name), _instance(cls, 500))
    answer = google_adapter.GeminiErrorAnswer(httpx2.Response(503, request=_REQUEST))
    mapped = _check(lambda name: google_adapter._map_errors(name), answer)
    assert isinstance(mapped, ThrottleError)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, "rate_limit"), (500, "overloaded"), (503, "overloaded"), (529, "overloaded")],
)
def test_status_classes_pick_the_throttle_kind(status: int, kind: str) -> None:
    import anthropic

    response = httpx2.Response(status, request=_REQUEST, json={"type": "error"})
    error = anthropic.APIStatusError("m", response=response, body={"type": "error"})
    mapped = _check(lambda name: anthropic_adapter._map_errors(name), error)
    assert isinstance(mapped, ThrottleError)
    assert mapped.details.kind == kind


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_client_errors_are_request_errors(status: int) -> None:
    import openai

    response = httpx2.Response(status, request=_REQUEST, json={"error": {"message": "m"}})
    error = openai.APIStatusError("m", response=response, body={"message": "m"})
    mapped = _check(lambda name: openai_adapter.map_openai_errors(name), error)
    assert isinstance(mapped, PromptEvaluationError)
    assert not isinstance(mapped, ThrottleError)
    assert mapped.phase == "request"
