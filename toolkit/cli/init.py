"""`toolkit init`: start a project a writer can commit at once."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.context import CliContext, common_options, pass_cli


@click.command()
@click.argument(
    "folder",
    required=False,
    default=".",
    metavar="[FOLDER]",
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "--no-workflow", is_flag=True, help="Leave the CI workflow (.github/workflows/publish.yml) out."
)
@common_options
@pass_cli
def init(cli: CliContext, folder: Path, no_workflow: bool) -> None:
    """Start a project in FOLDER (default: here): toolkit.toml, a welcome draft, .gitignore,
    .env.example and a CI workflow.

    `toolkit.toml` has every key commented out at its default, with what it does;
    `content/welcome.md` is a draft (unless content/ already has posts); `.gitignore`
    keeps out what toolkit writes and `.env`; `.env.example` names the secrets; the
    workflow publishes on every push with toolkit's GitHub Action, pinned by commit.
    Nothing that exists is ever overwritten: each file already there is listed as
    skipped, so init is safe in an existing repository with posts in it.

    \b
    Example:
      toolkit init my-blog && cd my-blog
      toolkit init --no-workflow        # here, without the CI workflow
    """
    from toolkit.commands.init import init_project

    result = init_project(folder, workflow=not no_workflow)
    where = "" if folder == Path(".") else f"{folder}/"
    for item in result.files:
        if item.created:
            click.echo(f"created {where}{item.path}")
    for item in result.skipped:
        click.echo(f"skipped {where}{item.path}: {item.reason}", err=True)
    if not cli.quiet:
        go = f"cd {folder} && " if where else ""
        click.echo(
            f'next: {go}toolkit new "My first post", then toolkit watch to see the '
            "site as you write",
            err=True,
        )
