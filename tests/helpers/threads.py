"""Running one piece of work on several threads at once."""

from __future__ import annotations

import threading
from collections.abc import Callable


def on_threads(
    work: Callable[[], object], count: int = 4, timeout: float = 30.0
) -> list[BaseException]:
    """Run `work` on `count` threads started together, wait for them, and return what
    they raised (an assertion in a thread would otherwise go unseen)."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # pragma: no cover - returned to the test
            failures.append(error)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return failures
