from __future__ import annotations

import click
from rich.markup import escape

from toolkit.cli.context import CliContext, common_options, pass_cli
from toolkit.cli.output import shown_path, stderr, stdout, toolkit_command
from toolkit.cli.sync_report import ConsoleReporter, print_summary

SERVE_URL = "http://127.0.0.1:8000/"  # where `toolkit serve` listens by default


@click.command()
@common_options
@pass_cli
def demo(cli: CliContext) -> None:
    """Run the whole pipeline offline against the built-in sandbox.

    Starts the sandbox in-process, imports its demo account's articles (pull), publishes
    your posts to it, mirrors comments and the reading list, and builds the site: all in a
    copy of the project under .toolkit/demo/, so your toolkit.lock and content/ are not
    touched. Prints what happened and where the site is; the sandbox stops at the end.

    \b
    Example:
      toolkit demo          # what `make demo` runs
    """
    from toolkit.commands.demo import demo as run_demo
    from toolkit.commands.pull import PullAction

    def step(message: str) -> None:
        if not cli.quiet:
            stderr.print(f"[bold]•[/] {escape(message)}", highlight=False)

    # The steps' lines tell where the demo is; the reporter adds the publish bar.
    with ConsoleReporter(verbose=cli.verbose, quiet=cli.quiet, reading=False) as reporter:
        report = run_demo(cli.config, progress=reporter, on_step=step)
    pulled, published, mirrored, built = report.pulled, report.published, report.mirrored, report.built
    # A demo that returns has done every step, comments included.
    assert pulled is not None and published is not None and built is not None
    assert mirrored is not None and mirrored.comments is not None
    print_summary(published, title="published to the sandbox", details=cli.quiet)
    comments = mirrored.comments
    articles = len(comments.written) + comments.unchanged
    stdout.print(
        f"pulled {pulled.count(PullAction.CREATED)} article(s) of the demo account as posts; "
        f"mirrored the comments of {articles} published article(s) "
        f"({len(comments.fetched)} with comments) and {mirrored.readinglist_items} "
        f"reading-list item(s); built {built.posts} posts into {len(built.written)} file(s).",
        highlight=False, markup=False,
    )
    for problem in built.problems:
        stdout.print(str(problem), highlight=False, markup=False)
    site = shown_path(report.site_index.parent)
    stdout.print(f"\nThe site is in {site}/. To look at it, run\n"
                 f"  {toolkit_command()} serve --dir {site}\n"
                 f"and open {SERVE_URL}",
                 highlight=False, markup=False)
    stdout.print(f"Everything the demo wrote is in {shown_path(report.workdir)}/; the sandbox "
                 "has stopped.", highlight=False, markup=False)
    if not report.ok:
        raise SystemExit(1)
