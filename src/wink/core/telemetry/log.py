"""`configure_logging`: one call to watch wink's error flow."""

from __future__ import annotations

import logging
import sys

from ..foundation.errors import ConfigurationError, InvalidArgumentError

__all__ = ["configure_logging"]

_HANDLER_NAME = "wink"


def configure_logging(level: int | str = "INFO", *, stream: object | None = None) -> None:
    """Send wink's logs (`wink.*` loggers) to `stream` (stderr by default) at `level`.

    At DEBUG or INFO every tool failure is shown with its prompt, tool, call id and, for
    a raising handler, the original traceback. Calling it again replaces the handler.
    """
    checked = _level(level)
    if stream is not None and not callable(getattr(stream, "write", None)):
        raise InvalidArgumentError(
            f"configure_logging(stream=...) takes a text stream (with write), got {stream!r}",
            argument="stream",
        )
    logger = logging.getLogger("wink")
    logger.setLevel(checked)
    for handler in list(logger.handlers):
        if handler.get_name() == _HANDLER_NAME:
            logger.removeHandler(handler)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)  # type: ignore[arg-type]
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)


def _level(level: object) -> int | str:
    """A logging level as `logging` takes it: a name ("info", any case) or an int."""
    if isinstance(level, str) and level.strip().upper() in logging.getLevelNamesMapping():
        return level.strip().upper()
    if isinstance(level, int) and not isinstance(level, bool) and level >= 0:
        return level
    names = ", ".join(("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    raise ConfigurationError(
        f"configure_logging(level=...) takes a level name ({names}) or an int >= 0, got {level!r}",
        option="level",
    )
