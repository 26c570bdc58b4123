"""`@pytest.mark.untraced` runs a test without coverage's tracing and leaves every other
thread traced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sample_suite import run_measured

# A package whose functions a long-lived thread (as the session's sandbox server is) runs
# for the tests, a marked test between two others, and a check that the marked test ran.
WORK = """
def before():
    return "before"


def during():
    return "during"


def after():
    return "after"
"""

SAMPLE = """
import queue
import threading

import pytest

import work

jobs, answers = queue.Queue(), queue.Queue()


def serve():
    while True:
        job = jobs.get()
        if job is None:
            return
        answers.put(job())


server = threading.Thread(target=serve, daemon=True)


def ask(job):
    jobs.put(job)
    return answers.get(timeout=30)


def test_1_starts_the_server():
    server.start()
    assert ask(work.before) == "before"


@pytest.mark.MARK
def test_2_marked():
    assert work.during() == "during"


def test_3_asks_the_server_again():
    assert ask(work.after) == "after"
"""


def covered_lines(tmp_path: Path, mark: str) -> dict[str, int]:
    """Run the sample under coverage with the test between the two marked `mark`: which
    line of `work.py` ran each function's body, counted once if measured, 0 if not."""
    executed = run_measured(
        tmp_path, SAMPLE.replace("MARK", mark), WORK, plugins=("tests.support.untraced",)
    )
    return {
        name: int(line in executed) for name, line in (("before", 3), ("during", 7), ("after", 11))
    }


@pytest.mark.e2e  # starts pytest under coverage
def test_an_untraced_test_leaves_the_other_threads_traced(tmp_path):
    assert covered_lines(tmp_path, "untraced") == {"before": 1, "during": 0, "after": 1}


@pytest.mark.e2e
def test_marked_otherwise_the_same_test_is_measured(tmp_path):
    """The sample's own check: marked otherwise, its three functions are measured."""
    assert covered_lines(tmp_path, "skipif(False, reason='never')") == {
        "before": 1,
        "during": 1,
        "after": 1,
    }


# A property test whose strategy calls `drawn` and whose examples call `during`, and a
# thread an example starts, which calls `after`.
PROPERTY = """
import threading

from hypothesis import given, settings, strategies as st

import work


@settings(max_examples=5, database=None)
@given(st.integers().map(lambda n: work.drawn(n)))
def test_property(n):
    assert work.during() == "during"
    thread = threading.Thread(target=work.after)
    thread.start()
    thread.join()
"""

PROPERTY_WORK = f"""{WORK}

def drawn(n):
    return n
"""


@pytest.mark.e2e
def test_a_property_tests_examples_are_measured_and_hypothesiss_drawing_is_not(tmp_path):
    executed = run_measured(tmp_path, PROPERTY, PROPERTY_WORK, plugins=("tests.support.untraced",))
    # during() runs in each example, after() in a thread an example starts, drawn() while
    # hypothesis draws the example.
    assert {7, 11} <= executed
    assert 15 not in executed


@pytest.mark.e2e
def test_without_the_plugin_hypothesiss_drawing_is_measured_too(tmp_path):
    """The sample's own check: without the rule, what the strategy calls is measured."""
    assert {7, 11, 15} <= run_measured(tmp_path, PROPERTY, PROPERTY_WORK)
