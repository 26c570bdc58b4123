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
    if it can (waiting, bounded, for that thread's line)."""

    def __init__(self, buffer: io.StringIO) -> None:
        super().__init__(file=buffer, force_terminal=False, width=200)
        self.other_printed = threading.Event()
        self.in_heading = threading.Event()

    def print(self, *objects, **kwargs) -> None:
        text = str(objects[0]) if objects else ""
        if text == "[bold]jane[/]":
            self.in_heading.set()
            self.other_printed.wait(timeout=1.0)  # long enough for an unguarded print
        super().print(*objects, **kwargs)
        if "jane-2" in text:
            self.other_printed.set()


def outcome(key: str) -> Outcome:
    plan = PostPlan(key, Action.CREATE, "new post")
    return Outcome(plan, True, "created article 1", 1, "https://dev.example/a", writer="jane")


def test_a_writers_name_comes_before_each_of_their_lines_across_threads():
    buffer = io.StringIO()
    console = HeadingThenYield(buffer)
    reporter = ConsoleReporter(console=console, reading=False)
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
