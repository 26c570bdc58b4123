"""One way to wait in a test: on a condition, polled until a deadline that only bounds a
failure (the suite runs on loaded machines; a fixed sleep is either too short there or
wasted everywhere else)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(
    condition: Callable[[], T | None],
    timeout: float = 20.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """Poll `condition()` every `interval` seconds until it is truthy and return its value;
    fail the test (AssertionError naming `what`) when it is not within `timeout` seconds.
    The condition is asked once more at the deadline, so a slow machine that reaches it
    late still passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value  # not None: truthy
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(interval)


def until_time(moment: float, interval: float = 0.02) -> None:
    """Wait until the monotonic clock reaches `moment`: for a test of something that is
    itself defined by time (a rate-limit window ending), polled, never a fixed sleep."""
    until(lambda: time.monotonic() >= moment, timeout=max(0.0, moment - time.monotonic()) + 5)
