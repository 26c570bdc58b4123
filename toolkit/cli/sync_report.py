"""How plan and publish results look: progress on a terminal, lines, a table, JSON, annotations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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

from toolkit.cli.output import github_annotation, in_github_actions, stderr, stdout
from toolkit.sync.engine import Outcome, PublishResult
from toolkit.sync.plan import Action, PostPlan

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content import Problem

STYLE = {
    Action.CREATE: "green",
    Action.UPDATE: "cyan",
    Action.UNCHANGED: "dim",
    Action.SKIP: "yellow",
    Action.CONFLICT: "red",
    Action.ERROR: "red",
}


class ConsoleReporter:
    """Draws a progress bar (on a terminal) and one line per post that changed or failed."""

    def __init__(self, *, verbose: int = 0, quiet: bool = False, enabled: bool = True,
                 dry_run: bool = False):
        self.dry_run = dry_run  # lines are then the result itself: stdout, "→" for would-do
        self.verbose = verbose
        self.quiet = quiet
        self.enabled = enabled and not quiet
        self.progress: Progress | None = None
        self.task: TaskID | None = None  # the bar's task, while there is a bar

    def planned(self, plans: list[PostPlan]) -> None:
        if not self.enabled or not stderr.is_terminal or not plans:
            return
        self.progress = Progress(
            TextColumn("[bold]publishing"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
            console=stderr, transient=True,
        )
        self.task = self.progress.add_task("publish", total=len(plans), status="")
        self.progress.start()

    def done(self, outcome: Outcome) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, status="")
        if not self.enabled:
            return
        if outcome.action is Action.UNCHANGED and outcome.ok and self.verbose < 1:
            return
        if not outcome.ok:
            mark, style = "✗", "red"
        else:
            mark, style = ("→" if self.dry_run else "✓"), STYLE[outcome.action]
        line = (f"[{style}]{mark} {outcome.action.value:<9}[/] {escape(outcome.key)}  "
                f"{escape(outcome.message)}")
        console = stdout if self.dry_run else (self.progress.console if self.progress else stderr)
        console.print(line, markup=True, highlight=False)

    def waiting(self, seconds: float, reason: str) -> None:
        if self.progress is not None and self.task is not None:
            status = f"[dim]waiting {seconds:.1f} s: {escape(reason)}"
            self.progress.update(self.task, status=status)
        elif self.enabled and self.verbose:
            stderr.print(f"[dim]waiting {seconds:.1f} s: {escape(reason)}[/]")

    def blocked(self, message: str) -> None:
        if not self.quiet:
            stderr.print(message, markup=False, highlight=False)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def __enter__(self) -> ConsoleReporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def print_summary(result: PublishResult, *, title: str) -> None:
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
    for outcome in result.failed:
        stdout.print(f"[red]✗[/] {escape(outcome.key)}: {escape(outcome.message)}",
                     highlight=False)
        for problem in outcome.plan.problems[1:]:
            stdout.print(f"  {problem}", highlight=False, markup=False)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "path": outcome.key,
        "title": outcome.plan.title,
        "action": outcome.action.value,
        "ok": outcome.ok,
        "message": outcome.message,
        "article_id": outcome.article_id,
        "url": outcome.url,
        "problems": [str(p) for p in outcome.plan.problems],
    }


def print_json(result: PublishResult) -> None:
    document = {
        "dry_run": result.dry_run,
        "ok": result.ok,
        "summary": {action.value: result.count(action) for action in Action},
        "failed": len(result.failed),
        "requests": result.requests,
        "waits": [{"seconds": round(seconds, 3), "reason": reason}
                  for seconds, reason in result.waits],
        "posts": [outcome_json(o) for o in result.outcomes],
    }
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def annotate(result: PublishResult, *, err: bool = False) -> None:
    """GitHub Actions shows these on the commit and in the run summary (`err` keeps stdout
    for a JSON document)."""
    if not in_github_actions():
        return
    for outcome in result.failed:
        problems: Sequence[Problem | None] = outcome.plan.problems or [None]
        for problem in problems:
            message = problem.message if problem else outcome.message
            line = problem.line if problem else None
            click.echo(github_annotation("error", message, outcome.key, line), err=err)
