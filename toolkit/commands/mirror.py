"""`mirror`: comments and the reading list into `content/_mirror/`."""

from __future__ import annotations

from toolkit.clients import Clients
from toolkit.commands import records
from toolkit.config import Config
from toolkit.mirror import MirrorResult, mirror_accounts
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
    every comment thread, not only those whose comment count changed. A team's
    repository: each writer's, with their own key.
    """
    with recorded(config, "mirror") as run:
        result = mirror_accounts(
            config,
            Clients.of(config, run),
            comments=comments,
            readinglist=readinglist,
            podcast=podcast,
            full=full,
        )
        records.mirror(run, result)
    return result
