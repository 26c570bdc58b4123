"""A post's mirrored comment thread, flattened for a reader: the file `toolkit mirror`
left in `content/_mirror/comments/`, read back as a list in thread order (replies after
their parent), each comment's HTML cleaned as the site cleans it.
"""

from __future__ import annotations

import datetime as dt
import html
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import nh3
from pydantic import Field

from toolkit.config import Config
from toolkit.content import Post
from toolkit.content.accounts import writer_folder
from toolkit.errors import ContentError, UnsafeNameError
from toolkit.fsutil import path_inside, safe_name
from toolkit.mirror_layout import COMMENTS, MIRROR

__all__ = ["MirroredComment", "PostComments", "comments_of"]


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


def _comments_file(config: Config, post: Post) -> Path | None:
    """`_mirror/comments/<slug>.json`, else `<file stem>.json`: where `toolkit mirror`
    writes a post's thread, and where the site looks for it. The slug comes from the front
    matter: a name that is not a plain file of that folder is not looked for."""
    folder = config.site.content_dir / MIRROR / COMMENTS
    writer = writer_folder(config, post.path)
    if writer is not None:  # a team's repository: the writer's own mirror folder
        try:
            folder = path_inside(config.site.content_dir / MIRROR, safe_name(writer)) / COMMENTS
        except UnsafeNameError:
            return None
    for name in (f"{post.slug}.json", f"{post.stem}.json"):
        try:
            candidate = path_inside(folder, name)
        except UnsafeNameError:
            continue
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def _flatten(
    items: Any, parent: str | None, depth: int, site: str | None, out: list[MirroredComment]
) -> None:
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


def comments_of(config: Config, post: Post, *, since: dt.datetime | None = None) -> PostComments:
    """The mirrored comments of one post, oldest thread first, replies after their parent;
    with `since`, only the comments written at or after it. Comment HTML comes from the
    publishing API and is cleaned as the site cleans it."""
    from toolkit.site.mirror_files import MirrorError, check_comments, http_url, read_json

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
