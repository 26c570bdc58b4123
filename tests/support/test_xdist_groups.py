"""The tests of one `xdist_group` run in one worker, whatever pytest's version
(tests/support/xdist_groups.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sample_suite import run_sample
from tests.support.xdist_groups import groups_of, read_groups

# Each test notes the worker that ran it, in a file named after the test.
SAMPLE = """
import os
from pathlib import Path

import pytest


def note(name):
    Path(name).write_text(os.environ["PYTEST_XDIST_WORKER"], encoding="utf-8")


@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    note(f"grouped-{n}.ran")


@pytest.mark.parametrize("n", range(6))
def test_free(n):
    note(f"free-{n}.ran")
"""


def workers(tmp_path: Path, *plugins: str) -> set[str]:
    """Run the sample on two workers, grouped: the workers its grouped tests ran in. The
    run's temporary files are left in tmp_path/temporary."""
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    run = run_sample(
        tmp_path,
        SAMPLE,
        "-n",
        "2",
        "--dist",
        "loadgroup",
        plugins=plugins,
        env={"TMPDIR": str(temporary)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12 passed" in run.stdout, run.stdout
    return {path.read_text(encoding="utf-8") for path in tmp_path.glob("grouped-*.ran")}


@pytest.mark.e2e  # starts pytest with two workers
def test_a_groups_tests_run_in_one_worker(tmp_path):
    assert len(workers(tmp_path, "tests.support.xdist_groups")) == 1
    assert list((tmp_path / "temporary").glob("toolkit-test-groups-*")) == []  # removed


@pytest.mark.e2e
@pytest.mark.skipif(
    pytest.version_tuple < (9, 2), reason="before pytest 9.2, pytest-xdist groups on its own"
)
def test_without_it_pytest_9_2_spreads_a_group_over_the_workers(tmp_path):
    """pytest-xdist #1386: each test is a unit of its own, and the first units go out to
    both workers at the start. When this fails, pytest-xdist groups tests on its own
    again, and xdist_groups.py can go."""
    assert workers(tmp_path) == {"gw0", "gw1"}


class Marked:
    """A collected test as `groups_of` reads it: its id and its `xdist_group` marks."""

    def __init__(self, nodeid: str, *groups: pytest.MarkDecorator) -> None:
        self.nodeid = nodeid
        self.marks = [group.mark for group in groups]

    def iter_markers(self, name: str) -> list[pytest.Mark]:
        return [mark for mark in self.marks if mark.name == name]


def test_a_test_in_two_groups_is_in_their_names_joined():
    items = [
        Marked("t.py::both", pytest.mark.xdist_group("b"), pytest.mark.xdist_group(name="a")),
        Marked("t.py::unnamed", pytest.mark.xdist_group),
        Marked("t.py::none"),
    ]
    assert groups_of(items) == {"t.py::both": "a_b", "t.py::unnamed": "default"}  # type: ignore[arg-type]


def test_every_workers_groups_are_read(tmp_path):
    (tmp_path / "gw0.json").write_text('{"t.py::a": "g"}')
    (tmp_path / "gw1.json").write_text('{"t.py::a": "g", "t.py::b": "h"}')
    (tmp_path / "gw2.json.part").write_text("{")  # being written: not read
    assert read_groups(tmp_path) == {"t.py::a": "g", "t.py::b": "h"}
