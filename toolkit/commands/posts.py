"""`posts`: reading the posts as a writer's assistant asks about them, offline.

`list_posts` gives every post with its sync state, read from `toolkit.lock` (what was
last sent for it) and the payload it would send now, without asking the publishing API:
`plan` is the command that asks. `read_post` gives one post; `post_comments` its comment
thread as `toolkit mirror` left it in `content/_mirror/comments/`.

Paths come from callers outside the project's trust (an assistant acting on text it was
shown), so `content_paths` and `post_path` accept only paths inside the content folder,
symlinks resolved: a tool never reads or names anything else.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable, Iterable
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
    load_post,
    payload_for,
)
from toolkit.content.discover import is_post_path
from toolkit.errors import ContentError
from toolkit.redact import quoted
from toolkit.sync.lock import Lock, LockEntry

__all__ = [
    "MirroredComment",
    "PostCache",
    "PostComments",
    "PostDocument",
    "PostList",
    "PostSummary",
    "SyncState",
    "content_paths",
    "list_posts",
    "post_comments",
    "post_path",
    "read_post",
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


@dataclass(frozen=True)
class MirroredComment:
    """A comment of the mirror, as `read_comments` shows it."""

    id: str
    parent_id: str | None
    depth: Annotated[int, Field(description="0 for a comment on the post, 1 for a reply, ...")]
    author: str
    username: str
    created_at: str | None
    text: Annotated[str, Field(description="the comment without markup")]
    # cleaned like the site's comments (no script, style, event handler)
    body_html: Annotated[
        str, Field(description="the comment's HTML, cleaned as the site cleans it")
    ]


@dataclass(frozen=True)
class PostComments:
    path: str
    title: str
    mirror_file: str | None  # None: nothing mirrored for this post yet
    article_url: str | None
    comments: list[MirroredComment]  # thread order, replies after their parent
    total: int  # comments in the file, before `since` was applied


def _refuse(given: str | Path, config: Config, what: str) -> ContentError:
    folder = config.relative(config.site.content_dir)
    text = str(given)
    shown = text if text.isprintable() and len(text) <= 300 else quoted(text, 300)
    return ContentError(
        f"{shown}: {what} (paths are relative to the project folder and "
        f"lie inside {folder}/, as list_posts names them)"
    )


def _inside_content(config: Config, given: str | Path) -> Path:
    if "\x00" in str(given):  # no file has one: the OS refuses to look it up
        raise _refuse(given, config, "a path cannot hold a NUL character")
    path = Path(os.path.normpath(config.root / given))  # an absolute `given` stays itself
    real = Path(os.path.realpath(path))
    content = Path(os.path.realpath(config.site.content_dir))
    if real != content and not real.is_relative_to(content):
        raise _refuse(given, config, "not inside the content folder")
    return path


def content_only(config: Config) -> tuple[str, ...]:
    """The folders a post of an assistant's may lie in, for `find_posts`: the content
    folder alone (a symlink from it to elsewhere in the project is not followed)."""
    return (os.path.realpath(config.site.content_dir),)


def content_paths(config: Config, paths: Iterable[str | Path]) -> list[Path]:
    """The post files `paths` name (default: every post), each checked to lie inside the
    content folder, symlinks resolved: a symlink leading out of it is left out, as
    `read_post` refuses it. `ContentError` for a given path outside the content folder,
    and when no post is left (an empty list would mean every post to a command)."""
    from toolkit.content.discover import find_posts

    checked = [_inside_content(config, given) for given in paths]
    found = find_posts(config.site.content_dir, checked, content_only(config), [])
    if not found:
        raise ContentError(
            f"no post inside {config.relative(config.site.content_dir)}/ "
            f"{'at those paths' if checked else 'at all'}"
        )
    return found


def post_path(config: Config, given: str | Path) -> Path:
    """The post file `given` names, checked: inside the content folder, a `.md` file that
    is a post (no `_` or `.` part), and there."""
    path = _inside_content(config, given)
    real = Path(os.path.realpath(path))
    if not is_post_path(real, Path(os.path.realpath(config.site.content_dir))):
        raise _refuse(given, config, "not a post")
    if not real.is_file():
        raise _refuse(given, config, "no such post")
    return path


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


def _state(post: Post, entry: LockEntry | None, digest: Digest) -> SyncState:
    if post.premium:
        return SyncState.LOCAL
    if entry is None:
        return SyncState.NEW
    if entry.pending_digest is not None:
        return SyncState.PENDING
    return SyncState.SYNCED if digest(post) == entry.sent_digest else SyncState.MODIFIED


def _summary(post: Post, lock: Lock, digest: Digest) -> PostSummary:
    entry = lock.get(post.key)
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
        from toolkit.content.discover import excluded_by, find_posts

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
                        item = load_post(path, config.relative(path))
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


def list_posts(config: Config, *, cache: PostCache | None = None) -> PostList:
    """Every post with its sync state, in path order; files that cannot be parsed are
    problems (`path:line: message`) and the others are listed. A `cache` (a long-running
    caller's) spares reading the files that did not change."""
    cache = cache or PostCache(config)  # a fresh one reads every file
    posts, problems = cache.load()
    digest = cache.digest
    lock = Lock.load(config.lock_path, config.forem.base_url)
    return PostList([_summary(post, lock, digest) for post in posts], problems)


def _load(config: Config, given: str | Path) -> Post:
    path = post_path(config, given)
    try:
        return load_post(path, config.relative(path))
    except PostError as exc:
        raise ContentError(str(exc.problem)) from None


def read_post(config: Config, path: str | Path) -> PostDocument:
    """One post: its sync state, front matter, body and whole text."""
    post = _load(config, path)
    lock = Lock.load(config.lock_path, config.forem.base_url)
    return PostDocument(
        _summary(post, lock, lambda p: payload_for(p, config).digest),
        _iso(post.meta),
        post.body,
        post.source,
    )


def _comments_file(config: Config, post: Post) -> Path | None:
    """`_mirror/comments/<slug>.json`, else `<file stem>.json`: where `toolkit mirror`
    writes a post's thread, and where the site looks for it."""
    from toolkit.site.mirror_files import COMMENTS, MIRROR

    folder = config.site.content_dir / MIRROR / COMMENTS
    for name in (f"{post.slug}.json", f"{post.stem}.json"):
        candidate = folder / name
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def _flatten(
    items: Any, parent: str | None, depth: int, site: str | None, out: list[MirroredComment]
) -> None:
    import html

    import nh3

    from toolkit.site.mirror_files import parse_time
    from toolkit.site.sanitize import clean_html

    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        given = item.get("user")
        user: dict[str, Any] = given if isinstance(given, dict) else {}
        created = parse_time(item.get("created_at"))
        body = clean_html(str(item.get("body_html") or ""), site)
        comment_id = str(item.get("id_code") or item.get("id") or "")
        out.append(
            MirroredComment(
                id=comment_id,
                parent_id=parent,
                depth=depth,
                author=str(user.get("name") or user.get("username") or "Anonymous").strip(),
                username=str(user.get("username") or "").strip(),
                created_at=created.isoformat() if created else None,
                body_html=body,
                text=html.unescape(nh3.clean(body, tags=set())).strip(),
            )
        )
        _flatten(item.get("children"), comment_id, depth + 1, site, out)


def post_comments(
    config: Config, path: str | Path, *, since: dt.datetime | None = None
) -> PostComments:
    """The mirrored comments of one post, oldest thread first, replies after their parent;
    with `since`, only the comments written at or after it. Comment HTML comes from the
    publishing API and is cleaned as the site cleans it."""
    from urllib.parse import urlsplit

    from toolkit.site.mirror_files import MirrorError, check_comments, http_url, read_json

    post = _load(config, path)
    found = _comments_file(config, post)
    if found is None:
        return PostComments(post.key, post.title, None, None, [], 0)
    shown = config.relative(found)
    try:
        data = read_json(found)
        check_comments(data)
    except MirrorError as exc:
        raise ContentError(f"{shown}:{exc.line}: {exc}") from None
    article = data.get("article") if isinstance(data.get("article"), dict) else {}
    url = http_url(article.get("url"))
    site = None
    if url:
        parts = urlsplit(url)
        site = f"{parts.scheme}://{parts.netloc}"
    comments: list[MirroredComment] = []
    _flatten(data.get("comments"), None, 0, site, comments)
    total = len(comments)
    if since is not None:
        if since.tzinfo is None:
            since = since.replace(tzinfo=dt.UTC)
        comments = [
            c
            for c in comments
            if c.created_at is not None and dt.datetime.fromisoformat(c.created_at) >= since
        ]
    return PostComments(post.key, post.title, shown, url, comments, total)
