"""What the uniqueness rules need of every post, remembered by each file's stat.

A title, a slug and a canonical URL must be unique across the content folder, so checking
one post means knowing those three of every other post. Parsing a thousand front matters
for that takes longer than the rest of `toolkit check` together; instead, each post's three
values are kept in `.toolkit/known-posts.json` with the file's size, modification time and
inode, and a post is parsed again only when one of those changed. A file modified less
than `fsutil.RACY_NS` before the cache was saved is not trusted (an edit within the same tick of
the clock, keeping its size, would not change its stat): it is parsed again, and the cache
saved anew so that the next check can trust it.

Each post is read as publish reads it (`read`: for the generator `[source]` names); the
cache remembers how (`reading`), and reading otherwise parses every post again.

The file is a cache: one that cannot be read, or an entry of the wrong shape, is ignored
and the post parsed again; a reader never sees it half written, and it is written only when something changed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.content.post import load_post
from toolkit.content.problems import PostError
from toolkit.fsutil import quick_write, stat_trusted

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from toolkit.content.post import Post

CACHE = "known-posts.json"  # under the state folder
VERSION = 1  # bump when what is kept changes


@dataclass(frozen=True)
class KnownPost:
    """The values of a post that must be unique (the attributes `rules` reads of a Post)."""

    key: str
    title: str
    slug: str
    canonical_url: str | None


def _stat_of(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _entry(value: Any) -> tuple[list[int], KnownPost | None] | None:
    """A cache entry, or None when it is not of the expected shape."""
    if not isinstance(value, dict):
        return None
    stat, post = value.get("stat"), value.get("post")
    if not (isinstance(stat, list) and len(stat) == 3 and all(type(n) is int for n in stat)):
        return None
    if post is None:  # a file that is not a usable post
        return stat, None
    if not isinstance(post, list) or len(post) != 4:
        return None
    key, title, slug, canonical = post
    if not (
        isinstance(key, str)
        and isinstance(title, str)
        and isinstance(slug, str)
        and (canonical is None or isinstance(canonical, str))
    ):
        return None
    return stat, KnownPost(key, title, slug, canonical)


def _read(cache: Path, reading: str) -> tuple[dict[str, Any], int]:
    """The cache's entries and when it was saved (nanoseconds since the epoch); none when
    its posts were read otherwise than `reading` says."""
    try:
        document = json.loads(cache.read_bytes())
    except (OSError, ValueError):
        return {}, 0
    if (
        not isinstance(document, dict)
        or document.get("version") != VERSION
        or document.get("reading", "") != reading
    ):
        return {}, 0
    posts, saved = document.get("posts"), document.get("saved")
    if not isinstance(posts, dict) or type(saved) is not int:
        return {}, 0
    return posts, saved


def known_posts(
    state_dir: Path,
    found: list[tuple[Path, str]],
    read: Callable[[Post], Post] | None = None,
    reading: str = "",
) -> list[KnownPost]:
    """The unique values of the posts `found` ((path, key) pairs), parsing only those whose
    file changed since the cache saw it; posts that cannot be parsed are left out. `read`:
    how a parsed post is read (`sources.reader`), which `reading` names for the cache."""
    cache = state_dir / CACHE
    before, saved = _read(cache, reading)
    now: dict[str, Any] = {}
    known: list[KnownPost] = []
    racy = False
    started = time.time_ns()
    for path, key in found:
        stat = _stat_of(path)
        if stat is None:
            continue
        entry = _entry(before.get(key))
        trusted = stat_trusted(stat[1], saved)
        racy = racy or not stat_trusted(stat[1], started)
        if (
            trusted
            and entry is not None
            and entry[0] == stat
            and (entry[1] is None or entry[1].key == key)
        ):
            post = entry[1]
        else:
            try:
                parsed = load_post(path, key)
            except PostError:
                post = None
            else:  # a file without a front matter is not a post
                if read is not None and parsed.has_front_matter:
                    parsed = read(parsed)
                post = (
                    KnownPost(key, parsed.title, parsed.slug, parsed.canonical_url)
                    if parsed.has_front_matter
                    else None
                )
        now[key] = {
            "stat": stat,
            "post": None if post is None else [post.key, post.title, post.slug, post.canonical_url],
        }
        if post is not None:
            known.append(post)
    if now != before or racy:
        document = {"version": VERSION, "saved": started, "posts": now}
        if reading:
            document["reading"] = reading
        _write(cache, document)
    return known


def _write(cache: Path, document: dict[str, Any]) -> None:
    """Save the cache; one that cannot be saved only makes the next check slower."""
    try:
        quick_write(cache, json.dumps(document, separators=(",", ":")).encode())
    except OSError:
        pass
