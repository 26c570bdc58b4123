"""A `toolkit -vv` run in-process by one test leaves the next test's logging as it was
before: the root logger's level and handlers, and the HTTP libraries' levels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

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


def run_sample(tmp_path: Path, *plugins: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *(f"-p{p}" for p in plugins)]
        + ["-p", "no:cacheprovider", "-q", "-n", "0", "test_sample.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.e2e  # starts pytest
def test_the_next_test_finds_logging_as_it_was(tmp_path):
    run = run_sample(tmp_path, "tests.support.logging_reset")
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.e2e
def test_without_it_the_next_test_inherits_the_clis_logging(tmp_path):
    run = run_sample(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout, run.stdout
