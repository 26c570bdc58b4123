from __future__ import annotations

import click

from toolkit.cli.context import CliContext, common_options, lock_timeout_option, pass_cli
from toolkit.cli.output import stderr
from toolkit.cli.sync_report import ConsoleReporter, annotate, print_json, print_summary

paths_argument = click.argument("paths", nargs=-1, type=click.Path())
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print one JSON document on stdout and nothing else there.")


def _run(cli: CliContext, paths, *, force: bool, dry_run: bool, as_json: bool, title: str,
         lock_timeout: float = 60.0) -> None:
    from toolkit.sync import forem_client
    from toolkit.sync.engine import SyncEngine

    config = cli.config
    reporter = ConsoleReporter(verbose=cli.verbose, quiet=cli.quiet, enabled=not as_json,
                               dry_run=dry_run)
    with forem_client(config) as client:
        engine = SyncEngine(config, client, reporter=reporter, lock_timeout=lock_timeout)
        try:
            result = engine.publish(paths, force=force, dry_run=dry_run)
        finally:
            reporter.close()
    if as_json:
        print_json(result)
    elif not cli.quiet or result.failed:
        print_summary(result, title=title)
    annotate(result, err=as_json)
    if result.failed:
        if not as_json and not cli.quiet:
            stderr.print(f"[red]{len(result.failed)} post(s) failed[/]; everything else was kept")
        raise SystemExit(1)


@click.command()
@paths_argument
@json_option
@common_options
@pass_cli
def plan(cli: CliContext, paths: tuple[str, ...], as_json: bool) -> None:
    """Show what `publish` would do to each post, and why; changes nothing.

    Reads the account's articles once and compares them with your posts and toolkit.lock:
    each post is create, update, unchanged, conflict (edited on the website since the last
    publish), skip (premium) or error (fails `toolkit check`). Exits 1 on conflicts or errors.

    \b
    Example:
      toolkit plan
      toolkit plan content/hello.md --json
    """
    _run(cli, paths, force=False, dry_run=True, as_json=as_json, title="plan")


@click.command()
@paths_argument
@click.option("--dry-run", is_flag=True, help="Decide everything, write nothing (same as `plan`).")
@click.option("--force", is_flag=True,
              help="Overwrite articles that were edited on the website (local wins).")
@lock_timeout_option(60.0, "a publish")
@json_option
@common_options
@pass_cli
def publish(cli: CliContext, paths: tuple[str, ...], dry_run: bool, force: bool,
            lock_timeout: float, as_json: bool) -> None:
    """Sync posts to the publishing API: create new ones, update changed ones.

    Never duplicates: a post is matched to its article by toolkit.lock, then canonical_url,
    then title. Unchanged posts cost no request beyond one list read. Drafts
    (`published: false`) stay drafts. Articles edited on the website since the last publish
    are conflicts, skipped unless --force. Writes are paced to the API's rate limits
    (10 creates and 30 updates per 30 s). Shows a progress bar on a terminal, a line for
    each post written or failed (-v: every post) and a summary table. Needs FOREM_API_KEY.

    One writer at a time: a publish holds .toolkit/run.lock (so do pull and watch's draft
    pushes). While another run holds it, publish waits up to --lock-timeout seconds, then
    exits 1 naming that run. --dry-run takes no lock.

    \b
    Example:
      toolkit publish
      toolkit publish content/hello.md --dry-run
      FOREM_BASE_URL=http://127.0.0.1:8787 toolkit publish --json
    """
    _run(cli, paths, force=force, dry_run=dry_run, as_json=as_json, title="publish",
         lock_timeout=lock_timeout)
