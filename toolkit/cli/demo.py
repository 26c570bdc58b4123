from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from toolkit.cli.context import CliContext, common_options, pass_cli
from toolkit.cli.logs import print_table
from toolkit.cli.output import shown_path, stderr, stdout, toolkit_command
from toolkit.cli.sync_report import ConsoleReporter, print_summary
from toolkit.commands.demo import demo as run_demo
from toolkit.commands.pull import PullAction

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.commands.demo import DemoReport

SERVE_URL = "http://127.0.0.1:8000/"  # where `toolkit serve` listens by default


@click.command()
@common_options
@pass_cli
def demo(cli: CliContext) -> None:
    """Run the whole pipeline offline against the built-in sandbox.

    Starts the sandbox in-process, imports its demo account's articles (pull), publishes
    your posts to it, mirrors comments and the reading list, makes a premium build for a
    customer the sandbox's licensing service licenses and shows the one it refuses for an
    unlicensed customer, builds the site and exports it into a zip archive through the
    sandbox's archive tasks: all in a copy of the project under .toolkit/demo/, so your
    toolkit.lock and content/ are not touched. Each step ships its run log to the
    sandbox's log stream, and the demo ends by asking it in SQL how the requests went (by
    status, with the slowest route). Prints what happened and where the site and the
    archive are; the sandbox stops at the end.

    \b
    Example:
      toolkit demo          # what `make demo` runs
    """

    def step(message: str) -> None:
        if not cli.quiet:
            stderr.print(f"[bold]•[/] {escape(message)}", highlight=False)

    # The steps' lines tell where the demo is; the reporter adds the publish bar.
    with ConsoleReporter(verbose=cli.verbose, quiet=cli.quiet, reading=False) as reporter:
        report = run_demo(cli.config, progress=reporter, on_step=step)
    pulled, published, mirrored, built = (
        report.pulled,
        report.published,
        report.mirrored,
        report.built,
    )
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
        highlight=False,
        markup=False,
    )
    for problem in built.problems:
        stdout.print(str(problem), highlight=False, markup=False)
    _print_premium(report)
    if report.logs is not None:
        stdout.print(
            f"\nThe run log, asked on the sandbox's log stream:\n  {report.logs.sql}",
            highlight=False,
            markup=False,
        )
        print_table(report.logs)
    exported = report.exported
    if exported is not None:
        stdout.print(
            f"\nThe site as an archive: {shown_path(exported.output)} "
            f"({exported.size:,} bytes, {exported.entries} entries, verified)",
            highlight=False,
            markup=False,
        )
    site = shown_path(report.site_index.parent)
    stdout.print(
        f"\nThe site is in {site}/. To look at it, run\n"
        f"  {toolkit_command()} serve --dir {site}\n"
        f"and open {SERVE_URL}",
        highlight=False,
        markup=False,
    )
    stdout.print(
        f"Everything the demo wrote is in {shown_path(report.workdir)}/; the sandbox has stopped.",
        highlight=False,
        markup=False,
    )
    if not report.ok:
        raise SystemExit(1)


def _print_premium(report: DemoReport) -> None:
    """Both outcomes of the licence gate: the build it allowed, the one it refused."""
    premium, refused = report.premium, report.premium_refused
    if premium is not None:
        site = premium.site
        stdout.print(
            f"premium build allowed (customer {premium.license.customer.customer_id}, licence "
            f"ACTIVE): {site.posts} posts into {len(site.written)} file(s) in {site.output_dir}",
            highlight=False,
            markup=False,
        )
    if refused is not None:
        stdout.print(f"{refused.message}: nothing was written", highlight=False, markup=False)
