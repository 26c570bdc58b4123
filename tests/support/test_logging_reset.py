"""A `toolkit -vv` run in-process by one test leaves the next test's logging as it was
before: the root logger's level and handlers, and the HTTP libraries' levels; and nothing
logged after the call (a server thread's record of a request it answered) reaches the
run's own output."""

from __future__ import annotations

import pytest

from tests.support.sample_suite import run_sample

SAMPLE = """
import logging

from click.testing import CliRunner

from toolkit.cli import main


def test_1_runs_the_cli_verbose(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["-vv", "config"]).exit_code == 0
    assert logging.getLogger().level == logging.DEBUG  # what the CLI sets up


def test_2_finds_logging_as_it_was():
    root = logging.getLogger()
    assert root.level == logging.WARNING
    assert [type(h).__module__ for h in root.handlers if "toolkit" in type(h).__module__] == []
    assert logging.getLogger("httpx").level == logging.NOTSET
"""


# Between the call and its report pytest captures nothing: what is logged there stands in
# for a server thread's record of a request, written just after its answer.
LATE = "a line logged after the call"
CONFTEST = f"""
import logging


def pytest_runtest_logreport(report):
    if report.when == "call" and report.nodeid.endswith("test_1_runs_the_cli_verbose"):
        logging.getLogger("toolkit_sandbox.app").info("{LATE}")
"""


def run_with_late_line(tmp_path, *plugins):
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return run_sample(tmp_path, SAMPLE, plugins=plugins)


@pytest.mark.e2e  # starts pytest
def test_the_next_test_finds_logging_as_it_was(tmp_path):
    run = run_with_late_line(tmp_path, "tests.support.logging_reset")
    assert run.returncode == 0, run.stdout + run.stderr
    assert LATE not in run.stdout + run.stderr


@pytest.mark.e2e
def test_without_it_the_next_test_inherits_the_clis_logging(tmp_path):
    run = run_with_late_line(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout, run.stdout
    assert LATE in run.stdout + run.stderr
