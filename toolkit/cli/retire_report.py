"""How `toolkit unpublish` and `toolkit forget` take their post and show their result (a post
taken off the website, a gone post's lock entry dropped)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from toolkit.cli.context import CliContext, print_json
from toolkit.cli.output import stderr

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.sync.retire import RetireResult

path_argument = click.argument("path", type=click.Path(), metavar="PATH")


def say(message: str) -> None:
    stderr.print(message, markup=False, highlight=False)


def render(cli: CliContext, result: RetireResult, *, as_json: bool) -> None:
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(result))
    elif not cli.quiet:
        click.echo(f"{result.path}: {result.message}")
    if not cli.quiet:
        for note in result.notes:
            say(f"note: {note}")
