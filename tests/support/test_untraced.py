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
