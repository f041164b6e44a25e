"""An emulator that fails to answer never passes for a provider that failed.

The request gets a 418 naming the exception (no SDK and no wink adapter retries it), the
script is left as it was, the failure is counted and kept, and it is raised by
`check()`, `close()` and a clean `with` exit, and fails the pytest test it happened in.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.adapters import FAST_RETRY, PROVIDERS, make_adapter
from tests.helpers.prompts import make_prompt
from wink import BadRequestError, Session
from wink.testing import EmulatedRequest, EmulatorInternalError, Fault, ProviderEmulator, Turn
from wink.testing.wire import WIRES

CHAT = "/v1/chat/completions"
BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}]}


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise KeyError("input")  # the kind of bug the Anthropic stream renderer had


def post(emu: ProviderEmulator, path: str = CHAT, body: Any = None) -> httpx.Response:
    return httpx.post(emu.url + path, json=BODY if body is None else body, timeout=5)


def test_an_emulator_bug_is_a_418_that_uses_up_no_turn(
    emu: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu.enqueue(Fault.latency(0), Turn.text("kept"))
    with monkeypatch.context() as patched:
        patched.setattr(WIRES["openai"], "render_turn", _boom)
        failed = post(emu)
    assert failed.status_code == 418
    assert failed.reason_phrase == "wink emulator internal error"
    assert failed.headers["x-wink-emulator-error"] == "emulator"
    message = failed.json()["error"]["message"]
    assert message.startswith("wink emulator internal error: KeyError('input') while answering")
    assert "request #1 (POST /v1/chat/completions)" in message
    assert emu.pending == 2  # the latency and the turn are back in the queue, in order
    assert emu.stats.internal_errors == 1
    assert emu.stats.responses == {418: 1}
    (error,) = emu.internal_errors
    assert (error.number, error.provider, error.source) == (1, "openai", "emulator")
    assert "_boom" in error.traceback
    assert post(emu).json()["choices"][0]["message"]["content"] == "kept"
    with pytest.raises(EmulatorInternalError, match="KeyError") as raised:
        emu.check()
    assert raised.value.errors == (error,)
    assert emu.internal_errors == ()
    emu.check()  # each failure is reported once


def test_a_fault_that_failed_to_render_is_injected_again(
    emu: ProviderEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu.inject(Fault.server_error(503))
    with monkeypatch.context() as patched:
        patched.setattr(WIRES["openai"], "render_fault", _boom)
        assert post(emu).status_code == 418
    assert post(emu).status_code == 503
    with pytest.raises(EmulatorInternalError):
        emu.check()


def test_a_script_callable_returning_nonsense_is_its_bug(emu: ProviderEmulator) -> None:
    def script(request: EmulatedRequest) -> Any:
        return "Sunny."  # a str, not Turn.text("Sunny.")

    emu.set_script(script)
    failed = post(emu)
    assert failed.headers["x-wink-emulator-error"] == "script"
    assert "it returned str, not a Turn, a Fault or None" in failed.json()["error"]["message"]
    with pytest.raises(EmulatorInternalError, match="script callable failed on request #1"):
        emu.check()


@pytest.mark.parametrize("streamed", [False, True], ids=["evaluate", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_wink_fails_at_once_and_says_why(
    emu: ProviderEmulator, monkeypatch: pytest.MonkeyPatch, provider: str, streamed: bool
) -> None:
    """Retries on: the adapter does not retry the 418 into the next turn's answer."""
    emu.enqueue(Turn.text("first"), Turn.text("second"))
    monkeypatch.setattr(WIRES[provider], "render_turn", _boom)

    def ask() -> None:
        with make_adapter(provider, emu, retry_policy=FAST_RETRY) as adapter:
            if not streamed:
                adapter.evaluate(make_prompt(), session=Session())
                return
            with adapter.stream(make_prompt(), session=Session()) as stream:
                list(stream)

    with pytest.raises(BadRequestError, match="wink emulator internal error") as raised:
        ask()
    assert (raised.value.phase, raised.value.status_code) == ("request", 418)
    assert emu.stats.requests == 1
    assert emu.pending == 2
    with pytest.raises(EmulatorInternalError):
        emu.check()


def test_a_clean_with_exit_raises_and_close_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WIRES["openai"], "render_turn", _boom)
    with pytest.raises(EmulatorInternalError), ProviderEmulator([Turn.text("x")]) as emu:
        post(emu)
    emu = ProviderEmulator([Turn.text("x")]).start()
    post(emu)
    with pytest.raises(EmulatorInternalError):
        emu.close()
    emu.close()  # reported once; closing again is quiet


def test_an_exception_on_its_way_names_the_errors_and_leaves_them_pending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(WIRES["openai"], "render_turn", _boom)
    with pytest.raises(AssertionError) as raised, ProviderEmulator([Turn.text("x")]) as emu:
        assert post(emu).status_code == 200
    assert any("wink emulator internal error" in note for note in raised.value.__notes__)
    assert len(emu.internal_errors) == 1  # still to be reported (pytest: at teardown)
    with pytest.raises(EmulatorInternalError):
        emu.check()


@pytest.mark.slow
def test_the_pytest_plugin_fails_the_test_however_the_emulator_was_made(
    tmp_path: Path,
) -> None:
    """With the fixture, with a `with` whose error a `pytest.raises` swallowed, and with
    an emulator the test never closed: each test errors at teardown, naming the bug."""
    tests = tmp_path / "test_buggy.py"
    tests.write_text(
        textwrap.dedent(
            """
            import httpx
            import pytest
            from wink.testing import ProviderEmulator, Turn

            def ask(emu):
                body = {"model": "m", "messages": []}
                return httpx.post(emu.url + "/v1/chat/completions", json=body, timeout=5)

            def buggy(request):
                raise ZeroDivisionError("scripted bug")

            def test_fixture(provider_emulator):
                provider_emulator.set_script(buggy)
                assert ask(provider_emulator).status_code == 418

            def test_swallowed():
                with pytest.raises(AssertionError), ProviderEmulator(buggy) as emu:
                    assert ask(emu).status_code == 200

            def test_never_closed():
                assert ask(ProviderEmulator(buggy).start()).status_code == 418

            def test_fine(provider_emulator):
                provider_emulator.enqueue(Turn.text("ok"))
                assert ask(provider_emulator).status_code == 200
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert "4 passed, 3 errors" in result.stdout, result.stdout
    for name in ("test_fixture", "test_swallowed", "test_never_closed"):
        assert f"ERROR at teardown of {name}" in result.stdout
    assert result.stdout.count("ZeroDivisionError('scripted bug')") >= 3
    assert "test_fine" not in result.stdout.split("short test summary")[-1]
