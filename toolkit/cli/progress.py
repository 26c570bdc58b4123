"""Progress while a command waits: a spinner on stderr, erased when the command is done.

Shown only on a terminal and without `--quiet`: a log file or a CI run gets the result
lines and nothing else. Commands that can count what they do show a bar instead (build,
plan, publish: `ConsoleReporter`); the others (check, pull, mirror, and plan or publish
while they read the account's articles) show this.

A pause (a rate limit, a retry) is a `Countdown`: drawn in a bar's status column or in a
spinner's line, it says the seconds left each time the terminal is redrawn.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit.cli.output import stderr

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console, RenderableType
    from rich.progress import Task
    from rich.status import Status
    from rich.text import Text


class Countdown:
    """`waiting 27 s: rate limit: 10 creates per 30 s`, the seconds left counted on
    `clock` each time rich draws it (a live display redraws several times a second), and
    nothing once the pause is over."""

    def __init__(self, seconds: float, reason: str, *, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.until = clock() + seconds
        self.reason = reason

    def remaining(self) -> float:
        return max(0.0, self.until - self.clock())

    def text(self) -> str:
        left = self.remaining()
        return f"waiting {math.ceil(left)} s: {self.reason}" if left > 0 else ""

    def __rich__(self) -> Text:
        from rich.text import Text

        return Text(self.text(), style="dim")


def status_column() -> Any:
    """A progress column showing the task's `status` field: markup, or a renderable such
    as a `Countdown` (drawn anew at every refresh)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class StatusColumn(ProgressColumn):
        def render(self, task: Task) -> RenderableType:
            status = task.fields.get("status", "")
            if isinstance(status, str):
                return Text.from_markup(status)
            rendered: RenderableType = status
            return rendered

    return StatusColumn()


class Spinner:
    """`with Spinner("pull: reading the account's articles", enabled=not quiet):`."""

    def __init__(self, text: str, *, enabled: bool = True, console: Console | None = None):
        self.text = text
        self.console = console if console is not None else stderr
        # sys.stderr first: asking rich would import it, for nothing when output is piped.
        self.enabled = enabled and (
            self.console.is_terminal
            if console is not None
            else sys.stderr.isatty() and stderr.is_terminal
        )
        self._status: Status | None = None

    def start(self) -> Spinner:
        if self.enabled and self._status is None:
            self._status = self.console.status(self.text, spinner="dots")
            self._status.start()
        return self

    @property
    def renderable(self) -> RenderableType | None:
        """What the spinner's line draws while it turns (None when it does not)."""
        return self._status.renderable if self._status is not None else None

    def show(self, renderable: RenderableType) -> None:
        """Draw `renderable` (a `Countdown`) in place of the spinner's text, starting the
        spinner when it is not turning."""
        if not self.enabled:
            return
        if self._status is None:
            self.start()
        if self._status is not None:
            self._status.update(renderable)

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __enter__(self) -> Spinner:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
