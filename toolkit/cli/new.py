"""`toolkit new`: write a new draft post and print its path."""

from __future__ import annotations

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr


@click.command()
@click.argument("title")
@click.option(
    "--tags",
    "tags",
    multiple=True,
    metavar="TAGS",
    help="Tags of the post, comma-separated (at most 4; letters and digits).",
)
@json_option
@common_options
@pass_cli
def new(cli: CliContext, title: str, tags: tuple[str, ...], as_json: bool) -> None:
    """Write a new post: content/<slug>.md, a draft with valid front matter.

    The front matter has the title, `published: false`, today's date and the tags; the
    file name comes from the title (`-2`, `-3`... when it is taken; an existing file is
    never overwritten). Prints the path of the file, alone on stdout, so that it can be
    handed to an editor (--json: a JSON document with its path and title). Publishing it
    is up to you: set `published: true` when it is ready.

    \b
    Example:
      toolkit new "Hello, world"                 # content/hello-world.md
      toolkit new "Part 1: Setup" --tags python,tooling
      toolkit new "Notes" --json
    """
    from toolkit.content.draft import write_draft

    created = write_draft(cli.config, title, tags=tags)
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.content import NewJson

        print_json(to_json(NewJson.of(created)))
    else:
        click.echo(created.key)
    if not cli.quiet:
        stderr.print(
            "a draft (published: false): write it, then `toolkit watch` to see it "
            "or `toolkit check` to validate it",
            markup=False,
            highlight=False,
        )
