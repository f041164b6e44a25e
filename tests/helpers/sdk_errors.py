"""SDK exception classes, built and put through an adapter's error map."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType

import httpx2
import pytest

from wink import WinkError

_REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/x")


def exception_classes(module: ModuleType, base: type[BaseException]) -> list[type[BaseException]]:
    """Every class `module` exposes that derives from `base`, by name."""
    return sorted(
        {
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if issubclass(value, base)
        },
        key=lambda cls: cls.__name__,
    )


def sdk_exception(cls: type[BaseException], status: int = 500) -> BaseException:
    """An instance of `cls` through the first usual constructor signature that fits
    (Stainless status errors, httpx2 status and transport errors, plain exceptions)."""
    response = httpx2.Response(status, request=_REQUEST, json={"error": {"message": "m"}})
    factory: Callable[..., BaseException] = cls
    attempts: list[Callable[[], BaseException]] = [
        lambda: factory("m", response=response, body={"error": {"message": "m"}}),
        lambda: factory("m", request=_REQUEST, response=response),
        lambda: factory(response=response, body=None),
        lambda: factory(request=_REQUEST),
        lambda: factory(message="m", request=_REQUEST),
        lambda: factory("m"),
    ]
    for attempt in attempts:
        try:
            return attempt()
        except TypeError:
            continue
    error = cls.__new__(cls)
    Exception.__init__(error, "m")
    return error


def status_response(status: int, body: object) -> httpx2.Response:
    """An HTTP answer with a JSON `body`, as an SDK status error carries it."""
    return httpx2.Response(status, request=_REQUEST, json=body)


def mapped(error_map: AbstractContextManager[None], error: BaseException) -> WinkError:
    """What `error_map` (an adapter's `_map_errors(...)`) turns `error` into; the cause kept."""
    with pytest.raises(WinkError) as info, error_map:
        raise error
    assert info.value.__cause__ is error
    return info.value
