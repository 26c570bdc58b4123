"""The rules a post must follow: every one the API would answer 422 for, and the local ones.

The API's rules (reference/NOTES.md): title required and at most 128 characters; at most 4
tags, each letters and digits only, at most 30 characters; body at most 800 KB;
`canonical_url` unique and http(s); `published` exactly true or false; no future
publication date. Most are problems of `Kind.API`: the site builds such a
post all the same. Two are the site's too: a post dated in the future is not shown before
its date, and a body over 800 KB is not rendered (a bound on what one build computes).
Local rules: relative images exist on disk (and, in a post `publish` would send,
something hosts them: `hosting.image_host`), slugs are unique,
toolkit's own keys have the right types, and the front matter reads as it was meant
(`misread`: no key made of text, no quote running over keys). Unknown keys are warnings, and so are dev.to's
Liquid tags the site cannot render (`liquid_scan.scan`) and a title another post has too
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
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from toolkit.content import conflicts, images, misread
from toolkit.content.fields import KNOWN_KEYS, LINE_BREAK, split_tags
from toolkit.content.hosting import NOTHING_HOSTS, ImageHost, canonical_url
from toolkit.content.post import Post
from toolkit.content.problems import Kind, Problem, Severity
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content.bodies import SourceBodies

MAX_TITLE = 128
MAX_TAGS = 4
MAX_TAG_LENGTH = 30
MAX_BODY_BYTES = 800 * 1024
FUTURE = "in the future; the API refuses a future publication date"
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
    image_host: ImageHost | None = None,
    now: dt.datetime | None = None,
    bodies: SourceBodies | None = None,
) -> list[Problem]:
    """Problems of one post on its own (the rules across posts are in `validate_posts`).

    `image_host`: who serves the content folder's files to the API's readers; given, a
    relative image of a post `publish` would send is an error when nothing does (None:
    the hosting is not checked, as for the site, which copies the images itself).
    `bodies`: the posts are written for another generator; their translated bodies are
    checked (`source_problems`)."""
    problems: list[Problem] = []
    meta = post.meta

    # A field is named by the key the post wrote it in (`pubDate:` for an Astro post's date).
    def error(key: str, message: str, line: int | None = None) -> None:
        named = post.key_named(key)
        problems.append(Problem(post.key, line or post.line_of(key), f"{named}: {message}"))

    def refused(key: str, message: str) -> None:  # a rule only the publishing API has
        named = post.key_named(key)
        problems.append(
            Problem(post.key, post.line_of(key), f"{named}: {message}", Severity.ERROR, Kind.API)
        )

    def warn(key: str, message: str, line: int | None = None) -> None:
        named = post.key_named(key)
        problems.append(
            Problem(post.key, line or post.line_of(key), f"{named}: {message}", Severity.WARNING)
        )

    title = meta.get("title")
    if title is None or (isinstance(title, str) and not title.strip()):
        error("title", "missing; every post needs a title")
    elif not isinstance(title, str):
        error("title", "must be text (put it in quotes)")
    elif len(title.strip()) > MAX_TITLE:
        refused("title", f"{len(title.strip())} characters; the API accepts at most {MAX_TITLE}")
    elif LINE_BREAK.search(title.strip()):
        refused("title", "holds a line break; the API's front matter reader cannot take it")

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
                refused("tags", f"{len(unique)} tags; the API accepts at most {MAX_TAGS}")
            for tag in unique:
                if not TAG_PATTERN.match(tag):
                    refused(
                        "tags", f"{tag!r} must be letters and digits only (no hyphens or spaces)"
                    )
                elif len(tag) > MAX_TAG_LENGTH:
                    refused("tags", f"{tag!r} is longer than {MAX_TAG_LENGTH} characters")

    for key in ("description", "series"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            error(key, "must be text")

    canonical = meta.get("canonical_url")
    if canonical is not None:
        if not isinstance(canonical, str) or not _http_url(canonical):
            shown = (
                quoted(canonical, SHOWN) if isinstance(canonical, str) else repr(canonical)[:SHOWN]
            )
            refused("canonical_url", f"must be an absolute http(s) URL, not {shown}")

    if "date" in meta and meta["date"] is not None:
        date = post.date
        if date is None:
            error("date", f"not a date: {meta['date']!r} (use YYYY-MM-DD or an ISO 8601 time)")
        elif post.published and date > (now or dt.datetime.now(dt.UTC)):
            # The site's rule too: a post is shown from its date on (the build looks again then).
            error("date", FUTURE)

    slug = meta.get("slug")
    if slug is not None and (not isinstance(slug, str) or not SLUG_PATTERN.match(slug)):
        error("slug", "must be lower-case letters, digits and single hyphens")

    for key in ("organization_id", "id"):
        value = meta.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            refused(
                key, "must be a positive integer" + (" (the article's id)" if key == "id" else "")
            )

    # Front matter YAML reads otherwise than it was meant (a title cut by a stray quote, a
    # key glued to text): an error, in place of the unknown key's warning.
    misreadings = misread.misread(post)
    problems.extend(misreadings)
    misread_lines = {problem.line for problem in misreadings}
    for key in meta:
        if key not in KNOWN_KEYS:
            if misread.text_key(key) and post.line_of(key) in misread_lines:
                continue
            warn(key, "unknown front matter key; the site and the API ignore it")

    size = len(post.source.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        problems.append(
            Problem(
                post.key,
                1,
                f"body: {size // 1024} KB; the API accepts at most 800 KB",
                Severity.ERROR,
                Kind.POST,  # the site renders bodies of at most 800 KB too
            )
        )

    for line in conflicts.conflict_lines(post.body):
        problems.append(
            Problem(
                post.key,
                post.body_line + line - 1,
                "unresolved conflict from `toolkit pull --merge`: keep the lines you want, "
                "then remove the markers",
            )
        )

    if bodies is not None:
        problems.extend(source_problems(post, bodies, image_host is not None))
        return problems
    if "{%" in post.body:  # Liquid tags (none: `liquid_scan.scan` finds nothing)
        from toolkit.content import liquid_scan

        for finding in liquid_scan.scan(post.body):
            problems.append(
                Problem(
                    post.key, post.body_line + finding.line - 1, finding.message, Severity.WARNING
                )
            )

    cover = meta.get("cover_image")
    if cover is not None and not isinstance(cover, str):
        error("cover_image", "must be a URL or a path")
    elif isinstance(cover, str) and cover.strip() and site_cover(cover) is None:
        error("cover_image", f"must be an http(s) URL or a path, not {quoted(cover, SHOWN)}")
    elif isinstance(cover, str) and images.is_relative(cover.strip()):
        problems.extend(
            _check_image(
                post,
                cover.strip(),
                post.line_of("cover_image"),
                content_dir,
                image_host,
                "cover_image",
            )
        )
    checked: dict[str, list[Problem]] = {}  # each source once, however often it is used
    for ref in images.find_images(post.body, post.body_line):
        if images.is_relative(ref.src):
            if ref.src not in checked:
                checked[ref.src] = _check_image(post, ref.src, 0, content_dir, image_host, "image")
            problems.extend(replace(p, line=ref.line) for p in checked[ref.src])
    return problems


def source_problems(post: Post, bodies: SourceBodies, hosted: bool) -> list[Problem]:
    """The body rules of a post written for another generator, on its translated body:
    what the translation left out (a warning each), dev.to's Liquid tags, and its images
    as the generator's site finds them (`bodies`); with `hosted`, an image nothing can
    make absolute is an error (`publish` would send it)."""
    problems: list[Problem] = []
    translation = bodies.translate(post)
    for note in translation.notes:
        problems.append(
            Problem(post.key, post.body_line + note.line - 1, note.message, Severity.WARNING)
        )
    body = translation.body
    lines = translation.line_map() if body != post.body else None

    def line_of(line: int) -> int:
        source = lines[min(line, len(lines)) - 1] if lines else line
        return post.body_line + source - 1

    if "{%" in body:
        from toolkit.content import liquid_scan

        for finding in liquid_scan.scan(body):
            problems.append(
                Problem(post.key, line_of(finding.line), finding.message, Severity.WARNING)
            )
    cover = post.meta.get("cover_image")
    if cover is not None and not isinstance(cover, str):
        line = post.line_of("cover_image")
        named = post.key_named("cover_image")
        problems.append(Problem(post.key, line, f"{named}: must be a URL or a path"))
    elif isinstance(cover, str) and images.is_relative(cover.strip()):
        problems.extend(
            _check_source_image(
                post,
                cover.strip(),
                post.line_of("cover_image"),
                bodies,
                hosted,
                post.key_named("cover_image"),
            )
        )
    checked: dict[str, list[Problem]] = {}
    for ref in images.find_images(body):
        if images.is_relative(ref.src):
            if ref.src not in checked:
                checked[ref.src] = _check_source_image(post, ref.src, 0, bodies, hosted, "image")
            problems.extend(replace(p, line=line_of(ref.line)) for p in checked[ref.src])
    return problems


def _check_source_image(
    post: Post, src: str, line: int, bodies: SourceBodies, hosted: bool, label: str
) -> list[Problem]:
    why = images.unusable(src)
    if why is not None:
        return [
            Problem(post.key, line, f"{label}: {quoted(src, SHOWN)} cannot be a file name: {why}")
        ]
    file = bodies.locate(src, post)
    if not file.is_file():
        if images.resolve(src, post.path, bodies.content_dir).is_file():
            where = (
                "lies outside the content and static folders (not followed)"
                if src.startswith("/")
                else "lies outside the project (not followed)"
            )
            return [Problem(post.key, line, f"{label}: {quoted(src, SHOWN)} {where}")]
        return [Problem(post.key, line, f"{label}: {quoted(src, SHOWN)} not found")]
    if hosted and not post.premium and bodies.image_url(src, post) is None:
        if not bodies.in_folders(file):
            return [
                Problem(
                    post.key,
                    line,
                    f"{label} {quoted(src, SHOWN)} is relative and nothing hosts it: a file "
                    "outside the content and static folders is served only by the pushed "
                    f"commit; publish from CI, or move it into {bodies.static_shown()}",
                    Severity.ERROR,
                    Kind.API,
                )
            ]
        return [
            Problem(
                post.key,
                line,
                f"{label} {quoted(src, SHOWN)} is relative and nothing hosts it: "
                + (
                    "your site serves a bundle's and the static folder's files, not this one; "
                    if bodies.site_url
                    else "set [source] url, or "
                )
                + NOTHING_HOSTS,
                Severity.ERROR,
                Kind.API,
            )
        ]
    return []


def _check_image(
    post: Post, src: str, line: int, content_dir: Path, host: ImageHost | None, label: str
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
    if host is not None and host.base_url is None and not post.premium:
        # `publish` would send it (a draft too), and dev.to could not show the image.
        return [
            Problem(
                post.key,
                line,
                f"{label} {src} is relative and nothing hosts it: {NOTHING_HOSTS}",
                Severity.ERROR,
                Kind.API,
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
    image_host: ImageHost | None = None,
    canonical_home: str | None = None,
    now: dt.datetime | None = None,
    others: Iterable[Unique] = (),
    bodies: SourceBodies | None = None,
) -> list[Problem]:
    """Every problem of `posts`, including a title, slug or canonical URL that another post
    (of `posts` or of `others`, the rest of the content folder) uses too. `canonical_home`:
    the site's address when it is the posts' canonical home (`hosting.canonical_home`)."""
    posts = list(posts)
    problems: list[Problem] = []
    for post in posts:
        problems.extend(
            validate_post(post, content_dir, image_host=image_host, now=now, bodies=bodies)
        )
    everyone: list[Unique] = [*posts, *others]
    problems.extend(_duplicates(posts, everyone, "title", lambda p: p.title or None))
    problems.extend(_duplicates(posts, everyone, "slug", lambda p: p.slug))
    problems.extend(
        _duplicates(posts, everyone, "canonical_url", lambda p: canonical_url(p, canonical_home))
    )
    return sorted(problems)


def site_canonical_url(post: Unique, site_url: str | None) -> str | None:
    """The canonical URL the site's page of a post names: the post's own when it is an
    http(s) URL (another is the API's refusal, said by `check`), else its page on the site
    when `[site] url` is set."""
    own = post.canonical_url.strip() if post.canonical_url else None
    if own and _http_url(own):
        return own
    return f"{site_url.rstrip('/')}/{post.slug}/" if site_url else None


def site_cover(cover: str | None) -> str | None:
    """The cover image the site's page shows (its `<img>`, `og:image`): a path or an
    http(s) URL; another (`javascript:...`) is `check`'s error, and none is shown."""
    cover = cover.strip() if cover else None
    if cover and (images.is_relative(cover) or _http_url(cover)):
        return cover
    return None


def site_tag(tag: str) -> bool:
    """Whether the site lists a post under `tag` (a folder `tags/<tag>/`): a tag the API
    accepts. The others are the API's refusal, said by `check`; the post is built."""
    return bool(TAG_PATTERN.match(tag)) and len(tag) <= MAX_TAG_LENGTH


NAMED_OTHERS = 3  # the posts a duplicate's problem names; the rest are counted


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
        "slug": "each post needs its own page: rename one, or give it a `slug:`",
        "canonical_url": "the API requires canonical URLs to be unique",
    }[key]
    severity = Severity.WARNING if key == "title" else Severity.ERROR
    kind = Kind.API if key == "canonical_url" else Kind.POST  # the site makes both pages
    problems = []
    for post in posts:
        value = value_of(post)
        group = holders[value.lower() if key == "title" else value] if value else []
        if len(group) > 1:
            named = [p.key for p in group if p is not post]
            others = ", ".join(named[:NAMED_OTHERS])
            if len(named) > NAMED_OTHERS:  # a line stays readable whatever their number
                others += f" and {len(named) - NAMED_OTHERS} other post(s)"
            problems.append(
                Problem(
                    post.key,
                    post.line_of(key),
                    f"{post.key_named(key)}: also used by {others} ({what})",
                    severity,
                    kind,
                )
            )
    return problems
