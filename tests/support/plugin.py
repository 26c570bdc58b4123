"""The suite's own pytest plugin (loaded by tests/conftest.py): each test's kind, given
from what it uses, `make test-fast`'s selection and its guard, and the suite's timings.

Kinds (markers, given automatically; a test may also be marked by hand):
- `browser`: the tests of tests/browser/ (Chromium);
- `server`: the test uses a fixture that starts a server or a process (SERVER_FIXTURES,
  or any fixture built on one: `env`, `api`, `archive`... use `sandbox`);
- `e2e`: the test starts a process or opens a connection itself (marked by hand, at the
  test or the module: `pytestmark = pytest.mark.e2e`);
- `socket` (by hand): the sandbox clients of its fixtures use loopback HTTP.
A test of none of these is `fast`: it runs in this process, without a socket.

`make test-fast` (TOOLKIT_TEST_FAST=1) runs only the fast tests, and fails any of them
that starts a process or opens a socket all the same (an audit hook,
`sys.addaudithook`): a test put in the wrong kind is found the first time it runs, so
the selection cannot go stale. `make test` runs every test; with TOOLKIT_TEST_TIMES=<file>
each worker writes one JSON line per test (its phases' seconds, its processor seconds,
kind, processes and connections it started) and per fixture set-up, which .ci/test_times.py sums up."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

# The fixtures that start a server (a sandbox, a stand-in API) or a process; a fixture
# that uses one of them starts it too. A new one goes here: `make test-fast` fails the
# first fast test that uses a fixture missing from this set.
SERVER_FIXTURES = frozenset(
    {
        "sandbox",  # tests/conftest.py, and so `env`, `api`, `archive`, `licensing`...
        "_hostile_server",  # tests/conftest.py (`hostile`)
        "demo_run",  # tests/conftest.py: `toolkit demo`, which starts its sandbox
        "make_sandbox",  # tests/sandbox/conftest.py
        "make_api",  # tests/sandbox/conftest.py
        "conformance_sandbox",  # tests/sandbox/test_conformance.py
        "own_sandbox",  # tests/sync/test_identity_property.py
        "preview",  # tests/watch/test_preview.py: one preview server for the module
        "browser",  # tests/browser/conftest.py
        "server",  # tests/mcp/conftest.py (`toolkit mcp --transport http`), tests/shared/test_serving.py
        "shared_server",  # tests/mcp/conftest.py: one `server` for a module's tests
    }
)
SLOW_KINDS = ("browser", "server", "e2e", "socket")
MARKERS = {
    "browser": "the test drives Chromium (every test of tests/browser/; given automatically)",
    "server": "the test uses a fixture that starts a server or a process (given automatically from SERVER_FIXTURES in tests/support/plugin.py)",
    "e2e": "the test starts a process (`python -m toolkit`, a signal) or opens a connection itself: an end-to-end test",
}
# What a fast test may not do: start a process, open or accept a connection.
PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.posix_spawn", "os.fork", "os.system", "os.exec"}
)
SOCKET_EVENTS = frozenset({"socket.connect", "socket.bind"})
WATCHED = PROCESS_EVENTS | SOCKET_EVENTS

BROWSER_FOLDER = Path(__file__).resolve().parents[1] / "browser"


class _Watch:
    """What the running test has started: processes and connections (an audit hook,
    installed once per process in `make test-fast` and when timings are asked for; it
    cannot be removed, so it only counts while on)."""

    def __init__(self) -> None:
        self.on = False
        self.seen: Counter[str] = Counter()
        self.first: dict[str, str] = {}

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in WATCHED or not self.on:
            return
        self.seen[event] += 1
        if event == "subprocess.Popen" and _is_python(args):
            self.seen["python"] += 1
        if event not in self.first:
            self.first[event] = repr(args[:2])[:200]

    def start(self) -> None:
        self.seen.clear()
        self.first.clear()
        self.on = True

    def stop(self) -> Counter[str]:
        self.on = False
        return Counter(self.seen)


WATCH = _Watch()


def _is_python(args: tuple[Any, ...]) -> bool:
    """Whether a `subprocess.Popen` audit event starts this Python (`python -m toolkit`,
    a helper script): the processes an in-process call could often replace."""
    argv = args[1] if len(args) > 1 else None
    first = argv[0] if isinstance(argv, list | tuple) and argv else argv
    return str(first) == sys.executable


def _processor_seconds() -> float:
    """Processor time of this process (its threads: in-process servers) and of the
    children it has waited for (`python -m toolkit`, git, Chromium once closed)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def kinds(item: pytest.Item) -> list[str]:
    return [kind for kind in SLOW_KINDS if item.get_closest_marker(kind)]


def fast_mode() -> bool:
    return os.environ.get("TOOLKIT_TEST_FAST") == "1"


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    # Only when asked: a hook is called on every audit event of the process.
    if fast_mode() or _times_file() is not None:
        sys.addaudithook(WATCH)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROWSER_FOLDER in Path(str(item.path)).parents:
            item.add_marker("browser")
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker("server")
    if fast_mode():
        kept = [item for item in items if not kinds(item)]
        dropped = [item for item in items if kinds(item)]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# The timings: one JSON line per test and per fixture set-up, in a file per worker.
_records: list[dict[str, Any]] = []
_STARTED = time.perf_counter()
_phases: dict[str, dict[str, float]] = {}


def _times_file() -> Path | None:
    target = os.environ.get("TOOLKIT_TEST_TIMES")
    if not target:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(f"{target}.{worker}.jsonl")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest):
    started = time.perf_counter()
    yield
    if _times_file() is not None:
        _records.append(
            {
                "fixture": fixturedef.argname,
                "scope": fixturedef.scope,
                "seconds": time.perf_counter() - started,
            }
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    WATCH.start()
    processor = _processor_seconds()
    started = time.perf_counter()
    yield
    ended = time.perf_counter()
    seen = WATCH.stop()
    if _times_file() is None:
        return
    processor = _processor_seconds() - processor
    phases = _phases.pop(item.nodeid, {})
    _records.append(
        {
            "test": item.nodeid,
            "file": item.nodeid.split("::")[0],
            "kinds": kinds(item),
            "hypothesis": bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)),
            "processes": sum(seen[e] for e in PROCESS_EVENTS),
            "sockets": sum(seen[e] for e in SOCKET_EVENTS),
            "pythons": seen["python"],
            "processor": processor,
            # Since the worker's process started, and the whole protocol (the phases,
            # the reports, the hooks): what the worker spent between tests shows.
            "started": started - _STARTED,
            "protocol": ended - started,
            **phases,
        }
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    result = yield
    _refuse_in_fast_mode(item, "ran")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    result = yield
    _refuse_in_fast_mode(item, "set up its fixtures")
    return result


def _refuse_in_fast_mode(item: pytest.Item, when: str) -> None:
    if not fast_mode() or not WATCH.seen:
        return
    what = ", ".join(f"{event} {args}" for event, args in WATCH.first.items())
    pytest.fail(
        f"a fast test {when} and started a process or opened a socket ({what}): mark it "
        "`e2e`, or add the fixture that does it to SERVER_FIXTURES in tests/support/plugin.py "
        "(CONTRIBUTING.md, where a new test goes)",
        pytrace=False,
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _times_file() is not None:
        _phases.setdefault(report.nodeid, {})[report.when] = report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = _times_file()
    if target is None or not _records:
        return
    with target.open("a", encoding="utf-8") as out:
        for record in _records:
            out.write(json.dumps(record) + "\n")
    _records.clear()
