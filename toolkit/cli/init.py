"""`toolkit init`: start a project a writer can commit at once."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.scaffold.project import InitResult


@click.command()
@click.argument(
    "folder",
    required=False,
    default=".",
    metavar="[FOLDER]",
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "--no-workflow",
    is_flag=True,
    help="Leave the CI workflow (.github/workflows/toolkit.yml) out.",
)
@json_option
@common_options
@pass_cli
def init(cli: CliContext, folder: Path, no_workflow: bool, as_json: bool) -> None:
    """Start a project in FOLDER (default: here), or adopt the posts already there:
    toolkit.toml, .gitignore, .env.example, a Makefile and a CI workflow.

    Posts already in the folder are adopted: the folder dev-to-git.json names its files
    in, or a folder of front-matter Markdown (blog-posts/, articles/, posts/...) becomes
    the content folder; otherwise content/ gets a sample, `_welcome.md`, which is not a
    post (its name starts with `_`) until you rename it. `toolkit.toml` holds the keys a
    blogger sets (`toolkit config --all` prints every other one); `.env.example` names the
    API key; the Makefile has `publish`, `watch`, `serve`, `check` and `build`; the
    workflow checks pull requests, publishes pushes to the default branch, can deploy
    the site to GitHub Pages and mirrors comments daily, with toolkit's GitHub Action
    pinned by the commit of its release. Nothing that exists is ever overwritten: each
    file already there is listed as skipped, with what it may lack.

    \b
    Example:
      toolkit init my-blog && cd my-blog
      toolkit init --no-workflow        # here, without the CI workflow
      toolkit init --json               # what was written, adopted and skipped, as JSON
    """
    from toolkit.scaffold.project import init_project

    result = init_project(folder, workflow=not no_workflow)
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(result))
        return
    where = "" if folder == Path(".") else f"{folder}/"
    if result.source is not None:
        click.echo(f"read {result.source.describe()}", err=True)
    if result.adopted is not None:
        click.echo(f"adopted {where}{result.adopted.describe()}", err=True)
    if result.writers:
        _say_writers(result, where)
    for item in result.files:
        if item.created:
            click.echo(f"created {where}{item.path}")
    for item in result.skipped:
        click.echo(f"skipped {where}{item.path}: {item.reason}", err=True)
    if result.enclosing is not None:
        click.echo(
            f"Warning: {result.enclosing} already makes {result.enclosing.parent} a project; "
            f"this one is inside it (commands run in {folder} use the new toolkit.toml)",
            err=True,
        )
    if not cli.quiet:
        go = f"cd {shlex.quote(str(folder))} && " if where else ""  # a line to paste
        if result.adopted is not None:
            click.echo(
                f"next: {go}toolkit check, then toolkit plan to see what publishing "
                "would do (it binds posts to their articles; nothing is sent)",
                err=True,
            )
        else:
            click.echo(
                f'next: {go}toolkit new "My first post", then make watch to see the '
                "site as you write",
                err=True,
            )


def _say_writers(result: InitResult, where: str) -> None:
    """A team's repository: its writers, and the secret each needs, one line each."""
    count = len(result.writers)
    click.echo(
        f"team: {count} writers, one folder each under {where}{result.content_dir}/; "
        "each publishes with their own key ([writers] in toolkit.toml)",
        err=True,
    )
    click.echo(
        "add one repository secret per writer (Settings, Secrets and variables, Actions), "
        "and in .env the writer's own:",
        err=True,
    )
    width = max(len(writer.variable) for writer in result.writers)
    for writer in result.writers:
        plural = "" if writer.posts == 1 else "s"
        click.echo(
            f"  {writer.variable:<{width}}  {result.content_dir}/{writer.folder}/ "
            f"({writer.posts} post{plural})",
            err=True,
        )
