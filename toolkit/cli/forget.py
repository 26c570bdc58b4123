"""`toolkit forget`: the toolkit.lock entry of a post whose file is gone, dropped."""

from __future__ import annotations

import click

from toolkit.cli.context import (
    CliContext,
    common_options,
    json_option,
    lock_timeout_option,
    pass_cli,
)
from toolkit.cli.retire_report import path_argument, render, say


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
        cli.config, path, lock_timeout=lock_timeout, on_blocked=None if cli.quiet else say
    )
    render(cli, result, as_json=as_json)
