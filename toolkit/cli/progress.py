"""Progress while a command waits: a spinner on stderr, erased when the command is done.

Shown only on a terminal and without `--quiet`: a log file or a CI run gets the result
lines and nothing else. Commands that can count what they do show a bar instead (build,
plan, publish: `ConsoleReporter`); the others (check, pull, mirror, and plan or publish
while they read the account's articles) show this.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from toolkit.cli.output import stderr

if TYPE_CHECKING:  # pragma: no cover
    from rich.status import Status


class Spinner:
    """`with Spinner("pull: reading the account's articles", enabled=not quiet):`."""

    def __init__(self, text: str, *, enabled: bool = True):
        self.text = text
        # sys.stderr first: asking rich would import it, for nothing when output is piped.
        self.enabled = enabled and sys.stderr.isatty() and stderr.is_terminal
        self._status: Status | None = None

    def start(self) -> Spinner:
        if self.enabled and self._status is None:
            self._status = stderr.status(self.text, spinner="dots")
            self._status.start()
        return self

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __enter__(self) -> Spinner:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
