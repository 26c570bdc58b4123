"""`toolkit pull`: the account's articles into local posts."""

from __future__ import annotations

import click

from toolkit.cli.context import (
    CliContext,
    common_options,
    json_option,
    lock_timeout_option,
    pass_cli,
    print_json,
)
from toolkit.cli.output import stderr, stdout
from toolkit.cli.progress import Spinner


def _say(message: str) -> None:
    stderr.print(message, markup=False, highlight=False)


@click.command()
@click.option(
    "--overwrite",
    is_flag=True,
    help="Also replace local posts that have changes of their own with the website version.",
)
@click.option(
    "--merge",
    is_flag=True,
    help="Merge the website's changes into posts that have changes of their own (three "
    "ways, from the body last sent); overlapping changes get conflict markers.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what would be written, write nothing (and take no run lock).",
)
@lock_timeout_option(60.0, "a pull")
@json_option
@common_options
@pass_cli
def pull(
    cli: CliContext,
    overwrite: bool,
    merge: bool,
    dry_run: bool,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Import the account's articles as local posts (onboarding, and taking website edits).

    An article that no local post maps to becomes content/<slug>.md (never written over an
    existing file). In a team's repository ([writers]) each writer's articles are pulled
    with their key into their folder, under their name; a writer without a key is skipped
    with one line naming the variable, and pull exits 1. A post whose article was edited on the website takes the lines that
    changed there when the post has no unpublished changes of its own; the rest of the
    file stays as you wrote it (relative images, front matter style, key order, comments),
    so a pull with nothing new changes no byte. When both sides changed, the post is left
    as it is and pull exits 1: `toolkit diff PATH` shows both, --merge merges them (where
    both changed the same lines, it writes conflict markers and exits 1), --overwrite
    takes the website's version. Pulled posts are recorded in toolkit.lock, so a `toolkit
    publish` right after writes nothing. Like publish, it holds .toolkit/run.lock; while
    another run holds it, pull waits up to --lock-timeout seconds, then exits 1 naming
    that run. --dry-run says what would be written and writes nothing. --json prints what
    was done to each post as one JSON document.

    \b
    Example:
      toolkit pull
      toolkit pull --merge --dry-run
      toolkit pull --overwrite
      toolkit pull --json
    """
    if overwrite and merge:
        raise click.UsageError("--overwrite and --merge: choose one")
    from toolkit.commands.pull import PullAction
    from toolkit.commands.pull import pull as pull_articles

    spinner = Spinner("pull: reading the account's articles", enabled=not cli.quiet and not as_json)

    def blocked(message: str) -> None:
        spinner.stop()  # the wait is told in words; the spinner would only hide it
        _say(message)

    with spinner.start():
        result = pull_articles(
            cli.config,
            overwrite=overwrite,
            merge=merge,
            dry_run=dry_run,
            lock_timeout=lock_timeout,
            on_blocked=None if cli.quiet else blocked,
        )
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.sync import PullJson

        print_json(to_json(PullJson.of(result)))
    heading: str | None = None
    for outcome in result.outcomes:
        if as_json or (outcome.action is PullAction.UNCHANGED and cli.verbose < 1):
            continue
        if result.team and outcome.writer != heading:  # a team's: under each writer's name
            heading = outcome.writer
            name = heading or "(outside the writers' folders)"
            stdout.print(f"{name}:", markup=False, highlight=False)
        note = f"  {outcome.message}" if outcome.message else ""
        stdout.print(
            f"{'  ' if result.team else ''}{outcome.action.value:<11} {outcome.path} "
            f"(article {outcome.article_id}){note}",
            highlight=False,
            markup=False,
        )
    if not cli.quiet and not as_json:
        stderr.print(
            f"{result.count(PullAction.CREATED)} created, {result.count(PullAction.OVERWRITTEN)} "
            f"overwritten, {result.count(PullAction.MERGED)} merged, "
            f"{result.count(PullAction.CONFLICT)} in conflict, "
            f"{result.count(PullAction.DIFFERS) + result.count(PullAction.KEPT)} left as "
            "they are, "
            f"{result.count(PullAction.UNCHANGED)} unchanged"
            + (f", {gone} deleted here" if (gone := result.count(PullAction.GONE)) else "")
            + (" (dry run: nothing was written)" if result.dry_run else ""),
            highlight=False,
            markup=False,
        )
    for missing in result.missing_keys:  # a team's writer without a key: one line each
        stderr.print(
            f"{missing.writer}: {missing.variable} is not set; not pulled",
            markup=False,
            highlight=False,
        )
    if not result.ok:
        raise SystemExit(1)
