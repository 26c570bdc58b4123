"""A pause of a publish counts down on a terminal, in the progress bar beside the count of
posts done; off a terminal it stays one line. Driven by an injected clock: no sleeps."""

from __future__ import annotations

import io
import re

from rich.console import Console

from toolkit.cli.progress import Countdown
from toolkit.cli.sync_report import ConsoleReporter
from toolkit.sync.engine import Outcome
from toolkit.sync.plan import Action, PostPlan

REASON = "rate limit: 10 creates per 30 s"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plans(count: int) -> list[PostPlan]:
    return [
        PostPlan(f"content/post-{i:02}.md", Action.CREATE, "new post", title=f"Post {i}")
        for i in range(count)
    ]


def terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160, color_system=None)
    return console, buffer


def last_frame(buffer: io.StringIO) -> str:
    """The bar as last drawn: the text after the last carriage return or erase."""
    return re.split(r"\r|\x1b\[2K", buffer.getvalue())[-1]


def test_the_pause_counts_down_beside_the_posts_done():
    console, buffer = terminal()
    clock = Clock()
    reporter = ConsoleReporter(console=console, clock=clock, reading=False)
    planned = plans(13)
    reporter.planned(planned)
    assert reporter.progress is not None
    try:
        for plan in planned[:10]:
            reporter.done(Outcome(plan, True, "created article 1", 1, "https://dev.example/a"))
        reporter.waiting(29.9, REASON)
        reporter.progress.refresh()
        assert "10/13" in last_frame(buffer)
        assert f"waiting 30 s: {REASON}" in last_frame(buffer)
        clock.now += 1.0
        reporter.progress.refresh()
        assert f"waiting 29 s: {REASON}" in last_frame(buffer)
        clock.now += 28.5
        reporter.progress.refresh()
        assert "waiting 1 s" in last_frame(buffer)
        clock.now += 0.5  # over: the status is empty again
        reporter.progress.refresh()
        assert "waiting" not in last_frame(buffer) and "10/13" in last_frame(buffer)
    finally:
        reporter.close()
    # The per-post lines were printed above the bar, one each.
    assert buffer.getvalue().count("✓ create") == 10


def test_before_the_bar_the_pause_counts_down_in_the_spinners_line():
    console, _ = terminal()
    clock = Clock()
    reporter = ConsoleReporter(console=console, clock=clock)

    def drawn() -> str:
        """The spinner's line as the live display draws it now."""
        line, screen = terminal()
        assert reporter.reading.renderable is not None
        line.print(reporter.reading.renderable)
        return screen.getvalue()

    with reporter:  # the spinner: reading the account's articles
        assert "reading the account's articles" in drawn()
        reporter.waiting(3.0, "rate limited by the server (429)")
        assert "waiting 3 s: rate limited by the server (429)" in drawn()
        clock.now += 2.5
        assert "waiting 1 s: rate limited by the server (429)" in drawn()


def test_off_a_terminal_a_pause_is_one_line():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=160)
    reporter = ConsoleReporter(console=console, clock=Clock())
    with reporter:
        reporter.planned(plans(3))
        reporter.waiting(29.9, REASON)
        reporter.waiting(29.8, REASON)  # a write beside it, waiting for the same window
    (line,) = buffer.getvalue().splitlines()
    assert re.fullmatch(rf"waiting 29\.9 s, until \d\d:\d\d:\d\d \({REASON}\)", line)


def test_a_countdown_says_whole_seconds_left_and_nothing_once_over():
    clock = Clock()
    countdown = Countdown(2.2, "retry", clock=clock)
    assert countdown.text() == "waiting 3 s: retry"
    clock.now += 1.5
    assert countdown.text() == "waiting 1 s: retry"
    clock.now += 1.0
    assert countdown.text() == "" and countdown.remaining() == 0.0
