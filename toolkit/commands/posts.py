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

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.content import Post, PostError, load_project_post
from toolkit.content.discover import find_posts, is_post_path, post_suffixes
from toolkit.errors import ContentError
from toolkit.mirror.threads import MirroredComment, PostComments, comments_of
from toolkit.redact import quoted
from toolkit.sync.state import (
    PostCache,
    PostDocument,
    PostList,
    PostSummary,
    SyncState,
    content_only,
    post_document,
    sync_states,
)

if TYPE_CHECKING:  # pragma: no cover
    import datetime as dt

__all__ = [
    "MirroredComment",
    "PostCache",
    "PostComments",
    "PostDocument",
    "PostList",
    "PostSummary",
    "SyncState",
    "content_only",
    "content_paths",
    "list_posts",
    "post_comments",
    "post_path",
    "read_post",
]


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


def content_paths(config: Config, paths: Iterable[str | Path]) -> list[Path]:
    """The post files `paths` name (default: every post), each checked to lie inside the
    content folder, symlinks resolved: a symlink leading out of it is left out, as
    `read_post` refuses it. `ContentError` for a given path outside the content folder,
    and when no post is left (an empty list would mean every post to a command)."""
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
    content = Path(os.path.realpath(config.site.content_dir))
    if not is_post_path(real, content, suffixes=post_suffixes(config)):
        raise _refuse(given, config, "not a post")
    if not real.is_file():
        raise _refuse(given, config, "no such post")
    return path


def list_posts(config: Config, *, cache: PostCache | None = None) -> PostList:
    """Every post with its sync state, in path order; files that cannot be parsed are
    problems (`path:line: message`) and the others are listed. A `cache` (a long-running
    caller's) spares reading the files that did not change."""
    return sync_states(config, cache or PostCache(config))  # a fresh one reads every file


def _load(config: Config, given: str | Path) -> Post:
    path = post_path(config, given)
    try:
        return load_project_post(config, path, config.relative(path))
    except PostError as exc:
        raise ContentError(str(exc.problem)) from None


def read_post(config: Config, path: str | Path) -> PostDocument:
    """One post: its sync state, front matter, body and whole text."""
    return post_document(config, _load(config, path))


def post_comments(
    config: Config, path: str | Path, *, since: dt.datetime | None = None
) -> PostComments:
    """The mirrored comments of one post, oldest thread first, replies after their parent;
    with `since`, only the comments written at or after it. Comment HTML comes from the
    publishing API and is cleaned as the site cleans it."""
    return comments_of(config, _load(config, path), since=since)
