"""The rules a post must follow: every one the API would answer 422 for, and the local ones.

The API's rules (reference/NOTES.md): title required and at most 128 characters; at most 4
tags, each letters and digits only, at most 30 characters; body at most 800 KB; titles
`canonical_url` unique and http(s); `published` exactly true or false;
no future publication date. Local rules: relative images exist on disk, slugs are unique,
toolkit's own keys have the right types. Unknown keys are warnings, and so are dev.to's
Liquid tags the site cannot render (`liquid.scan`) and a title another post has too
(Forem keeps one user from having two articles of the same title *and* body only; the
sync tells such posts apart by toolkit.lock, `id:` or canonical_url, never by title).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from toolkit.content import images
from toolkit.content.post import KNOWN_KEYS, Post, split_tags
from toolkit.content.problems import Problem, Severity
from toolkit.redact import quoted

MAX_TITLE = 128
MAX_TAGS = 4
MAX_TAG_LENGTH = 30
MAX_BODY_BYTES = 800 * 1024
SHOWN = 80  # characters of a value from a post shown in a message
TAG_PATTERN = re.compile(r"^[a-z0-9]+$")
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _http_url(value: str) -> bool:
    """Whether `value` is an absolute http(s) URL with a host, and no control character
    (`urlsplit` silently drops tabs and newlines, and refuses a broken `[` host)."""
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port out of range or not a number raises here
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def validate_post(
    post: Post,
    content_dir: Path,
    *,
    assets_base_url: str | None = None,
    now: dt.datetime | None = None,
) -> list[Problem]:
    """Problems of one post on its own (the rules across posts are in `validate_posts`)."""
    problems: list[Problem] = []
    meta = post.meta

    def error(key: str, message: str, line: int | None = None) -> None:
        problems.append(Problem(post.key, line or post.line_of(key), f"{key}: {message}"))

    def warn(key: str, message: str, line: int | None = None) -> None:
        problems.append(
            Problem(post.key, line or post.line_of(key), f"{key}: {message}", Severity.WARNING)
        )

    title = meta.get("title")
    if title is None or (isinstance(title, str) and not title.strip()):
        error("title", "missing; every post needs a title")
    elif not isinstance(title, str):
        error("title", "must be text (put it in quotes)")
    elif len(title.strip()) > MAX_TITLE:
        error("title", f"{len(title.strip())} characters; the API accepts at most {MAX_TITLE}")

    for key in ("published", "premium", "pinned"):
        if key in meta and not isinstance(meta[key], bool):
            error(key, f"must be true or false, not {meta[key]!r}")

    if "tags" in meta and meta["tags"] is not None:
        raw = meta["tags"]
        if not isinstance(raw, str | list):
            error("tags", "must be a list or a comma-separated string")
        else:
            tags = split_tags(raw)
            unique = list(dict.fromkeys(t.lower() for t in tags))
            if len(unique) > MAX_TAGS:
                error("tags", f"{len(unique)} tags; the API accepts at most {MAX_TAGS}")
            for tag in unique:
                if not TAG_PATTERN.match(tag):
                    error("tags", f"{tag!r} must be letters and digits only (no hyphens or spaces)")
                elif len(tag) > MAX_TAG_LENGTH:
                    error("tags", f"{tag!r} is longer than {MAX_TAG_LENGTH} characters")

    for key in ("description", "series"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            error(key, "must be text")

    canonical = meta.get("canonical_url")
    if canonical is not None:
        if not isinstance(canonical, str) or not _http_url(canonical):
            shown = (
                quoted(canonical, SHOWN) if isinstance(canonical, str) else repr(canonical)[:SHOWN]
            )
            error("canonical_url", f"must be an absolute http(s) URL, not {shown}")

    if "date" in meta and meta["date"] is not None:
        date = post.date
        if date is None:
            error("date", f"not a date: {meta['date']!r} (use YYYY-MM-DD or an ISO 8601 time)")
        elif post.published and date > (now or dt.datetime.now(dt.UTC)):
            error("date", "in the future; the API refuses a future publication date")

    slug = meta.get("slug")
    if slug is not None and (not isinstance(slug, str) or not SLUG_PATTERN.match(slug)):
        error("slug", "must be lower-case letters, digits and single hyphens")

    for key in ("organization_id", "id"):
        value = meta.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            error(
                key, "must be a positive integer" + (" (the article's id)" if key == "id" else "")
            )

    for key in meta:
        if key not in KNOWN_KEYS:
            warn(key, "unknown front matter key; the site and the API ignore it")

    size = len(post.source.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        problems.append(
            Problem(post.key, 1, f"body: {size // 1024} KB; the API accepts at most 800 KB")
        )

    if "{%" in post.body:  # Liquid tags (none: `liquid.scan` finds nothing)
        from toolkit.content import liquid

        for finding in liquid.scan(post.body):
            problems.append(
                Problem(
                    post.key, post.body_line + finding.line - 1, finding.message, Severity.WARNING
                )
            )

    cover = meta.get("cover_image")
    if cover is not None and not isinstance(cover, str):
        error("cover_image", "must be a URL or a path")
    elif isinstance(cover, str) and images.is_relative(cover.strip()):
        problems.extend(
            _check_image(
                post,
                cover.strip(),
                post.line_of("cover_image"),
                content_dir,
                assets_base_url,
                "cover_image",
            )
        )
    checked: dict[str, list[Problem]] = {}  # each source once, however often it is used
    for ref in images.find_images(post.body, post.body_line):
        if images.is_relative(ref.src):
            if ref.src not in checked:
                checked[ref.src] = _check_image(
                    post, ref.src, 0, content_dir, assets_base_url, "image"
                )
            problems.extend(replace(p, line=ref.line) for p in checked[ref.src])
    return problems


def _check_image(
    post: Post, src: str, line: int, content_dir: Path, assets_base_url: str | None, label: str
) -> list[Problem]:
    why = images.unusable(src)
    if why is not None:
        return [
            Problem(post.key, line, f"{label}: {quoted(src, SHOWN)} cannot be a file name: {why}")
        ]
    file = images.resolve(src, post.path, content_dir)
    inside = images.asset_path(file, content_dir) is not None
    if not inside and images.asset_path(post.path, content_dir) is not None:
        # Said without looking at the file: nothing outside the folder is published.
        if (
            images.asset_path(images.written_path(src, post.path, content_dir), content_dir)
            is not None
        ):
            return [
                Problem(
                    post.key,
                    line,
                    f"{label}: {src} is a symlink to a file outside "
                    "the content folder, not followed",
                )
            ]
        return [Problem(post.key, line, f"{label}: {src} lies outside the content folder")]
    if not file.is_file():
        return [Problem(post.key, line, f"{label}: {src} not found")]
    if not assets_base_url:
        return [
            Problem(
                post.key,
                line,
                f"{label}: {src} is relative; set [site] url or assets_base_url so the API "
                "receives an absolute URL",
                Severity.WARNING,
            )
        ]
    return []


class Unique(Protocol):
    """What the uniqueness rules read of a post (a `Post`, or a `known.KnownPost`)."""

    @property
    def key(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def slug(self) -> str: ...
    @property
    def canonical_url(self) -> str | None: ...


def validate_posts(
    posts: Iterable[Post],
    content_dir: Path,
    *,
    assets_base_url: str | None = None,
    site_url: str | None = None,
    now: dt.datetime | None = None,
    others: Iterable[Unique] = (),
) -> list[Problem]:
    """Every problem of `posts`, including a title, slug or canonical URL that another post
    (of `posts` or of `others`, the rest of the content folder) uses too."""
    posts = list(posts)
    problems: list[Problem] = []
    for post in posts:
        problems.extend(validate_post(post, content_dir, assets_base_url=assets_base_url, now=now))
    everyone: list[Unique] = [*posts, *others]
    problems.extend(_duplicates(posts, everyone, "title", lambda p: p.title or None))
    problems.extend(_duplicates(posts, everyone, "slug", lambda p: p.slug))
    problems.extend(
        _duplicates(posts, everyone, "canonical_url", lambda p: canonical_url(p, site_url))
    )
    return sorted(problems)


def canonical_url(post: Unique, site_url: str | None) -> str | None:
    """The post's canonical URL: its own, or its page on the site when `[site] url` is set."""
    if post.canonical_url:
        return post.canonical_url.strip()
    if site_url:
        return f"{site_url.rstrip('/')}/{post.slug}/"
    return None


def _duplicates(
    posts: list[Post], everyone: list[Unique], key: str, value_of: Callable[[Unique], str | None]
) -> list[Problem]:
    """A problem for each of `posts` whose value another of `everyone` has too."""
    holders: dict[str, list[Unique]] = defaultdict(list)
    for post in everyone:
        value = value_of(post)
        if value:
            holders[value.lower() if key == "title" else value].append(post)
    what = {
        "title": "dev.to allows it; toolkit tells their articles apart by toolkit.lock",
        "slug": "each post needs its own page",
        "canonical_url": "the API requires canonical URLs to be unique",
    }[key]
    severity = Severity.WARNING if key == "title" else Severity.ERROR
    problems = []
    for post in posts:
        value = value_of(post)
        group = holders[value.lower() if key == "title" else value] if value else []
        if len(group) > 1:
            others = ", ".join(p.key for p in group if p is not post)
            problems.append(
                Problem(
                    post.key, post.line_of(key), f"{key}: also used by {others} ({what})", severity
                )
            )
    return problems
