"""Each pytest-xdist worker imports the test modules before it collects them, starting at
a place of its own in the list.

pytest rewrites a test module's assertions the first time a process imports it, and keeps
the result beside the module (`__pycache__/*-pytest-*.pyc`) for the next process. Every
worker collects every test module in the same order, so from a fresh clone every worker
rewrites every module at the same time (about 6 processor-seconds each). Starting a
quarter of the list further on than the worker before it (with four workers), each
finds most of the modules ahead of it rewritten by the one that started there.

The order of the tests is pytest's own: its collection then finds each module imported.
A module pytest imports another way (a folder that is not a package, `--import-mode`
other than `prepend`) is left to it, as is one whose import fails: it fails again as it
is collected, and is reported there."""

from __future__ import annotations

import fnmatch
import importlib
import os
import sys
from pathlib import Path

import pytest


def test_files(config: pytest.Config) -> list[Path]:
    """The files pytest collects tests from, under the run's arguments, sorted."""
    patterns = config.getini("python_files")
    skipped_folders = config.getini("norecursedirs")
    found: set[Path] = set()
    for argument in config.args:
        path = config.invocation_params.dir / argument.split("::", 1)[0]
        if path.is_file():
            found.add(path)
            continue
        for candidate in path.rglob("*.py"):
            folders = candidate.relative_to(path).parts[:-1]
            if any(fnmatch.fnmatch(part, glob) for part in folders for glob in skipped_folders):
                continue
            if any(fnmatch.fnmatch(candidate.name, glob) for glob in patterns):
                found.add(candidate)
    return sorted(found)


def module_name(path: Path) -> str | None:
    """The name pytest imports `path` by (`prepend` mode): its packages' names and its own,
    when the folder above its top package is on `sys.path`; else None."""
    names = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        names.insert(0, folder.name)
        folder = folder.parent
    if len(names) == 1 or str(folder) not in sys.path:
        return None
    return ".".join(names)


def rotated(items: list[Path], worker: str, count: str) -> list[Path]:
    """`items` from worker `gwN`'s own starting place on (the N-th of `count` parts); in
    their order for a worker named otherwise."""
    number = worker.removeprefix("gw")
    if not (number.isdigit() and count.isdigit() and int(count) > 0):
        return items
    start = len(items) * int(number) // int(count)
    return items[start:] + items[:start]


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker or not count or session.config.getoption("importmode") != "prepend":
        return
    for path in rotated(test_files(session.config), worker, count):
        name = module_name(path)
        if name is None or name in sys.modules:
            continue
        try:
            module = importlib.import_module(name)
        except (Exception, pytest.skip.Exception, pytest.fail.Exception):
            continue  # collected, and reported, as it would have been
        if Path(module.__file__ or "").resolve() != path.resolve():
            del sys.modules[name]  # another module of that name: pytest's to find
