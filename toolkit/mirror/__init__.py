"""Mirroring what lives on the publishing API back into `content/_mirror/`.

The site shows it (comments under posts, a reading-list page); git keeps its history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.clients import Clients
from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.config import Config
from toolkit.content import load_posts
from toolkit.content.accounts import Account, account_of, writer_folders
from toolkit.content.hosting import canonical_url
from toolkit.errors import UnsafeNameError
from toolkit.fsutil import path_inside, safe_name
from toolkit.mirror.comments import MirrorReport, mirror_comments, mirror_podcast_comments
from toolkit.mirror.readinglist import mirror_readinglist
from toolkit.mirror_layout import COMMENTS, PODCASTS, READING_LIST
from toolkit.mirror_layout import mirror_folder as folder_in
from toolkit.sync.engine import MissingKey
from toolkit.sync.identity import match_posts
from toolkit.sync.ledger import Ledger
from toolkit.sync.remote import RemoteState


@dataclass
class MirrorResult:
    comments: MirrorReport | None = None
    podcast: MirrorReport | None = None
    readinglist_items: int | None = None
    readinglist_written: bool = False
    requests: int = 0
    changed: list[str] = field(default_factory=list)
    # Of `changed`: the files that were not there before, and those that are gone.
    created: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # A team's repository: the writers whose key is not set (their mirror was skipped).
    missing_keys: list[MissingKey] = field(default_factory=list)
    team: bool = False

    def add(self, other: MirrorResult) -> None:
        """Take in another account's mirror (a team's repository)."""
        self.comments = _sum(self.comments, other.comments)
        self.podcast = _sum(self.podcast, other.podcast)
        if other.readinglist_items is not None:
            self.readinglist_items = (self.readinglist_items or 0) + other.readinglist_items
        self.readinglist_written = self.readinglist_written or other.readinglist_written
        self.requests += other.requests
        self.changed += other.changed
        self.created += other.created
        self.removed += other.removed

    def change_of(self, path: str) -> str:
        """ "created", "removed" or "updated": what this run did to a changed file."""
        return (
            "created" if path in self.created else "removed" if path in self.removed else "updated"
        )


def _sum(one: MirrorReport | None, other: MirrorReport | None) -> MirrorReport | None:
    if one is None or other is None:
        return one or other
    return MirrorReport(
        fetched=one.fetched + other.fetched,
        written=one.written + other.written,
        removed=one.removed + other.removed,
        unchanged=one.unchanged + other.unchanged,
        requests=one.requests + other.requests,
    )


def mirror_folder(config: Config, account: Account | None = None) -> Path:
    """`content/_mirror`; a team writer's: `content/_mirror/<writer>`."""
    folder = folder_in(config.site.content_dir)
    if account is not None and account.writer is not None:
        return path_inside(folder, safe_name(account.writer))
    return folder


def slug_names(
    config: Config, remote: RemoteState, account: Account | None = None
) -> dict[int, str]:
    """File stem for each remote article: its local post's slug, else its remote slug,
    reduced to a safe file name (the article id when nothing is left of it). Two articles
    never share a stem: the one without a local post gets its id added. `account`: a
    team writer's, whose posts alone are matched."""
    posts, _ = load_posts(config)
    if account is not None:
        posts = [post for post in posts if account.owns(config, post.key)]
    lock = Ledger.of(config)
    matches = match_posts(remote, posts, lock, lambda p: canonical_url(p, config.site.url))
    by_key = {post.key: post for post in posts}
    local = {m.article.id: by_key[key].slug for key, m in matches.items() if m.article is not None}
    remote_only = {a.id: a.slug for a in remote.articles if a.id not in local}
    names: dict[int, str] = {}
    used: set[str] = set()
    for article_id, text in [*sorted(local.items()), *sorted(remote_only.items())]:
        try:
            name = safe_name(text)
        except UnsafeNameError:
            name = str(article_id)
        if name in used:
            name = f"{name}-{article_id}"
        used.add(name)
        names[article_id] = name
    return names


def run_mirror(
    config: Config,
    client: ForemClient,
    *,
    comments: bool = True,
    readinglist: bool = True,
    podcast: str | None = None,
    full: bool = False,
    account: Account | None = None,
) -> MirrorResult:
    """Mirror the account of `client`; `account`: a team writer's, into their own folder
    (`mirror_folder`)."""
    result = MirrorResult()
    before = client.requests_made
    folder = mirror_folder(config, account)
    existed = {config.relative(p) for p in folder.rglob("*.json")} if folder.is_dir() else set()
    if comments:
        remote = RemoteState(client.iter_my_articles("all"))
        names = slug_names(config, remote, account)

        def name_of(article: Article) -> str:
            return names[article.id]

        result.comments = mirror_comments(
            client,
            remote.articles,
            folder / COMMENTS,
            name_of,
            full=full,
            relative=lambda p: config.relative(p),
        )
        result.changed += result.comments.written + result.comments.removed
    if podcast:
        result.podcast = mirror_podcast_comments(
            client, podcast, folder / PODCASTS, relative=lambda p: config.relative(p)
        )
        result.changed += result.podcast.written
    if readinglist:
        path = folder / READING_LIST
        result.readinglist_items, result.readinglist_written = mirror_readinglist(client, path)
        if result.readinglist_written:
            result.changed.append(config.relative(path))
    result.requests = client.requests_made - before
    result.created = [p for p in result.changed if p not in existed]
    result.removed = [p for p in result.changed if p in existed and not (config.root / p).exists()]
    return result


def mirror_accounts(
    config: Config,
    clients: Clients,
    *,
    comments: bool = True,
    readinglist: bool = True,
    podcast: str | None = None,
    full: bool = False,
) -> MirrorResult:
    """Mirror the project's account (`run_mirror`), or in a team's repository each
    writer's comments and reading list with their own key, into
    `content/_mirror/<writer>/` (the posts outside every writer's folder, with
    FOREM_API_KEY, into `content/_mirror/` as for one account). The podcast's threads
    are mirrored once, with the first key. A writer without a key is a `MissingKey`."""
    if config.writers is None:
        with clients.forem() as client:
            return run_mirror(
                config,
                client,
                comments=comments,
                readinglist=readinglist,
                podcast=podcast,
                full=full,
            )
    result = MirrorResult(team=True)
    accounts = [
        account_of(config, config.site.content_dir / f / "_") for f in writer_folders(config)
    ]
    project = account_of(config, config.site.content_dir / "_")
    if project.key is not None:
        accounts.append(project)
    for account in accounts:
        if account.key is None:
            result.missing_keys.append(MissingKey(account.label, account.variable, 0))
            continue
        with clients.forem_of(account) as client:
            result.add(
                run_mirror(
                    config,
                    client,
                    comments=comments,
                    readinglist=readinglist,
                    podcast=podcast,
                    full=full,
                    account=account,
                )
            )
        podcast = None  # once
    return result
