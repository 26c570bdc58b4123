import gc

from tests.support.garbage_collection import pytest_runtest_setup
from toolkit.__main__ import QUICK_COMMAND_THRESHOLDS
from toolkit.cli import PYTHON_GC_THRESHOLDS


def test_the_suite_runs_with_the_thresholds_of_a_command_that_ends():
    assert gc.get_threshold() == QUICK_COMMAND_THRESHOLDS
    assert gc.get_freeze_count() > 0  # the collected suite, frozen out


def test_a_serving_command_run_in_process_leaves_the_next_test_the_suites_thresholds(project):
    try:
        assert project.run("sandbox", "--help").exit_code == 0
        assert gc.get_threshold() == PYTHON_GC_THRESHOLDS  # as for a writer's `toolkit sandbox`
        pytest_runtest_setup(item=None)  # type: ignore[arg-type]  # the next test's set-up
        assert gc.get_threshold() == QUICK_COMMAND_THRESHOLDS
    finally:
        gc.set_threshold(*QUICK_COMMAND_THRESHOLDS)
