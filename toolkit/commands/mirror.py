"""`mirror`: comments and the reading list into `content/_mirror/`."""

from __future__ import annotations

from toolkit.clients import forem_client
from toolkit.commands import records
from toolkit.commands.accounts import account_client
from toolkit.config import Config
from toolkit.mirror import MirrorResult, run_mirror, run_team_mirror
from toolkit.runlog.run import recorded

__all__ = ["MirrorResult", "mirror"]


def mirror(
    config: Config,
    *,
    comments: bool = True,
    readinglist: bool = True,
    podcast: str | None = None,
    full: bool = False,
) -> MirrorResult:
    """Bring `content/_mirror/` up to date; a file is rewritten only when it changed.

    `podcast` also mirrors the comments of every episode of that podcast; `full` fetches
    every comment thread, not only those whose comment count changed.
    """
    with recorded(config, "mirror") as run:
        if config.writers is not None:  # a team's: each writer with their own key
            result = run_team_mirror(
                config,
                lambda account: account_client(config, account, run),
                comments=comments,
                readinglist=readinglist,
                podcast=podcast,
                full=full,
            )
            records.mirror(run, result)
            return result
        with forem_client(config, on_wait=run.wait, on_request=run.request) as client:
            result = run_mirror(
                config,
                client,
                comments=comments,
                readinglist=readinglist,
                podcast=podcast,
                full=full,
            )
        records.mirror(run, result)
    return result
