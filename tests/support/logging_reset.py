"""Each test leaves logging as it found it.

The CLI run in-process sets up logging for its process, as it does for a writer: `-v`
lowers the root logger's level and puts its handler there, `-vv` opens the HTTP
libraries' loggers. Left so, every later test of the worker formatted and printed each
debug line of markdown-it, httpx and the others, which made some of them six times
slower. tests/support/test_logging_reset.py shows it."""

from __future__ import annotations

import logging
from collections.abc import Generator

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Put logging back as the test found it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logger.level for name, logger in loggers()}
    try:
        return (yield)
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
