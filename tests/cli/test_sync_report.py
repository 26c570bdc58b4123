"""A team's publish lines: each writer's name, then their posts' lines, even when an
account's writes finish on several threads at once (`ConsoleReporter.done`)."""

from __future__ import annotations

import io
import re
import threading

from rich.console import Console

from toolkit.cli.sync_report import ConsoleReporter
from toolkit.sync.engine import Outcome
from toolkit.sync.plan import Action, PostPlan


class HeadingThenYield(Console):
    """A console that, while printing a writer's name, lets another thread print first
    if it can: it waits until that thread has printed its line or is held at the lock."""

    def __init__(self, buffer: io.StringIO) -> None:
        super().__init__(file=buffer, force_terminal=False, width=200)
        self.other_arrived = threading.Event()  # printed, or waiting for the lock
        self.in_heading = threading.Event()

    def print(self, *objects, **kwargs) -> None:
        text = str(objects[0]) if objects else ""
        if text == "[bold]jane[/]":
            self.in_heading.set()
            assert self.other_arrived.wait(timeout=5)
        super().print(*objects, **kwargs)
        if "jane-2" in text:
            self.other_arrived.set()


class SaysWhenHeld:
    """The reporter's lock, setting `arrived` when a thread comes to it while it is held."""

    def __init__(self, arrived: threading.Event) -> None:
        self.lock = threading.Lock()
        self.arrived = arrived

    def __enter__(self) -> None:
        if not self.lock.acquire(blocking=False):
            self.arrived.set()
            self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def outcome(key: str) -> Outcome:
    plan = PostPlan(key, Action.CREATE, "new post")
    return Outcome(plan, True, "created article 1", 1, "https://dev.example/a", writer="jane")


def test_a_writers_name_comes_before_each_of_their_lines_across_threads():
    buffer = io.StringIO()
    console = HeadingThenYield(buffer)
    reporter = ConsoleReporter(console=console, reading=False)
    reporter._printing = SaysWhenHeld(console.other_arrived)  # type: ignore[assignment]
    first = threading.Thread(target=reporter.done, args=(outcome("posts/jane/jane-1.md"),))
    first.start()
    assert console.in_heading.wait(timeout=5)
    second = threading.Thread(target=reporter.done, args=(outcome("posts/jane/jane-2.md"),))
    second.start()
    first.join(timeout=5)
    second.join(timeout=5)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "jane", lines
    assert [re.findall(r"posts/jane/jane-\d\.md", line)[0] for line in lines[1:]] == [
        "posts/jane/jane-1.md",
        "posts/jane/jane-2.md",
    ], lines
