"""Python's garbage collector in a process that runs tests, set as `python -m toolkit`
sets it for a command that does its work and ends (`toolkit.__main__`).

Python goes over its young objects after every 700 new ones. A test worker makes millions
(on Python 3.11 coverage's tracer adds a frame object to every call): each collection goes
over the young objects still alive, those it keeps are gone over again in the older
generations, and a full collection goes over everything the worker holds, the collected
suite included. So:

- the thresholds are the console script's (`QUICK_COMMAND_THRESHOLDS`: a collection after
  100,000 new objects rather than 700);
- the collected suite (the modules, the test items), alive until the worker ends, is
  frozen out of the collector once collected (`gc.freeze`);
- a test that runs a serving command in-process (`toolkit watch`, `serve`, `sandbox`,
  `mcp`) gets Python's own thresholds from it, as a writer's process does; the next test
  starts with the suite's again.

The collector's time in the four workers of `make test` (`gc.callbacks`, summed): 8.5
processor-seconds with Python's thresholds, 4.95 with these (CONTRIBUTING.md, "Where the
time goes", round 11)."""

from __future__ import annotations

import gc

import pytest

from toolkit.__main__ import QUICK_COMMAND_THRESHOLDS


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*QUICK_COMMAND_THRESHOLDS)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The suite's thresholds, wherever the test before changed them."""
    if gc.get_threshold() != QUICK_COMMAND_THRESHOLDS:
        gc.set_threshold(*QUICK_COMMAND_THRESHOLDS)
