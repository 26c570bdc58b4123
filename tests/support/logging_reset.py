"""Each test leaves logging as it found it.

The CLI run in-process sets up logging for its process, as it does for a writer: `-v`
lowers the root logger's level and puts its handler there, `-vv` opens the HTTP
libraries' loggers. Left so, every later test of the worker formatted and printed each
debug line of markdown-it, httpx and the others, which made some of them six times
slower.

Logging is put back at the end of the test's call, inside it, and again at the end of the
test's whole protocol (for what its set-up changed). Between a test's phases pytest
captures nothing: a line that a thread of the test logs after the call (a server's record
of the request it has just answered), with the CLI's handler still in place, would be
printed on the run's own output. tests/support/test_logging_reset.py shows both."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Generator, Iterator

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Put logging back as the test found it."""
    with kept_as_found():
        return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)  # innermost: inside pytest's capture of the call
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Put logging back as the call found it, before its output stops being captured."""
    with kept_as_found():
        return (yield)


@contextlib.contextmanager
def kept_as_found() -> Iterator[None]:
    """The root logger's handlers and level, and every logger's level, put back on the
    way out as they were on the way in (a handler added meanwhile closed)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logger.level for name, logger in loggers()}
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        # setLevel empties every logger's cache: only where a level changed.
        if root.level != level:
            root.setLevel(level)
        for name, logger in loggers():
            if logger.level != levels.get(name, logging.NOTSET):
                logger.setLevel(levels.get(name, logging.NOTSET))


def loggers() -> list[tuple[str, logging.Logger]]:
    return [
        (name, logger)
        for name, logger in list(logging.Logger.manager.loggerDict.items())
        if isinstance(logger, logging.Logger)
    ]
