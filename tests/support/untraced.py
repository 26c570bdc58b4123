"""`@pytest.mark.untraced`: a test whose subject is time at scale runs without coverage's
tracing, and nothing else does.

Coverage (`make test`) slows what it traces two to four times; a test of 30,000 headings
or of 500 random sequences runs the same lines as the small tests beside it, many times
over. Pausing coverage around the test (stop, then start again) would not do: starting
again traces only the thread that asks, so every thread already running (the session's
sandbox server, a worker pool) would go untraced for the rest of the worker, and the
total would lose what those threads run later. So an `untraced` test runs its body in a
thread of its own whose tracer is taken off: coverage goes on everywhere else, and the
threads the test starts are traced as usual.

Where the test runs without coverage (`make test COV=`), it runs as any other."""

from __future__ import annotations

import sys
import threading

import pytest

MARKER = "untraced"
_running = threading.local()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: the test's body runs without coverage's tracing, in a thread of its own "
        "(its subject is time at scale; the lines it runs are measured by smaller tests)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if (
        pyfuncitem.get_closest_marker(MARKER) is None
        or sys.gettrace() is None  # not traced: nothing to take off
        or getattr(_running, "item", None) is pyfuncitem  # already in its own thread
    ):
        return None
    failures: list[BaseException] = []

    def body() -> None:
        # Coverage put its tracer on this thread as it started (threading.settrace);
        # taking it off here leaves every other thread's as it is.
        sys.settrace(None)
        _running.item = pyfuncitem
        try:
            pyfuncitem.ihook.pytest_pyfunc_call(pyfuncitem=pyfuncitem)
        except BaseException as exc:  # the test's outcome, raised again below
            failures.append(exc)

    thread = threading.Thread(target=body, name=f"untraced {pyfuncitem.name}")
    thread.start()
    thread.join()
    if failures:
        raise failures[0]
    return True
