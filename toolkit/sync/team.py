"""A publish (and a pull) of a team's repository (`[writers]`): each writer's posts with their own key.

The posts are grouped by account (`content.accounts`: the writer whose folder holds a
post). Each account with a key gets its own client, so its own rate limiters (dev.to's
limits are per key), its own read of `/api/articles/me/all`, and its own engine: a post
binds only to its writer's articles and is only ever sent with its writer's key. The
accounts share one `Ledger`, whose entries record the account of each article. An
account whose key is not set is skipped with one `MissingKey`; the others go, and the
result is not ok.

The posts are checked once; the accounts then plan, a few at once (their list reads
wait on the network), so that the caller is told the whole plan once; then each
account's writes run, one account after the other (each inside its own limits).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from toolkit.clients import Clients
from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.content import check
from toolkit.content.accounts import Account, account_of, accounts_of, writer_folders
from toolkit.content.discover import excluded_by, find_posts
from toolkit.errors import ApiError, ConfigError
from toolkit.localfiles import config_folders
from toolkit.redact import quoted, redact_url
from toolkit.sync.engine import (
    MissingKey,
    Outcome,
    PublishProgress,
    PublishResult,
    Silent,
    SyncEngine,
)
from toolkit.sync.ledger import Ledger
from toolkit.sync.plan import PostPlan
from toolkit.sync.planner import HomeOrganization
from toolkit.sync.pull import PullResult, pull_articles

PLANNERS = 4  # accounts planned at once (each one list read)


def team_accounts(
    config: Config, paths: Sequence[str | Path], ledger: Ledger | None = None
) -> dict[Account, int]:
    """The accounts a publish of `paths` (default: every post) concerns, with how many
    posts each has; a writer whose folder holds no post, or whose only trace is a lock
    entry (their folder is gone: its entries are said as gone), counts 0 posts."""
    found = find_posts(
        config.site.content_dir, paths, config_folders(config), [], excluded_by(config)
    )
    counts: dict[Account, int] = {}
    for path in found:
        account = account_of(config, path)
        counts[account] = counts.get(account, 0) + 1
    if not paths:
        for folder in writer_folders(config):
            account = account_of(config, config.site.content_dir / folder / "_")
            counts.setdefault(account, 0)
        for key in ledger.entries if ledger is not None else ():
            counts.setdefault(account_of(config, key), 0)
    return dict(sorted(counts.items(), key=lambda item: item[0].folder_key))


def resolve_organization(config: Config, client: ForemClient) -> HomeOrganization | None:
    """`[forem] organization`, looked up once (its id and username); None when unset."""
    ref = config.forem.organization
    if ref is None:
        return None
    try:
        org_id, username = client.organization_id(ref)
    except ApiError as exc:
        if exc.status != 404:
            raise
        raise ConfigError(
            [
                f"{config.path.name}: forem.organization: no organisation {quoted(str(ref), 80)} "
                f"on {redact_url(config.forem.base_url)}"
            ]
        ) from None
    return HomeOrganization(org_id, username)


def publish_posts(
    config: Config,
    paths: Iterable[str | Path],
    clients: Clients,
    lock: contextlib.AbstractContextManager[str | None],
    *,
    force: bool = False,
    recreate: bool = False,
    dry_run: bool = False,
    drafts_only: bool = False,
    waits: Sequence[tuple[float, str]] = (),
    progress: PublishProgress | None = None,
) -> PublishResult:
    """Plan (and unless `dry_run`, write) the posts with the project's key, or a team's
    with each writer's (`publish_team`). `lock`: the caller's hold of the run lock
    (entered once the client is made and `[forem] organization` looked up; a team's,
    before its clients are made), yielding what it was told while it waited."""
    if config.writers is not None:
        with lock as lock_wait:
            return publish_team(
                config,
                paths,
                clients,
                force=force,
                recreate=recreate,
                dry_run=dry_run,
                drafts_only=drafts_only,
                waits=waits,
                lock_wait=lock_wait,
                progress=progress,
            )
    with clients.forem() as client:
        org = resolve_organization(config, client)
        engine = SyncEngine(config, client, progress=progress, organization=org)
        with lock as lock_wait:
            return engine.publish(
                paths,
                force=force,
                recreate=recreate,
                dry_run=dry_run,
                drafts_only=drafts_only,
                waits=waits,
                lock_wait=lock_wait,
            )


def publish_team(
    config: Config,
    paths: Iterable[str | Path],
    clients: Clients,
    *,
    force: bool = False,
    recreate: bool = False,
    dry_run: bool = False,
    drafts_only: bool = False,
    waits: Sequence[tuple[float, str]] = (),
    lock_wait: str | None = None,
    progress: PublishProgress | None = None,
) -> PublishResult:
    """Plan (and unless `dry_run`, write) every account's posts with its own key."""
    listener = progress or Silent()
    paths = list(paths)
    ledger = Ledger.of(config)
    accounts = team_accounts(config, paths, ledger)
    missing = [
        MissingKey(account.label, account.variable, posts)
        for account, posts in accounts.items()
        if account.key is None and posts
    ]
    requests = 0
    with contextlib.ExitStack() as stack:
        writers: list[tuple[Account, ForemClient]] = [
            (account, stack.enter_context(clients.forem_of(account)))
            for account in accounts
            if account.key is not None
        ]
        org: HomeOrganization | None = None
        if writers and config.forem.organization is not None:
            org = resolve_organization(config, writers[0][1])
        before = {id(client): client.requests_made for _, client in writers}
        checked = check(config, paths) if writers else None  # every account's posts, once
        made = [
            SyncEngine(
                config, client, progress=listener, ledger=ledger, account=account, organization=org
            )
            for account, client in writers
        ]

        def plan(engine: SyncEngine) -> list[PostPlan]:
            return engine.plan(
                paths, force=force, recreate=recreate, drafts_only=drafts_only, checked=checked
            )

        # The list reads mostly wait on the network: a few accounts are read at once.
        with ThreadPoolExecutor(max(1, min(PLANNERS, len(made))), "account") as planners:
            engines = list(zip(made, planners.map(plan, made), strict=True))
        all_plans = [p for _, plans in engines for p in plans]
        listener.planned(all_plans)
        outcomes: list[Outcome] = []
        for engine, plans in engines:
            outcomes += engine.execute(plans, dry_run=dry_run)
        requests = sum(client.requests_made - before[id(client)] for _, client in writers)
    return PublishResult(
        outcomes=outcomes,
        dry_run=dry_run,
        waits=list(waits),
        requests=requests,
        lock_wait=lock_wait,
        team=True,
        missing_keys=missing,
    )


