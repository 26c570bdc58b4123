"""`pytest --coverage` (tests/support/coverage_run.py): what the tests run is measured,
module-level lines included, and what pytest runs while it collects is not."""

from __future__ import annotations

import coverage
import pytest

from tests.support.sample_suite import run_measured

# Line 1 runs as the module is imported; `at_collection` is called by the sample's
# module level (while pytest collects); each test calls one function.
WORK = """LIMIT = 3


def at_collection():
    return "collected"


def first():
    return "first"


def second():
    return "second"


def never():
    return "never"
"""

SAMPLE = """
import work

work.at_collection()


def test_first():
    assert work.first() == "first"


def test_second():
    assert work.second() == "second"
"""

MODULE_LEVEL, AT_COLLECTION, FIRST, SECOND, NEVER = 1, 5, 9, 13, 17


@pytest.mark.e2e  # starts pytest under coverage
def test_the_tests_and_the_module_level_are_measured_and_the_collection_is_not(tmp_path):
    measured = run_measured(tmp_path, SAMPLE, WORK)
    assert {MODULE_LEVEL, FIRST, SECOND} <= measured
    assert AT_COLLECTION not in measured
    assert NEVER not in measured


# Run by the xdist controller alone, as each test's report reaches it: not measured, as
# the controller is never traced.
CONTROLLER_CONFTEST = """
import os

import work


def pytest_runtest_logreport(report):
    if "PYTEST_XDIST_WORKER" not in os.environ:
        work.never()
"""


@pytest.mark.e2e
def test_over_workers_the_data_is_combined_and_an_earlier_runs_is_erased(tmp_path):
    (tmp_path / "conftest.py").write_text(CONTROLLER_CONFTEST, encoding="utf-8")
    # An earlier run's data file, whose one line no test of this run reaches.
    stale = coverage.CoverageData(basename=str(tmp_path / ".coverage"), suffix="earlier")
    stale.add_lines({str((tmp_path / "work.py").resolve()): [NEVER]})
    stale.write()
    measured = run_measured(tmp_path, SAMPLE, WORK, "-n", "1")  # a controller and a worker
    assert {MODULE_LEVEL, FIRST, SECOND} <= measured
    assert NEVER not in measured  # neither the earlier run's nor the controller's
    assert list(tmp_path.glob(".coverage.*")) == []  # combined, none left beside it
