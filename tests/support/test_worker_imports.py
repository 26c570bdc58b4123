"""Each xdist worker imports the test modules from a place of its own in the list
(tests/support/worker_imports.py); the tests and their order stay pytest's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sample_suite import run_sample
from tests.support.worker_imports import module_name, rotated

# Each module of the sample package notes, as it is imported, the worker importing it.
MODULE = """
import os
from pathlib import Path

with open(Path(__file__).parents[1] / "imports.txt", "a", encoding="utf-8") as log:
    log.write(f"{os.environ['PYTEST_XDIST_WORKER']} {__name__}\\n")


def test_NAME():
    assert __name__.endswith("NAME")
"""


def imports(tmp_path: Path, *plugins: str) -> dict[str, list[str]]:
    """Run four modules of a package (and one skipped as it is imported) on two workers:
    the modules each worker imported, in order."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in "abcd":
        (package / f"test_{name}.py").write_text(MODULE.replace("NAME", name))
    (package / "test_skipped.py").write_text(
        'import pytest\n\npytest.importorskip("a_module_nowhere")\n'
    )
    # A conftest beside the package: pytest puts its folder on sys.path, as the suite's
    # `pythonpath` does.
    (tmp_path / "conftest.py").write_text("")
    run = run_sample(tmp_path, "", "-n", "2", "pkg", plugins=plugins)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed, 1 skipped" in run.stdout
    order: dict[str, list[str]] = {}
    for line in (tmp_path / "imports.txt").read_text().splitlines():
        worker, name = line.split()
        order.setdefault(worker, []).append(name.removeprefix("pkg.test_"))
    return order


@pytest.mark.e2e  # starts pytest with two workers
def test_each_worker_starts_at_its_own_place_and_every_test_runs(tmp_path):
    # Six test files, the skipped one and the sample's own (empty) last: the second
    # worker starts at the fourth.
    assert imports(tmp_path, "tests.support.worker_imports") == {
        "gw0": ["a", "b", "c", "d"],
        "gw1": ["d", "a", "b", "c"],
    }


@pytest.mark.e2e
def test_without_it_every_worker_imports_in_pytests_order(tmp_path):
    assert imports(tmp_path) == {"gw0": ["a", "b", "c", "d"], "gw1": ["a", "b", "c", "d"]}


def test_the_start_is_the_workers_share_of_the_list():
    items = [Path(str(n)) for n in range(8)]
    assert rotated(items, "gw0", "4") == items
    assert rotated(items, "gw3", "4") == items[6:] + items[:6]
    assert rotated(items, "custom", "4") == items  # a worker id xdist was given otherwise


def test_a_module_is_named_by_its_packages_when_their_parent_is_on_the_path(tmp_path, monkeypatch):
    (tmp_path / "tests" / "sync").mkdir(parents=True)
    for folder in (tmp_path / "tests", tmp_path / "tests" / "sync"):
        (folder / "__init__.py").write_text("")
    test = tmp_path / "tests" / "sync" / "test_plan.py"
    assert module_name(test) is None  # its root is not on sys.path
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_name(test) == "tests.sync.test_plan"
    assert module_name(tmp_path / "test_alone.py") is None  # not in a package