def push_team_drafts(
    config: Config, paths: Iterable[Path], client_of: Callable[[Account], ForemClient]
) -> PublishResult:
    """A watch's push in a team's repository: each writer's saved drafts with their own
    key (`client_of(account)`: the caller's client for the writer, kept for the session);
    a writer without one is a `MissingKey`. The caller holds the run lock."""
    outcomes: list[Outcome] = []
    missing: list[MissingKey] = []
    requests = 0
    for account, keys in accounts_of(config, [str(p) for p in paths]).items():
        if account.key is None:
            missing.append(MissingKey(account.label, account.variable, len(keys)))
            continue
        engine = SyncEngine(config, client_of(account), account=account)
        result = engine.publish(keys, drafts_only=True)
        outcomes += result.outcomes
        requests += result.requests
    return PublishResult(outcomes=outcomes, requests=requests, team=True, missing_keys=missing)


def pull_posts(
    config: Config,
    clients: Clients,
    lock: contextlib.AbstractContextManager[str | None],
    *,
    overwrite: bool = False,
    merge: bool = False,
    dry_run: bool = False,
) -> PullResult:
    """Pull the project's account's articles, or a team's writers' each with their own
    key (`pull_team`). `lock` as for `publish_posts` (entered once the client is made;
    a team's, before)."""
    if config.writers is not None:
        with lock as lock_wait:
            return pull_team(
                config,
                clients,
                overwrite=overwrite,
                merge=merge,
                dry_run=dry_run,
                lock_wait=lock_wait,
            )
    with clients.forem() as client, lock as lock_wait:
        return pull_articles(
            config, client, overwrite=overwrite, merge=merge, dry_run=dry_run, lock_wait=lock_wait
        )


def pull_team(
    config: Config,
    clients: Clients,
    *,
    overwrite: bool = False,
    merge: bool = False,
    dry_run: bool = False,
    lock_wait: str | None = None,
) -> PullResult:
    """A team's pull: each writer's articles with their own key, into their folder (the
    project's account, when posts outside every writer's folder or its lock entries say
    there is one, into the posts folder). A writer without a key is a `MissingKey`; the
    others are pulled. The accounts share one `Ledger`; the caller holds the run lock."""
    ledger = Ledger.of(config)
    result = PullResult(lock_wait=lock_wait, dry_run=dry_run, team=True)
    for account, posts in team_accounts(config, [], ledger).items():
        if account.key is None:
            result.missing_keys.append(MissingKey(account.label, account.variable, posts))
            continue
        with clients.forem_of(account) as client:
            pulled = pull_articles(
                config,
                client,
                overwrite=overwrite,
                merge=merge,
                dry_run=dry_run,
                account=account,
                ledger=ledger,
            )
        result.outcomes += pulled.outcomes
    return result
