"""`pytest --coverage`: coverage of `[tool.coverage.run] source`, traced only where the
tests run.

On Python 3.11 coverage's tracer slows every line a traced thread runs, measured or not,
two to four times: pytest's own collection and assertion rewriting, hypothesis, the
libraries. So, in each process that runs tests (each xdist worker, or the one process):

- the measured packages are imported first, every module of them, under the tracer: their
  module-level lines (imports, `def`s, constants) are measured once, here, whichever test
  imports them later;
- the tracer is off while pytest loads the conftests and collects the tests;
- it is on from the first test to the last, and the data is saved then. Starting it
  again traces the thread that asks and every thread started later, which is every
  thread of the tests: none runs before the first test (the session's sandbox server is
  started by one).

The xdist controller, which only hands out tests and prints their reports, is never
traced. At the end of the session the process that started it combines the data files
into `.coverage`, for `coverage report` (`make test`). Data left by an earlier run is
erased at the start.

`@pytest.mark.untraced` (tests/support/untraced.py) takes the tracer off one test's body."""

from __future__ import annotations

import importlib
import os
import pkgutil

import coverage
import pytest

PLUGIN = "coverage-run"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("coverage").addoption(
        "--coverage",
        action="store_true",
        help="measure coverage of [tool.coverage.run] source, traced only while tests run; "
        "the data combined into .coverage (then: python -m coverage report)",
    )


def runs_tests(config: pytest.Config) -> bool:
    """Whether this process runs tests: an xdist worker, or a run without workers."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return True
    return not getattr(config.known_args_namespace, "numprocesses", None)


def import_every_module(names: list[str]) -> None:
    """Each of `names` and, for a package, every module in it. A module whose own import
    fails (an extra not installed) is left to the tests that need it."""
    for name in names:
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        for found in pkgutil.walk_packages(
            getattr(package, "__path__", []), f"{name}.", onerror=lambda _: None
        ):
            try:
                importlib.import_module(found.name)
            except ImportError:
                continue


class Measure:
    """The coverage of one process that runs tests."""

    def __init__(self) -> None:
        self.coverage = coverage.Coverage(data_suffix=True)
        self.coverage.start()
        try:
            source = self.coverage.get_option("run:source")
            import_every_module(source if isinstance(source, list) else [])
        finally:
            self.coverage.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> object:
        self.coverage.start()
        try:
            return (yield)
        finally:
            self.coverage.stop()
            self.coverage.save()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    if not early_config.known_args_namespace.coverage:
        return
    if "PYTEST_XDIST_WORKER" not in os.environ:
        data = coverage.Coverage().get_option("run:data_file")
        coverage.CoverageData(basename=str(data)).erase(parallel=True)
    if runs_tests(early_config):
        early_config.pluginmanager.register(Measure(), PLUGIN)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """In the process the run started in, after every worker saved its data."""
    if session.config.option.coverage and "PYTEST_XDIST_WORKER" not in os.environ:
        combined = coverage.Coverage()
        try:
            combined.combine()
        except coverage.exceptions.NoDataError:  # no test ran: nothing was measured
            return
        combined.save()
