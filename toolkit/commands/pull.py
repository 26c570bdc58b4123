"""`pull`: the account's articles as local posts (a team's: each writer's, with their key)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

from toolkit.clients import Clients
from toolkit.commands import records
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.pull import PullAction, PullOutcome, PullResult
from toolkit.sync.runlock import DEFAULT_TIMEOUT, writer_run
from toolkit.sync.team import pull_posts

__all__ = ["PullAction", "PullOutcome", "PullResult", "pull"]


def pull(
    config: Config,
    *,
    overwrite: bool = False,
    merge: bool = False,
    dry_run: bool = False,
    lock_timeout: float = DEFAULT_TIMEOUT,
    on_blocked: Callable[[str], None] | None = None,
) -> PullResult:
    """Write remote articles as posts (`overwrite`: also replace posts with changes of
    their own; `merge`: merge the website's changes into them), holding the run lock;
    `on_blocked(message)` is told when another run holds it and this one waits (up to
    `lock_timeout` seconds). `dry_run` writes nothing and, like `plan`, takes no lock."""
    with recorded(config, "pull") as run:
        lock = (
            nullcontext(None)
            if dry_run
            else writer_run(config, "pull", timeout=lock_timeout, on_wait=on_blocked)
        )
        result = pull_posts(
            config, Clients.of(config, run), lock, overwrite=overwrite, merge=merge, dry_run=dry_run
        )
        records.pull(run, result)
    return result
