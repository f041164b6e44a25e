"""`configure_logging` (`wink.core.telemetry.log`): one call to watch wink's error flow."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from wink import configure_logging


@pytest.fixture(autouse=True)
def wink_logger() -> Iterator[logging.Logger]:
    """The `wink` logger, put back as it was after each test."""
    logger = logging.getLogger("wink")
    level, handlers = logger.level, list(logger.handlers)
    yield logger
    logger.setLevel(level)
    logger.handlers[:] = handlers


def test_wink_logs_go_to_the_stream_with_their_level_and_logger() -> None:
    stream = io.StringIO()
    configure_logging(stream=stream)
    logging.getLogger("wink.tools").warning("tool %s failed", "weather")
    logging.getLogger("wink.tools").debug("not at INFO")
    logging.getLogger("elsewhere").error("not wink's")
    [line] = stream.getvalue().splitlines()
    assert line.endswith(" WARNING wink.tools: tool weather failed")


@pytest.mark.parametrize(("level", "shown"), [("debug", 2), ("Error", 0), (logging.INFO, 1)])
def test_the_level_is_a_name_in_any_case_or_a_number(level: int | str, shown: int) -> None:
    stream = io.StringIO()
    configure_logging(level, stream=stream)
    logging.getLogger("wink.executor").info("info")
    logging.getLogger("wink.executor").debug("debug")
    assert len(stream.getvalue().splitlines()) == shown


def test_calling_it_again_replaces_its_handler_and_leaves_others(
    wink_logger: logging.Logger,
) -> None:
    mine = logging.StreamHandler(io.StringIO())
    wink_logger.addHandler(mine)
    first, second = io.StringIO(), io.StringIO()
    configure_logging(stream=first)
    configure_logging(stream=second)
    logging.getLogger("wink").warning("once")
    assert first.getvalue() == ""
    assert second.getvalue().count("once") == 1
    assert mine in wink_logger.handlers


def test_the_default_stream_is_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    logging.getLogger("wink.session").error("subscriber failed")
    assert "ERROR wink.session: subscriber failed" in capsys.readouterr().err
