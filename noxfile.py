"""Sessions: tests, lint, typecheck, docs, bench.

Plain `python3 -m nox` (README's test command, what .ci/run runs) runs all but bench.
"""

from __future__ import annotations

import os
import shutil

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "docs"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True  # a skipped session must not pass CI

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    session.install("-e", ".[all,dev]")
    _install_redis_server(session)
    # everything, the slow too, on every core (`-n auto` in pyproject's addopts)
    session.run("pytest", "-m", "slow or not slow", *session.posargs)


def _install_redis_server(session: nox.Session) -> None:
    """The fleet tests start their own redis-server: install it where apt-get can."""
    if shutil.which("redis-server") or not shutil.which("apt-get"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    session.run(*sudo, "apt-get", "update", "-qq", external=True)
    session.run(*sudo, "apt-get", "install", "-y", "-qq", "redis-server", external=True)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", "src", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "noxfile.py")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[all,dev]")
    session.run("pyright", "src", "tests/test_output_types.py")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The site, built strictly from nothing: a broken link or anchor, a missing snippet
    or an API entry that names nothing fails it (docs/contributing.md)."""
    session.install("-e", ".[docs]")
    session.run("zensical", "build", "--strict", "--clean")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    session.install("-e", ".[all,dev,bench]")
    session.run("python", "-m", "benchmarks", *session.posargs)
