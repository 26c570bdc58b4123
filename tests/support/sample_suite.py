"""A sample test module run by pytest in a process of its own, with the suite's plugins
named: for the tests of those plugins (tests/support/test_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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
    (None: the variable unset); markers are strict, as in the suite."""
    (folder / "test_sample.py").write_text(sample, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n")
    environ = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
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
