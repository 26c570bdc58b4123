"""What a command's result adds to its run's events: one event per post outcome and per
problem, a summary per build or mirror, and the run's outcome (`failed` when the command
ran and something failed, which is what makes it exit 1).

The run log's record of the results `toolkit.commands.results` writes as documents. It
lives here, with the commands that own those results, so that `toolkit.runlog` knows
nothing of the layers above it (the layers, `[tool.importlinter]`); it stays apart from
`results` because every run records, and recording needs no pydantic.

Only facts go in: paths, actions, ids, counts and toolkit's own messages (which never
carry secrets), never a post's text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content import Problem
    from toolkit.mirror import MirrorResult
    from toolkit.runlog.run import Run
    from toolkit.site import BuildReport
    from toolkit.sync.engine import MissingKey, Outcome, PublishResult
    from toolkit.sync.pull import PullResult
    from toolkit.sync.retire import RetireResult


def problems(run: Run, found: Iterable[Problem]) -> None:
    for problem in found:
        run.event(
            "problem",
            post=problem.path,
            line=problem.line,
            level=problem.severity.value,
            message=problem.message,
        )


def outcomes(run: Run, done: Iterable[Outcome]) -> None:
    """One event per post a publish (or a watch session's push) decided or wrote."""
    for outcome in done:
        run.event(
            "post",
            post=outcome.key,
            action=outcome.action.value,
            outcome="ok" if outcome.ok else "failed",
            message=outcome.message,
            article_id=outcome.article_id,
            writer=outcome.writer,
        )


def missing_keys(run: Run, missing: Iterable[MissingKey]) -> None:
    """A team's writers skipped for want of a key: one problem each, and the run failed."""
    for each in missing:
        run.event("problem", level="error", message=each.message, writer=each.writer)
        run.outcome = "failed"


def publish(run: Run, result: PublishResult) -> None:
    outcomes(run, result.outcomes)
    missing_keys(run, result.missing_keys)
    if result.lock_wait:
        run.event("wait", action="run lock", reason=result.lock_wait)
    if result.failed:
        run.outcome = "failed"


def pull(run: Run, result: PullResult) -> None:
    for outcome in result.outcomes:
        run.event(
            "post",
            post=outcome.path,
            action=outcome.action.value,
            outcome="ok" if outcome.ok else "failed",
            message=outcome.message or None,
            article_id=outcome.article_id,
            writer=outcome.writer,
        )
    if result.lock_wait:
        run.event("wait", action="run lock", reason=result.lock_wait)
    missing_keys(run, result.missing_keys)
    if not result.ok:
        run.outcome = "failed"


def retire(run: Run, result: RetireResult) -> None:
    """An unpublish or a forget: one event for the post."""
    run.event(
        "post",
        post=result.path,
        action=result.action,
        outcome="ok",
        message=result.message,
        article_id=result.article_id,
    )


def build(run: Run, report: BuildReport, *, decides: bool = True) -> None:
    """A build's problems and summary; with `decides`, errors make the run `failed` (a
    watch session's rebuilds do not: a bad save is part of writing)."""
    problems(run, report.problems)
    run.event(
        "build",
        action="build",
        posts=report.posts,
        written=len(report.written),
        unchanged=len(report.unchanged),
        removed=len(report.removed),
        errors=len(report.errors),
        warnings=len(report.warnings),
        duration_ms=round(report.seconds * 1000, 3),
    )
    if report.errors and decides:
        run.outcome = "failed"


def mirror(run: Run, result: MirrorResult) -> None:
    comments = result.comments
    run.event(
        "mirror",
        action="mirror",
        fetched=len(comments.fetched) if comments else None,
        written=len(result.changed),
        removed=len(comments.removed) if comments else None,
        unchanged=comments.unchanged if comments else None,
        items=result.readinglist_items,
        requests=result.requests,
    )
    missing_keys(run, result.missing_keys)
