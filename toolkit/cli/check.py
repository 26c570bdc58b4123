from __future__ import annotations

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import github_annotation, in_github_actions
from toolkit.cli.progress import Spinner


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH...]")
@click.option("--strict", is_flag=True, help="Fail on warnings too (unknown front matter keys).")
@click.option(
    "--changed-from",
    metavar="REF",
    help="Check only what changed since the git revision REF: each writer's folder "
    "(a folder directly under the content folder) holding a change, and changed posts "
    "at its top.",
)
@click.option(
    "--own-folder",
    metavar="LOGIN",
    help="With --changed-from: a change in a writer's folder other than LOGIN's "
    "(compared without case) is an error.",
)
@json_option
@common_options
@pass_cli
def check(
    cli: CliContext,
    paths: tuple[str, ...],
    strict: bool,
    changed_from: str | None,
    own_folder: str | None,
    as_json: bool,
) -> None:
    """Validate posts offline: every problem the publishing API would refuse, and more.

    Prints one line per problem as `path:line: message` and exits 1 when any post has an
    error. PATH may be files or folders; the default is the whole content folder. With
    --json, the problems and counts are one JSON document instead. With -v, a post
    written for another generator ([source]) says, field by field, which front-matter
    key (or toolkit.toml) each value came from.

    In a team's repository (one folder per writer under the content folder), a pull
    request's CI checks only the writers' folders it changes (--changed-from, the base
    commit), and may refuse a change to another writer's folder than its author's
    (--own-folder, the author's login).

    \b
    Example:
      toolkit check
      toolkit check content/hello.md --strict
      toolkit check --json
      toolkit check --changed-from origin/main --own-folder jane-doe
    """
    from toolkit.commands.check import check as check_posts

    if own_folder is not None and changed_from is None:
        raise click.UsageError("--own-folder needs --changed-from (the changes to look at)")
    if paths and changed_from is not None:
        raise click.UsageError("--changed-from picks the posts itself: give no PATH with it")
    with Spinner("checking the posts", enabled=not cli.quiet and not as_json):
        result = check_posts(
            cli.config, paths, strict=strict, changed_from=changed_from, own_folder=own_folder
        )
    report = result.report
    if cli.verbose and not as_json:  # where each field of a generator's post came from
        from toolkit.content.sources import provenance

        for post in report.posts:
            for line in provenance(post):
                click.echo(line)
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.content import CheckJson

        print_json(to_json(CheckJson.of(result)))
    for problem in report.problems:
        if not as_json:
            click.echo(str(problem))
        if in_github_actions():
            level = {"error": "error", "warning": "warning"}.get(problem.severity, "notice")
            click.echo(
                github_annotation(level, problem.message, problem.path, problem.line), err=as_json
            )
    errors, warnings, notes = len(report.errors), len(report.warnings), len(report.notes)
    if not cli.quiet:
        click.echo(
            f"{report.files} post{'s' if report.files != 1 else ''} checked: "
            f"{errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''}"
            + (f", {notes} note{'s' if notes != 1 else ''}" if notes else ""),
            err=True,
        )
    if not result.ok:
        raise SystemExit(1)
