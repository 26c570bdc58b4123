"""The suite's plugin: `make test-fast` fails a test it selected that starts a process or
opens a socket, and leaves out the tests of the other kinds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.sample_suite import run_sample

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


def run_plugin_sample(tmp_path: Path, fast: bool) -> subprocess.CompletedProcess[str]:
    return run_sample(
        tmp_path,
        SAMPLE,
        plugins=("tests.support.plugin",),
        env={"TOOLKIT_TEST_FAST": "1" if fast else None},
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
