"""What runs without coverage's tracing: a test marked `@pytest.mark.untraced`, and
hypothesis's own work in a property test. Nothing else.

Coverage (`make test`) slows what it traces two to four times, measured or not: every
call a traced thread makes costs the tracer a look. So:

- an `untraced` test runs its body untraced: its subject is time at scale (30,000
  headings, 500 random sequences), and it runs the same lines as the small tests beside
  it, many times over; or it reads the source (a rule of the imports, of the names) and
  runs none of it;
- a property test (`@given`) runs hypothesis's engine untraced: drawing each example,
  choosing the next, shrinking. That work is the library's, never measured, and on a
  traced thread it costs more than the examples themselves. Each example is traced.

Pausing coverage around a test (stop, then start again) would not do: starting again
traces only the thread that asks, so every thread already running (the session's sandbox
server, a worker pool) would go untraced for the rest of the worker, and the total would
lose what those threads run later. So such a test runs in a thread of its own whose
tracer is taken off: coverage goes on everywhere else, and the threads the test starts are
traced as usual. A property test's example is traced again the way a thread is traced
when it starts: the tracer coverage gives each new thread (`threading.gettrace()`) is put
on this thread for the example's call, and taken off after it.

Where the test runs without coverage (`make test COV=`), it runs as any other."""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import is_hypothesis_test

MARKER = "untraced"
_running = threading.local()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: the test's body runs without coverage's tracing, in a thread of its own "
        "(its subject is time at scale, the lines it runs measured by smaller tests; or it "
        "reads the source and runs none of it)",
    )


@contextlib.contextmanager
def examples_traced(test: Any, tracer: Callable[..., Any]) -> Iterator[None]:
    """While this lasts, each example of the property test `test` (each call of
    hypothesis's `inner_test`) is traced by `tracer`, the tracer of a new thread."""
    handle = test.hypothesis
    inner = handle.inner_test

    @functools.wraps(inner)
    def traced(*args: Any, **kwargs: Any) -> Any:
        before = sys.gettrace()
        sys.settrace(tracer)
        try:
            return inner(*args, **kwargs)
        finally:
            sys.settrace(before)

    handle.inner_test = traced
    try:
        yield
    finally:
        handle.inner_test = inner


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    marked = pyfuncitem.get_closest_marker(MARKER) is not None
    new_threads = threading.gettrace()
    if (
        not (marked or is_hypothesis_test(pyfuncitem.obj))
        or sys.gettrace() is None  # not traced: nothing to take off
        or new_threads is None  # a tracer of this thread alone (a debugger): left alone
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
    with contextlib.nullcontext() if marked else examples_traced(pyfuncitem.obj, new_threads):
        thread.start()
        thread.join()
    if failures:
        raise failures[0]
    return True
