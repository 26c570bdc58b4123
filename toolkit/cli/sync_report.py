"""How plan and publish results look: progress on a terminal, lines, a table, JSON, annotations."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from toolkit.cli.context import print_json as print_document
from toolkit.cli.output import github_annotation, in_github_actions, stderr, stdout
from toolkit.cli.progress import Countdown, Spinner, status_column
from toolkit.sync.engine import Outcome, PublishResult
from toolkit.sync.plan import Action, PostPlan

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from toolkit.content import Problem

STYLE = {
    Action.CREATE: "green",
    Action.UPDATE: "cyan",
    Action.UNCHANGED: "dim",
    Action.SKIP: "yellow",
    Action.CONFLICT: "red",
    Action.ERROR: "red",
    Action.GONE: "magenta",
}


def visibility(outcome: Outcome) -> str:
    """What the article is or will be on the website: public or a draft ("" unknown, or a
    post the writer keeps off dev.to, whose `published:` says nothing of it)."""
    post = outcome.plan.post
    if outcome.published is None or (post is not None and post.held):
        return ""
    return "public" if outcome.published else "draft"


SAME_PAUSE = 0.5  # s: a pause ending this soon after the one said is that pause


def pause_line(seconds: float, reason: str, now: datetime | None = None) -> str:
    """`waiting 27.5 s, until 14:02:31 (rate limit: 10 creates per 30 s)`."""
    until = (now or datetime.now()) + timedelta(seconds=seconds)
    return f"waiting {seconds:.1f} s, until {until:%H:%M:%S} ({reason})"


class ConsoleReporter:
    """Draws a progress bar (on a terminal) and one line per post that changed or failed;
    for a plan (`dry_run`), one line per post. Each line says whether the article is (or
    will be) public or a draft, and, once written, its URL. A failed post's line is where
    its problems are told: the summary does not repeat them (`print_summary`).

    A pause counts down live on a terminal (`Countdown`, in the bar or in the spinner's
    line, on `clock`); elsewhere it is one line. `console` is where progress goes (stderr).
    """

    def __init__(
        self,
        *,
        verbose: int = 0,
        quiet: bool = False,
        enabled: bool = True,
        dry_run: bool = False,
        reading: bool = True,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.dry_run = dry_run  # lines are then the result itself: stdout, "→" for would-do
        self.verbose = verbose
        self.quiet = quiet
        self.enabled = enabled and not quiet
        self.console = console if console is not None else stderr
        self.clock = clock
        self.progress: Progress | None = None
        self.task: TaskID | None = None  # the bar's task, while there is a bar
        # Until the plan is made: the account's articles are being read (`reading`: say
        # so; a caller that shows its own steps does not).
        self.reading = Spinner(
            "reading the account's articles",
            enabled=self.enabled and reading,
            console=self.console,
        )
        self._said = threading.Lock()
        self._said_until = float("-inf")  # the end of the last pause said (monotonic)
        self._writer: str | None = None  # the writer whose lines are being printed
        # An account's writes finish on several threads: a writer's name and the lines
        # under it are printed by one at a time.
        self._printing = threading.Lock()

    def planned(self, plans: list[PostPlan]) -> None:
        self.reading.stop()
        if not self.enabled or not self.console.is_terminal or not plans:
            return
        self.progress = Progress(
            TextColumn("[bold]publishing"),
            BarColumn(),
            MofNCompleteColumn(),
            status_column(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("publish", total=len(plans), status="")
        self.progress.start()

    def done(self, outcome: Outcome) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, status="")
        if not self.enabled:
            return
        quiet_unchanged = not self.dry_run and self.verbose < 1
        if outcome.action is Action.UNCHANGED and outcome.ok and quiet_unchanged:
            return
        if not outcome.ok:
            mark, style = "✗", "red"
        else:
            mark, style = ("→" if self.dry_run else "✓"), STYLE[outcome.action]
        message = outcome.message
        if outcome.ok and outcome.url and outcome.action in (Action.CREATE, Action.UPDATE):
            message += f": {outcome.url}"
        canonical = outcome.canonical_url
        if self.dry_run and canonical and outcome.action in (Action.CREATE, Action.UPDATE):
            message += f" (canonical_url {canonical})"
        where = outcome.key
        if not outcome.ok and outcome.plan.problems:  # `path:line`, as check says it
            where += f":{outcome.plan.problems[0].line}"
        line = (
            f"[{style}]{mark} {outcome.action.value:<9}[/] {visibility(outcome):<6} "
            f"{escape(where)}  {escape(message)}"
        )
        console = (
            stdout if self.dry_run else (self.progress.console if self.progress else self.console)
        )
        with self._printing:
            if outcome.writer is not None and outcome.writer != self._writer:
                # A team's repository: the lines of each writer under their name.
                self._writer = outcome.writer
                console.print(f"[bold]{escape(outcome.writer)}[/]", highlight=False)
            console.print(line, markup=True, highlight=False)
            if not outcome.ok:
                for problem in outcome.plan.problems[1:]:
                    console.print(f"  {problem}", highlight=False, markup=False)

    def waiting(self, seconds: float, reason: str) -> None:
        """A pause (a rate limit, a retry): on a terminal, a line that counts the seconds
        left (in the bar, or in the spinner's place before there is a bar); elsewhere one
        line, what it waits for and until when. With `-v` the client's own log line says
        each wait instead (once, not twice)."""
        countdown = Countdown(seconds, reason, clock=self.clock)
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, status=countdown)
        if not self.enabled or self.verbose:
            return
        # Writes waiting side by side for one window are one pause: said once.
        until = countdown.until
        with self._said:
            if until <= self._said_until + SAME_PAUSE:
                return
            self._said_until = until
        if self.console.is_terminal:
            if self.progress is None:
                self.reading.show(countdown)
            return
        self.console.print(f"[dim]{escape(pause_line(seconds, reason))}[/]", highlight=False)

    def blocked(self, message: str) -> None:
        self.reading.stop()
        if not self.quiet:
            self.console.print(message, markup=False, highlight=False)

    def close(self) -> None:
        self.reading.stop()
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def __enter__(self) -> ConsoleReporter:
        self.reading.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def print_summary(result: PublishResult, *, title: str, details: bool = True) -> None:
    """The table of actions; with `details`, each failed post and its problems too (when
    no `ConsoleReporter` line has told them already)."""
    table = Table(title=title, show_edge=False, title_justify="left")
    table.add_column("action")
    table.add_column("posts", justify="right")
    for action in Action:
        total = result.count(action)
        if total:
            failed = result.count(action, ok=False)
            writes = action in (Action.CREATE, Action.UPDATE)  # the others fail by definition
            label = action.value + (f" ([red]{failed} failed[/])" if failed and writes else "")
            table.add_row(f"[{STYLE[action]}]{label}[/]", str(total))
    stdout.print(table)
    if not details:
        return
    for outcome in result.failed:
        stdout.print(f"[red]✗[/] {escape(outcome.key)}: {escape(outcome.message)}", highlight=False)
        for problem in outcome.plan.problems[1:]:
            stdout.print(f"  {problem}", highlight=False, markup=False)


def print_json(result: PublishResult) -> None:
    """The command's document (`toolkit.commands.results`), the one the MCP server's
    `plan` and `push_drafts` tools return: posts marked published are sent by the CLI."""
    from toolkit.commands.results import to_json
    from toolkit.commands.results.sync import PublishJson

    print_document(to_json(PublishJson.of(result, published_allowed=True)))


def annotate(result: PublishResult, *, err: bool = False) -> None:
    """GitHub Actions shows these on the commit and in the run summary (`err` keeps stdout
    for a JSON document)."""
    if not in_github_actions():
        return
    for missing in result.missing_keys:  # a team writer without a key: the secret to add
        click.echo(github_annotation("error", missing.message), err=err)
    for outcome in result.failed:
        problems: Sequence[Problem | None] = outcome.plan.problems or [None]
        for problem in problems:
            message = problem.message if problem else outcome.message
            line = problem.line if problem else None
            click.echo(github_annotation("error", message, outcome.key, line), err=err)
