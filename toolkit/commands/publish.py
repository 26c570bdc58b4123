"""`plan` and `publish`: what syncing the posts would do, and doing it.

The command builds the client with a wait listener that both keeps every pause for the
result and tells the caller's progress, holds the run lock for a publish that writes,
and lets the engine do the rest. Each call is a recorded run (`toolkit.runlog`): its
requests, pauses and post outcomes go to the run log.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path

from toolkit.clients import Clients
from toolkit.commands import records
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.engine import PublishProgress, PublishResult, Silent
from toolkit.sync.runlock import DEFAULT_TIMEOUT, writer_run
from toolkit.sync.team import publish_posts

__all__ = ["PublishProgress", "PublishResult", "plan", "publish"]


def plan(
    config: Config, paths: Iterable[str | Path] = (), *, progress: PublishProgress | None = None
) -> PublishResult:
    """What `publish` would do to each post, and why; writes nothing and takes no lock."""
    return _publish(config, paths, command="plan", dry_run=True, progress=progress)


def publish(
    config: Config,
    paths: Iterable[str | Path] = (),
    *,
    force: bool = False,
    recreate: bool = False,
    dry_run: bool = False,
    drafts_only: bool = False,
    lock_timeout: float = DEFAULT_TIMEOUT,
    progress: PublishProgress | None = None,
) -> PublishResult:
    """Sync `paths` (default: every post) to the publishing API.

    `force` overwrites articles edited on the website; `recreate` creates again the
    articles of toolkit.lock that are gone from the website; `dry_run` decides everything
    and writes nothing; `drafts_only` writes drafts only, leaving every post that says
    `published: true` for a publish without it (as watch's pushes do). A publish that
    writes holds the run lock, waiting up to `lock_timeout` seconds for another run
    (`RunLockBusy` after that).
    """
    return _publish(
        config,
        paths,
        command="publish",
        force=force,
        recreate=recreate,
        dry_run=dry_run,
        drafts_only=drafts_only,
        lock_timeout=lock_timeout,
        progress=progress,
    )


def _publish(
    config: Config,
    paths: Iterable[str | Path],
    *,
    command: str,
    force: bool = False,
    recreate: bool = False,
    dry_run: bool = False,
    drafts_only: bool = False,
    lock_timeout: float = DEFAULT_TIMEOUT,
    progress: PublishProgress | None = None,
) -> PublishResult:
    listener = progress or Silent()
    waits: list[tuple[float, str]] = []
    with recorded(config, command) as run:

        def on_wait(seconds: float, reason: str, *, writer: str | None = None) -> None:
            waits.append((seconds, reason))
            run.wait(seconds, reason, writer=writer)
            listener.waiting(seconds, reason)

        lock = (
            nullcontext(None)
            if dry_run
            else writer_run(config, "publish", timeout=lock_timeout, on_wait=listener.blocked)
        )
        result = publish_posts(
            config,
            paths,
            Clients.of(config, run, on_wait=on_wait),
            lock,
            force=force,
            recreate=recreate,
            dry_run=dry_run,
            drafts_only=drafts_only,
            waits=waits,
            progress=listener,
        )
        records.publish(run, result)
    return result
