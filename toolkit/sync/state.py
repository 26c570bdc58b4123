"""A post's sync state, offline: what `toolkit.lock` says was last sent for it beside the
payload it would send now, without asking the publishing API (`plan` is what asks).

`PostCache` keeps parsed posts and their payload digests between the calls of a
long-running process; it reads only the content folder (a symlink leading out of it is
skipped), so an assistant's tools never read anything else.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from toolkit.config import Config
from toolkit.content import (
    Post,
    PostError,
    Problem,
    Severity,
    load_project_post,
    payload_for,
)
from toolkit.content.discover import excluded_by, find_posts
from toolkit.sync.ledger import Ledger, LedgerEntry

__all__ = [
    "PostCache",
    "PostDocument",
    "PostList",
    "PostSummary",
    "SyncState",
    "content_only",
    "post_document",
    "sync_states",
]


class SyncState(StrEnum):
    NEW = "new"  # not in toolkit.lock: never published from this project
    SYNCED = "synced"  # what publish would send is what was last sent
    MODIFIED = "modified"  # edited since it was last sent
    PENDING = "pending"  # an update was being sent when a run stopped; the next publish checks
    LOCAL = "local-only"  # a premium post: never sent to the publishing API


@dataclass(frozen=True)
class PostSummary:
    """A post of the content folder: its file, what its front matter says, its sync state."""

    # `toolkit.commands.results` reads it as it is: these descriptions are the MCP tools'
    # output schema.

    path: Annotated[str, Field(description="project-relative path; what the other tools take")]
    title: str
    published: Annotated[bool, Field(description="what the front matter says")]
    premium: bool
    slug: str
    tags: list[str]
    date: str | None  # ISO 8601
    description: str
    state: Annotated[
        SyncState,
        Field(
            description="sync state from toolkit.lock: new (never published), "
            "synced, modified (changed since last sent), pending (an "
            "update was interrupted), local-only (premium)"
        ),
    ]
    article_id: int | None = None  # the remote article, from toolkit.lock
    url: str | None = None
    last_sent_published: bool | None = None  # `published` as last sent


@dataclass
class PostList:
    posts: list[PostSummary] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # files that are not usable posts

    def count(self, state: SyncState) -> int:
        return sum(1 for post in self.posts if post.state is state)


@dataclass(frozen=True)
class PostDocument:
    summary: PostSummary
    front_matter: dict[str, Any]  # as YAML loaded it, dates as ISO strings
    body: str  # the Markdown after the front matter
    source: str  # the whole file


def content_only(config: Config) -> tuple[str, ...]:
    """The folders a post of an assistant's may lie in, for `find_posts`: the content
    folder alone (a symlink from it to elsewhere in the project is not followed)."""
    return (os.path.realpath(config.site.content_dir),)


def _iso(value: Any) -> Any:
    """Front matter made JSON-safe: dates and times as ISO strings, containers walked."""
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _iso(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_iso(v) for v in value]
    return value


Digest = Callable[[Post], str]


def _state(post: Post, entry: LedgerEntry | None, digest: Digest) -> SyncState:
    if post.premium:
        return SyncState.LOCAL
    if entry is None:
        return SyncState.NEW
    if entry.pending_digest is not None:
        return SyncState.PENDING
    return SyncState.SYNCED if digest(post) == entry.sent_digest else SyncState.MODIFIED


def post_summary(post: Post, ledger: Ledger, digest: Digest) -> PostSummary:
    entry = ledger.get(post.key)
    date = post.date
    return PostSummary(
        path=post.key,
        title=post.title,
        published=post.published,
        premium=post.premium,
        slug=post.slug,
        tags=post.tags,
        date=date.isoformat() if date else None,
        description=post.description,
        state=_state(post, entry, digest),
        article_id=entry.article_id if entry else None,
        url=entry.url if entry else None,
        last_sent_published=entry.published if entry else None,
    )


class PostCache:
    """Parsed posts and their payload digests, kept between the calls of a long-running
    process (the MCP server) for one configuration. A file is read again when its size,
    modification time, change time or inode differ: what any edit, replacement or `touch`
    changes."""

    def __init__(self, config: Config):
        self.config = config
        self._mutex = threading.Lock()
        self._posts: dict[Path, tuple[tuple[int, int, int, int], Post | Problem]] = {}
        self._digests: dict[Path, str] = {}

    def load(self) -> tuple[list[Post], list[Problem]]:
        """What `load_posts` gives, but only of the content folder (a symlink leading out
        of it is skipped, with a warning), reading only the files that changed."""
        config = self.config
        skipped: list[tuple[Path, str]] = []
        found = find_posts(
            config.site.content_dir, (), content_only(config), skipped, excluded_by(config)
        )
        posts: list[Post] = []
        problems: list[Problem] = []
        with self._mutex:
            kept: dict[Path, tuple[tuple[int, int, int, int], Post | Problem]] = {}
            for path in found:
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # gone since the walk
                identity = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                cached = self._posts.get(path)
                if cached is not None and cached[0] == identity:
                    item = cached[1]
                else:
                    self._digests.pop(path, None)
                    try:
                        item = load_project_post(config, path, config.relative(path))
                    except PostError as exc:
                        item = exc.problem
                kept[path] = (identity, item)
                if not isinstance(item, Post):
                    problems.append(item)
                elif item.has_front_matter:  # a file without one is not a post
                    posts.append(item)
            self._posts = kept
            self._digests = {p: d for p, d in self._digests.items() if p in kept}
        problems += [
            Problem(config.relative(path), 1, reason, Severity.WARNING) for path, reason in skipped
        ]
        return posts, problems

    def digest(self, post: Post) -> str:
        with self._mutex:
            known = self._digests.get(post.path)
        if known is None:
            known = payload_for(post, self.config).digest
            with self._mutex:
                self._digests[post.path] = known
        return known


def sync_states(config: Config, cache: PostCache) -> PostList:
    """Every post of `cache` with its sync state, in path order; files that cannot be
    parsed are problems (`path:line: message`) and the others are listed."""
    posts, problems = cache.load()
    ledger = Ledger.load(config.lock_path, config.forem.base_url)
    return PostList([post_summary(post, ledger, cache.digest) for post in posts], problems)


def post_document(config: Config, post: Post) -> PostDocument:
    """One post: its sync state, front matter, body and whole text."""
    ledger = Ledger.load(config.lock_path, config.forem.base_url)
    return PostDocument(
        post_summary(post, ledger, lambda p: payload_for(p, config).digest),
        _iso(post.meta),
        post.body,
        post.source,
    )
