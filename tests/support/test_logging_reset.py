"""A `toolkit -vv` run in-process by one test leaves the next test's logging as it was
before: the root logger's level and handlers, and the HTTP libraries' levels."""

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


@pytest.mark.e2e  # starts pytest
def test_the_next_test_finds_logging_as_it_was(tmp_path):
    run = run_sample(tmp_path, SAMPLE, plugins=("tests.support.logging_reset",))
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.e2e
def test_without_it_the_next_test_inherits_the_clis_logging(tmp_path):
    run = run_sample(tmp_path, SAMPLE)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout, run.stdout
