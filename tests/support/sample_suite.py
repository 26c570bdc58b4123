"""A sample test module run by pytest in a process of its own, with the suite's plugins
named: for the tests of those plugins (tests/support/test_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import coverage

REPOSITORY = Path(__file__).resolve().parents[2]


def run_sample(
    folder: Path,
    sample: str,
    *options: str,
    plugins: tuple[str, ...] = (),
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pytest -p PLUGIN... OPTIONS test_sample.py` in `folder`, with `sample` as
    test_sample.py, this repository importable and `env` over this process's environment
    (None: the variable unset; the variables of this run's xdist worker and timings left
    out); markers are strict, as in the suite."""
    (folder / "test_sample.py").write_text(sample, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
    # A run of its own: not an xdist worker of this one, nor writing into its timings.
    environ = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PYTEST_XDIST_") and name != "TOOLKIT_TEST_TIMES"
    }
    environ["PYTHONPATH"] = str(REPOSITORY)
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return subprocess.run(
        [sys.executable, "-m", "pytest"]
        + [arg for plugin in plugins for arg in ("-p", plugin)]
        + ["-p", "no:cacheprovider", "-q", "-n", "0", *options, "test_sample.py"],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_measured(
    folder: Path, sample: str, work: str, *options: str, plugins: tuple[str, ...] = ()
) -> set[int]:
    """`run_sample` with `--coverage` (tests/support/coverage_run.py) measuring `work`, a
    module the sample imports (work.py in `folder`): the lines of work.py measured, from
    the `.coverage` the run combined."""
    (folder / "work.py").write_text(work, encoding="utf-8")
    (folder / ".coveragerc").write_text("[run]\nsource = work\nbranch = true\n")
    run = run_sample(
        folder,
        sample,
        "--coverage",
        *options,
        plugins=("tests.support.coverage_run", *plugins),
        # `work` importable from the start, as an installed package is.
        env={"PYTHONPATH": os.pathsep.join((str(REPOSITORY), str(folder)))},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    data = coverage.CoverageData(basename=str(folder / ".coverage"))
    data.read()
    return set(data.lines(str((folder / "work.py").resolve())) or ())
