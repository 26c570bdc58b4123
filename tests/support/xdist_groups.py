"""`--dist loadgroup` whatever pytest's version: the tests of one `xdist_group` run in one
worker, one after the other.

pytest-xdist sends a test's group from the worker that collected it to the scheduler by
adding `@group` to the test's id. From pytest 9.2 on, a test's id is no longer a string
that can be changed that way, so the group never arrives and every test is scheduled as if
it had none (pytest-xdist #1386): nothing fails, the groups are simply gone.

Here the groups travel beside the ids instead. Every worker writes the groups it collected
(`{test id: group}`) into a folder the run creates and names to each worker in its
`workerinput`; the scheduler reads them when it first places a test, which is after every
worker has sent its collection. An id that does carry `@group` (pytest before 9.2) is
grouped as pytest-xdist groups it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

KEY = "toolkit_test_groups"  # the folder's path, in each worker's `workerinput`
FOLDER = pytest.StashKey[Path]()  # the run's folder, in the controller's `config.stash`

# The modules whose tests mostly wait (a deadline to pass, a debounce, a file event, a
# served page's next request) rather than compute: one after another in one worker, where
# their waits overlap with the other workers' work instead of with each other's, which
# left both cores idle (CONTRIBUTING.md, "Where the time goes", round 11).
WAITING = pytest.mark.xdist_group("waiting")


def groups_of(items: list[pytest.Item]) -> dict[str, str]:
    """`{test id: group}` of the tests marked `xdist_group`; a test in several groups is in
    the one of their names joined (sorted, with `_`), as pytest-xdist joins them."""
    found = {}
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        if names:
            found[item.nodeid] = "_".join(sorted(names))
    return found


def read_groups(folder: Path) -> dict[str, str]:
    """The groups every worker wrote into `folder` (the same, from each worker)."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")):
        found.update(json.loads(path.read_text(encoding="utf-8")))
    return found


def _scheduler(config: pytest.Config, log: Any, folder: Path) -> Any:
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
        """pytest-xdist's group scheduling, with the groups read from `folder`."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:  # the hook LoadGroupScheduling overrides
            if self.groups is None:  # first called once every collection is in
                self.groups = read_groups(folder)
            group = self.groups.get(nodeid)
            return group if group is not None else super()._split_scope(nodeid)

    return GroupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """In the controller of a `-n N --dist loadgroup` run: the folder of the groups."""
    if hasattr(config, "workerinput") or config.pluginmanager.get_plugin("xdist") is None:
        return
    if config.getoption("dist", None) == "loadgroup" and config.getoption("numprocesses", None):
        config.stash[FOLDER] = Path(tempfile.mkdtemp(prefix="toolkit-test-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if FOLDER in config.stash:
        shutil.rmtree(config.stash[FOLDER], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    if FOLDER in node.config.stash:
        node.workerinput[KEY] = str(node.config.stash[FOLDER])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if FOLDER not in config.stash:
        return None
    return _scheduler(config, log, config.stash[FOLDER])


@pytest.hookimpl(trylast=True)  # after the hooks that mark groups (tests/browser/conftest.py)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or KEY not in workerinput:
        return
    folder = Path(workerinput[KEY])
    temporary = folder / f"{workerinput['workerid']}.json.part"
    temporary.write_text(json.dumps(groups_of(items)), encoding="utf-8")
    os.replace(temporary, folder / f"{workerinput['workerid']}.json")
