from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from toolkit.cli.context import (
    CliContext,
    common_options,
    json_option,
    lock_timeout_option,
    pass_cli,
)
from toolkit.cli.output import stderr
from toolkit.cli.sync_report import ConsoleReporter, annotate, print_json, print_summary
from toolkit.commands.publish import plan as plan_posts
from toolkit.commands.publish import publish as publish_posts
from toolkit.content.sources import provenance

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.sync.engine import PublishResult

paths_argument = click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH...]")


def _render(
    cli: CliContext, result: PublishResult, *, as_json: bool, title: str, listed: bool
) -> None:
    """`listed`: the reporter has printed a line for each failed post already."""
    if as_json:
        print_json(result)
    elif not cli.quiet or result.failed:
        print_summary(result, title=title, details=not listed)
    annotate(result, err=as_json)
    for missing in result.missing_keys:  # a team's writer without a key: one line each
        stderr.print(f"[red]✗[/] {escape(missing.message)}", highlight=False)
    if result.missing_keys and not result.failed:
        raise SystemExit(1)
    if result.failed:
        if not as_json and not cli.quiet:
            if result.dry_run:  # nothing was written: nothing was "kept"
                stderr.print(
                    f"[red]{len(result.failed)} post(s) would fail[/]; nothing was written"
                )
            else:
                stderr.print(
                    f"[red]{len(result.failed)} post(s) failed[/]; everything else was kept"
                )
        raise SystemExit(1)


def _reporter(cli: CliContext, *, as_json: bool, dry_run: bool) -> ConsoleReporter:
    return ConsoleReporter(
        verbose=cli.verbose, quiet=cli.quiet, enabled=not as_json, dry_run=dry_run
    )


@click.command()
@paths_argument
@json_option
@common_options
@pass_cli
def plan(cli: CliContext, paths: tuple[str, ...], as_json: bool) -> None:
    """Show what `publish` would do to each post, and why; changes nothing.

    Reads the account's articles once and compares them with your posts and toolkit.lock:
    each post is create, update, unchanged, conflict (edited or deleted on the website since
    the last publish), skip (premium; a draft, skipped or future post of a generator's
    blog; or not on dev.to: older than [source] adopted, with what opts it in), error
    (fails `toolkit check`, or names an article the account does not hold) or gone (its
    file was deleted; its article stays on the website). A renamed post says
    `moved old -> new`. One line per post says what and why, and whether its article
    will be public or a draft; with -v, which front-matter key each field of a
    generator's post came from. Exits 1 on conflicts or errors.

    \b
    Example:
      toolkit plan
      toolkit plan content/hello.md --json
    """

    reporter = _reporter(cli, as_json=as_json, dry_run=True)
    with reporter:
        result = plan_posts(cli.config, paths, progress=reporter)
    if cli.verbose and not as_json:  # where each field of a generator's post came from
        for outcome in result.outcomes:
            if outcome.plan.post is not None:
                for line in provenance(outcome.plan.post):
                    click.echo(line, err=True)
    _render(cli, result, as_json=as_json, title="plan", listed=reporter.enabled)


@click.command()
@paths_argument
@click.option("--dry-run", is_flag=True, help="Decide everything, write nothing (same as `plan`).")
@click.option(
    "--force", is_flag=True, help="Overwrite articles that were edited on the website (local wins)."
)
@click.option(
    "--recreate",
    is_flag=True,
    help="Create again the articles of toolkit.lock that were deleted on the website.",
)
@lock_timeout_option(60.0, "a publish")
@json_option
@common_options
@pass_cli
def publish(
    cli: CliContext,
    paths: tuple[str, ...],
    dry_run: bool,
    force: bool,
    recreate: bool,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Sync posts to the publishing API: create new ones, update changed ones.

    Never duplicates: a post is matched to its article by toolkit.lock, then its `id:`, then
    dev-to-git.json, then canonical_url, then title, then its text (the Markdown after the
    front matter); a renamed post keeps its article (the lock entry moves), and a deleted
    one is named as gone (`toolkit unpublish` or `toolkit forget` it). Unchanged posts cost
    no request beyond one list read. Drafts (`published: false`) stay drafts. Articles
    edited on the website since the last publish are conflicts, skipped unless --force;
    articles deleted on the website are conflicts too, created again only with --recreate.
    Writes are paced to the API's rate limits (10 published creates and 30 updates per 30 s;
    drafts are not paced). Shows a progress bar on a terminal, a line for each post written
    (public or draft, with its article's URL) or failed (-v: every post) and a summary
    table. Needs FOREM_API_KEY; in a team's repository ([writers] in toolkit.toml), each
    writer's posts go with their own key (FOREM_API_KEY_<FOLDER>), their lines under their
    name, and a writer without one is skipped (exit 1).

    One writer at a time: a publish holds .toolkit/run.lock (so do pull and watch's draft
    pushes). While another run holds it, publish waits up to --lock-timeout seconds, then
    exits 1 naming that run. --dry-run takes no lock.

    \b
    Example:
      toolkit publish
      toolkit publish content/hello.md --dry-run
      FOREM_BASE_URL=http://127.0.0.1:8787 toolkit publish --json
    """

    reporter = _reporter(cli, as_json=as_json, dry_run=dry_run)
    with reporter:
        result = publish_posts(
            cli.config,
            paths,
            force=force,
            recreate=recreate,
            dry_run=dry_run,
            lock_timeout=lock_timeout,
            progress=reporter,
        )
    _render(cli, result, as_json=as_json, title="publish", listed=reporter.enabled)
