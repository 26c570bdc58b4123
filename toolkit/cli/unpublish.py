"""`toolkit unpublish`: a post's article taken off the website, on purpose."""

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
        cli.config, path, lock_timeout=lock_timeout, on_blocked=None if cli.quiet else say
    )
    render(cli, result, as_json=as_json)
