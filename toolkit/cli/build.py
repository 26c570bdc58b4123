from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import github_annotation, in_github_actions, is_terminal, print_line, stderr
from toolkit.content.problems import group_warnings

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.commands.build import BuildProgress
    from toolkit.license.gate import LicenseCheck
    from toolkit.site import BuildReport


def _shown(path: Path) -> str:
    """The output folder as the user would type it: relative to here when inside."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative.rstrip("/") + "/"


@click.command()
@click.option(
    "--clean",
    is_flag=True,
    default=None,
    help="Forget earlier builds: render and write every page again.",
)
@click.option(
    "--drafts",
    is_flag=True,
    default=None,
    help="Include posts with `published: false`, marked as drafts.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    default=None,
    help="Output folder (default: [site] output_dir, `site/`; with --premium, "
    "[site] premium_output_dir, `site-premium/`).",
)
@click.option(
    "--premium",
    is_flag=True,
    default=None,
    help="Build the premium site (premium posts, templates/premium/) into its own "
    "folder, after the licensing service confirms an active licence.",
)
@json_option
@common_options
@pass_cli
def build(
    cli: CliContext,
    clean: bool | None,
    drafts: bool | None,
    out: str | None,
    premium: bool | None,
    as_json: bool,
) -> None:
    """Build the static site from the posts under content/.

    Incremental: a page is rendered again only when its post, a template it uses, its
    comments or the posts it lists changed, and a file is written only when its bytes
    changed. Posts with errors are reported as `path:line: message` and left out; the
    rest is built and the command exits 1. A post whose only errors are the publishing
    API's (too many tags, a long title...) is built, with one warning that says so.
    With --json, the report (files written, unchanged, removed, problems) is one JSON
    document on stdout.

    When [source] names another generator (Hugo, Jekyll...), its site is that generator's
    unless [site] enabled = true: build then says so in one line, builds nothing and exits
    0.

    With --premium, posts marked `premium: true` and the templates of templates/premium/
    are built too, into site-premium/ ([site] premium_output_dir), never into the public
    site. The licensing service ([license], LICENSE_API_TOKEN) is asked first: unless the
    customer's licence is ACTIVE (and the user's, when [license] user_id is set, ACTIVE
    and enabled), nothing is written and the command exits 1 saying why; a service that
    cannot be reached refuses the build too.

    \b
    Example:
      toolkit build                  # into site/ (or [site] output_dir)
      toolkit build --drafts --out /tmp/preview
      toolkit build --clean          # everything again, from scratch
      toolkit build --premium        # the premium site, into site-premium/
      toolkit build --json           # the report as one JSON document
    """
    from toolkit.commands.build import build as build_site
    from toolkit.commands.build import build_premium
    from toolkit.site.enabled import left_to_generator, site_enabled

    if not site_enabled(cli.config):
        if not cli.quiet:
            stderr.print(left_to_generator(cli.config), markup=False, highlight=False)
        return

    def run(progress: BuildProgress | None = None) -> BuildReport:
        if not premium:
            return build_site(
                cli.config, clean=bool(clean), drafts=bool(drafts), out=out, progress=progress
            )
        result = build_premium(
            cli.config, clean=bool(clean), drafts=bool(drafts), out=out, progress=progress
        )
        if not cli.quiet and not as_json:
            stderr.print(license_line(result.license), markup=False, highlight=False)
        return result.site

    quiet = cli.quiet or as_json
    report = run() if quiet or not is_terminal(stderr) else _with_progress(run)
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.site import BuildJson

        print_json(to_json(BuildJson.of(report, cli.config.relative(report.output_dir))))
    # Every error; each kind of warning once (`-v`: every warning, as `check` says them).
    shown = report.problems if cli.verbose or as_json else report.errors
    for problem in shown:
        if not as_json:
            click.echo(str(problem))
        if in_github_actions():
            level = "error" if problem.is_error else "warning"
            click.echo(
                github_annotation(level, problem.message, problem.path, problem.line), err=as_json
            )
    for group in [] if cli.verbose or as_json else group_warnings(report.warnings):
        click.echo(str(group))
        if in_github_actions():
            first = group.first
            click.echo(github_annotation("warning", first.message, first.path, first.line))
    if not quiet:
        errors, warnings = len(report.errors), len(report.warnings)
        trouble = ""
        if errors or warnings:
            trouble = (
                f" ({errors} post error{'s' if errors != 1 else ''}, "
                f"{warnings} warning{'s' if warnings != 1 else ''})"
            )
        if report.drafts_left_out:
            count = report.drafts_left_out
            generator = cli.config.source.generator
            kind = (
                "published: false" if generator == "devto" else f"drafts as {generator} reads them"
            )
            stderr.print(
                f"{count} draft{'s' if count != 1 else ''} ({kind}) left out: "
                "toolkit build --drafts includes them, toolkit watch shows them as you "
                "write",
                markup=False,
                highlight=False,
            )
        print_line(
            stderr,
            f"built {report.posts} post{'s' if report.posts != 1 else ''}: "
            f"{len(report.written)} files written, {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed in {report.seconds:.1f} s{trouble} "
            f"→ {_shown(report.output_dir)}",
        )
    if report.errors:
        raise SystemExit(1)


def license_line(check: LicenseCheck) -> str:
    """`licence: customer acme.example ACTIVE (application 8123...)`, and the user's."""
    from toolkit.license.gate import shown

    line = (
        f"licence: customer {shown(check.customer.customer_id)} ACTIVE "
        f"(application {check.application_id})"
    )
    if check.user is not None:
        line += f", user {shown(check.user.user_id)} ACTIVE and enabled"
    return line


def _with_progress(run: Callable[[BuildProgress], BuildReport]) -> BuildReport:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("building"), BarColumn(), MofNCompleteColumn(), console=stderr, transient=True
    ) as bar:
        task = bar.add_task("build", total=None)

        def progress(total: int, done: int) -> None:
            bar.update(task, total=total, completed=done)

        return run(progress)
