"""`toolkit unpublish` and `toolkit forget`: a post taken off the website, a gone post's
lock entry dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from toolkit.cli.context import (
    CliContext,
    common_options,
    json_option,
    lock_timeout_option,
    pass_cli,
    print_json,
)
from toolkit.cli.output import stderr

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.sync.retire import RetireResult

path_argument = click.argument("path", type=click.Path(), metavar="PATH")


def _say(message: str) -> None:
    stderr.print(message, markup=False, highlight=False)


def _render(cli: CliContext, result: RetireResult, *, as_json: bool) -> None:
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(result))
    elif not cli.quiet:
        click.echo(f"{result.path}: {result.message}")
    if not cli.quiet:
        for note in result.notes:
            _say(f"note: {note}")


@click.command()
@path_argument
@lock_timeout_option(60.0, "an unpublish")
@json_option
@common_options
@pass_cli
def unpublish(cli: CliContext, path: str, lock_timeout: float, as_json: bool) -> None:
    """Set a post's article unpublished on the website, on purpose (never a delete).

    PATH is a post, or a post whose file is gone (`plan` and `publish` name those) found
    through its toolkit.lock entry. The article becomes a draft on the website
    (`published: false`), with its text, comments and URL kept; for a gone post the lock
    entry is then dropped. A post still there keeps its entry, and its own
    `published: true` line becomes `published: false` (nothing else of the file changes),
    so the next publish leaves it a draft. The post's article is the one binding every
    post together gives it, as plan does (never a title alone). Holds .toolkit/run.lock
    like publish. Needs FOREM_API_KEY.

    \b
    Example:
      toolkit unpublish content/old-post.md
      toolkit unpublish content/old-post.md --json
    """
    from toolkit.commands.unpublish import unpublish as unpublish_post

    result = unpublish_post(
        cli.config, path, lock_timeout=lock_timeout, on_blocked=None if cli.quiet else _say
    )
    _render(cli, result, as_json=as_json)


@click.command()
@path_argument
@lock_timeout_option(60.0, "a forget")
@json_option
@common_options
@pass_cli
def forget(cli: CliContext, path: str, lock_timeout: float, as_json: bool) -> None:
    """Drop the toolkit.lock entry of a post whose file is gone; its article stays as it is.

    For a post you deleted on purpose and whose article should stay on the website
    (`toolkit unpublish` takes it down instead), or whose file is no post now (no front
    matter, excluded). `plan` and `publish` then stop naming it. A post whose file is
    still there is refused, and so is the old path of a renamed post (its entry moves to
    the new path): forget reads the account's articles to bind every post first, as
    plan does. Holds .toolkit/run.lock like publish. Needs FOREM_API_KEY.

    \b
    Example:
      toolkit forget content/old-post.md
      toolkit forget content/old-post.md --json
    """
    from toolkit.commands.forget import forget as forget_post

    result = forget_post(
        cli.config, path, lock_timeout=lock_timeout, on_blocked=None if cli.quiet else _say
    )
    _render(cli, result, as_json=as_json)
