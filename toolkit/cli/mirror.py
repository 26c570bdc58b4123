from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.mirror import MirrorResult


@click.command()
@click.argument("what", type=click.Choice(["comments", "readinglist", "all"]), default="all")
@click.option(
    "--podcast", metavar="SLUG", help="Also mirror the comments of every episode of this podcast."
)
@click.option(
    "--full",
    is_flag=True,
    help="Fetch every comment thread, not only those whose comment count changed "
    "(picks up edited comments).",
)
@json_option
@common_options
@pass_cli
def mirror(cli: CliContext, what: str, podcast: str | None, full: bool, as_json: bool) -> None:
    """Mirror comments and the reading list into content/_mirror/ for the site and git.

    Comment threads of your published articles go to content/_mirror/comments/<slug>.json;
    only articles whose comment count changed since the last mirror are fetched again.
    The reading list (every page) goes to content/_mirror/readinglist.json. A file is
    rewritten only when its content changed. Prints each file created, updated or removed
    (--json: one JSON document with the counts and those files). Needs FOREM_API_KEY; in a
    team's repository ([writers]), each writer's with their own key into
    content/_mirror/<writer>/, and a writer without one is said (exit 1).

    \b
    Example:
      toolkit mirror
      toolkit mirror comments --podcast my-podcast
      toolkit mirror --json
    """
    from toolkit.commands.mirror import mirror as mirror_remote

    spinning = not cli.quiet and not as_json
    with Spinner("mirror: reading comments and the reading list", enabled=spinning):
        result = mirror_remote(
            cli.config,
            comments=what in ("comments", "all"),
            readinglist=what in ("readinglist", "all"),
            podcast=podcast,
            full=full,
        )
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.mirror import MirrorJson

        print_json(to_json(MirrorJson.of(result)))
        _missing(result)
        return
    for path in result.changed:
        stdout.print(f"{result.change_of(path)} {path}", highlight=False, markup=False)
    if cli.quiet:
        _missing(result)
        return
    parts = []
    if result.comments is not None:
        c = result.comments
        parts.append(
            f"comments: {len(c.fetched)} thread(s) fetched, {len(c.written)} file(s) "
            f"written, {len(c.removed)} removed, {c.unchanged} unchanged"
        )
    if result.podcast is not None:
        parts.append(
            f"podcast {podcast}: {len(result.podcast.fetched)} episode(s), "
            f"{len(result.podcast.written)} file(s) written"
        )
    if result.readinglist_items is not None:
        parts.append(
            f"reading list: {result.readinglist_items} item(s), "
            f"{'written' if result.readinglist_written else 'unchanged'}"
        )
    stderr.print(
        "; ".join(parts) + f" ({result.requests} request(s))", highlight=False, markup=False
    )
    _missing(result)


def _missing(result: MirrorResult) -> None:
    """A team's writers without a key: one line each, and exit 1."""
    for missing in result.missing_keys:
        stderr.print(
            f"{missing.writer}: {missing.variable} is not set; not mirrored",
            markup=False,
            highlight=False,
        )
    if result.missing_keys:
        raise SystemExit(1)


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
    if result.failed or result.in_conflict or result.missing_keys:
        raise SystemExit(1)
