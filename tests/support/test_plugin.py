"""The suite's plugin: `make test-fast` fails a test it selected that starts a process or
opens a socket, and leaves out the tests of the other kinds; with TOOLKIT_TEST_TIMES it
records each test, which .ci/test_times.py sums up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sample_suite import REPOSITORY, run_sample

SAMPLE = """
import socket
import subprocess
import sys

import pytest


def test_binds():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))


def test_spawns():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_stays_in_process():
    assert sorted([2, 1]) == [1, 2]


@pytest.mark.e2e
def test_marked_spawns():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


def run_plugin_sample(
    tmp_path: Path, fast: bool, times: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_sample(
        tmp_path,
        SAMPLE,
        plugins=("tests.support.plugin",),
        env={
            "TOOLKIT_TEST_FAST": "1" if fast else None,
            "TOOLKIT_TEST_TIMES": str(times) if times else None,
        },
    )


@pytest.mark.e2e
def test_a_fast_test_that_binds_or_spawns_fails_in_test_fast_and_the_marked_one_is_left_out(
    tmp_path,
):
    done = run_plugin_sample(tmp_path, fast=True)
    assert "2 failed, 1 passed, 1 deselected" in done.stdout, done.stdout
    assert "FAILED test_sample.py::test_binds" in done.stdout
    assert "FAILED test_sample.py::test_spawns" in done.stdout
    assert "a fast test ran and started a process or opened a socket (socket.bind" in done.stdout
    assert "(subprocess.Popen" in done.stdout


@pytest.mark.e2e
def test_outside_test_fast_every_test_runs(tmp_path):
    done = run_plugin_sample(tmp_path, fast=False)
    assert "4 passed" in done.stdout, done.stdout


@pytest.mark.e2e
def test_the_times_of_each_test_are_recorded_and_summed_up(tmp_path):
    times = tmp_path / "times"
    done = run_plugin_sample(tmp_path, fast=False, times=times)
    assert "4 passed" in done.stdout, done.stdout
    records = [json.loads(line) for line in Path(f"{times}.main.jsonl").read_text().splitlines()]
    tests = {r["test"].split("::")[1]: r for r in records if "test" in r}
    assert set(tests) == {
        "test_binds",
        "test_spawns",
        "test_stays_in_process",
        "test_marked_spawns",
    }
    assert (tests["test_binds"]["sockets"], tests["test_spawns"]["pythons"]) == (1, 1)
    assert all(r["protocol"] >= r["call"] >= 0 and r["started"] > 0 for r in tests.values())
    summed = subprocess.run(
        [sys.executable, str(REPOSITORY / ".ci" / "test_times.py"), str(times)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert summed.startswith("4 tests, ")
    assert "\n  main:     4  " in summed  # the one process's span
