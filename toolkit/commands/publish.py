"""`plan` and `publish`: what syncing the posts would do, and doing it.

The command builds the client with a wait listener that both keeps every pause for the
result and tells the caller's progress, holds the run lock for a publish that writes,
and lets the engine do the rest. Each call is a recorded run (`toolkit.runlog`): its
requests, pauses and post outcomes go to the run log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.clients import forem_client
from toolkit.commands import records
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.engine import PublishProgress, PublishResult, Silent, SyncEngine
from toolkit.sync.runlock import DEFAULT_TIMEOUT, writer_run
from toolkit.sync.team import publish_team, resolve_organization

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.forem import ForemClient
    from toolkit.content.accounts import Account

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

        def on_wait(seconds: float, reason: str, writer: str | None = None) -> None:
            waits.append((seconds, reason))
            run.wait(seconds, reason, writer=writer)
            listener.waiting(seconds, reason)

        if config.writers is not None:  # a team's: each writer's posts with their key
            result = _publish_team(
                config,
                paths,
                on_wait=on_wait,
                on_request=run.request,
                listener=listener,
                waits=waits,
                force=force,
                recreate=recreate,
                dry_run=dry_run,
                drafts_only=drafts_only,
                lock_timeout=lock_timeout,
            )
            records.publish(run, result)
            return result
        with forem_client(config, on_wait=on_wait, on_request=run.request) as client:
            org = resolve_organization(config, client)
            engine = SyncEngine(config, client, progress=listener, organization=org)
            if dry_run:
                result = engine.publish(
                    paths,
                    force=force,
                    recreate=recreate,
                    dry_run=True,
                    drafts_only=drafts_only,
                    waits=waits,
                )
            else:
                with writer_run(
                    config, "publish", timeout=lock_timeout, on_wait=listener.blocked
                ) as lock_wait:
                    result = engine.publish(
                        paths,
                        force=force,
                        recreate=recreate,
                        drafts_only=drafts_only,
                        waits=waits,
                        lock_wait=lock_wait,
                    )
        records.publish(run, result)
    return result


def _publish_team(
    config: Config,
    paths: Iterable[str | Path],
    *,
    on_wait: Callable[[float, str, str | None], None],
    on_request: Callable[..., None],
    listener: PublishProgress,
    waits: list[tuple[float, str]],
    force: bool,
    recreate: bool,
    drafts_only: bool,
    dry_run: bool,
    lock_timeout: float,
) -> PublishResult:
    """A team's publish: one client per writer's key (`sync.team`); its requests and
    waits are recorded under the writer's name (`on_request(report, writer=...)`)."""

    def client_for(account: Account) -> ForemClient:
        writer = account.writer
        return forem_client(
            config,
            on_wait=lambda seconds, reason: on_wait(seconds, reason, writer),
            on_request=lambda report: on_request(report, writer=writer),
            key=account.key,
            key_source=account.source,
        )

    if dry_run:
        return publish_team(
            config,
            paths,
            client_for,
            force=force,
            recreate=recreate,
            drafts_only=drafts_only,
            dry_run=True,
            waits=waits,
            progress=listener,
        )
    with writer_run(config, "publish", timeout=lock_timeout, on_wait=listener.blocked) as lock_wait:
        return publish_team(
            config,
            paths,
            client_for,
            force=force,
            recreate=recreate,
            drafts_only=drafts_only,
            waits=waits,
            lock_wait=lock_wait,
            progress=listener,
        )
