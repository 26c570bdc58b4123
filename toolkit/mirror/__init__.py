"""Mirroring what lives on the publishing API back into `content/_mirror/`.

The site shows it (comments under posts, a reading-list page); git keeps its history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.config import Config
from toolkit.content import load_posts
from toolkit.content.hosting import canonical_url
from toolkit.errors import UnsafeNameError
from toolkit.fsutil import safe_name
from toolkit.mirror.comments import MirrorReport, mirror_comments, mirror_podcast_comments
from toolkit.mirror.readinglist import mirror_readinglist
from toolkit.mirror_layout import COMMENTS, PODCASTS, READING_LIST
from toolkit.mirror_layout import mirror_folder as folder_in
from toolkit.sync.ledger import Ledger
from toolkit.sync.remote import RemoteState, match_posts


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

    def change_of(self, path: str) -> str:
        """ "created", "removed" or "updated": what this run did to a changed file."""
        return (
            "created" if path in self.created else "removed" if path in self.removed else "updated"
        )


def mirror_folder(config: Config) -> Path:
    return folder_in(config.site.content_dir)


def slug_names(config: Config, remote: RemoteState) -> dict[int, str]:
    """File stem for each remote article: its local post's slug, else its remote slug,
    reduced to a safe file name (the article id when nothing is left of it). Two articles
    never share a stem: the one without a local post gets its id added."""
    posts, _ = load_posts(config)
    lock = Ledger.load(config.lock_path, config.forem.base_url)
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
) -> MirrorResult:
    result = MirrorResult()
    before = client.requests_made
    folder = mirror_folder(config)
    existed = {config.relative(p) for p in folder.rglob("*.json")} if folder.is_dir() else set()
    if comments:
        remote = RemoteState(client.iter_my_articles("all"))
        names = slug_names(config, remote)

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
