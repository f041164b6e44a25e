"""`configure_logging`: one call to watch wink's error flow."""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging"]

_HANDLER_NAME = "wink"


def configure_logging(level: int | str = "INFO", *, stream: object | None = None) -> None:
    """Send wink's logs (`wink.*` loggers) to `stream` (stderr by default) at `level`.

    At DEBUG or INFO every tool failure is shown with its prompt, tool, call id and, for
    a raising handler, the original traceback. Calling it again replaces the handler.
    """
    logger = logging.getLogger("wink")
    logger.setLevel(level.upper() if isinstance(level, str) else level)
    for handler in list(logger.handlers):
        if handler.get_name() == _HANDLER_NAME:
            logger.removeHandler(handler)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)  # type: ignore[arg-type]
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
