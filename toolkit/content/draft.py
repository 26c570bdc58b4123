"""A new post (`toolkit new`): a draft with valid front matter, ready to write, under a
file name and a title no other post has."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.config import Config
from toolkit.content.discover import find_posts, reading_key
from toolkit.content.fields import slugify, split_tags
from toolkit.content.payload import dump_front_matter
from toolkit.content.post import parse_post
from toolkit.content.problems import PostError
from toolkit.content.rules import validate_post
from toolkit.content.sources import reader
from toolkit.content.unique_index import known_posts
from toolkit.errors import ContentError, UnsafeNameError
from toolkit.fsutil import safe_name
from toolkit.localfiles import config_folders

BODY = "Write your post here, in Markdown.\n"
MAX_TRIES = 100  # `-2`, `-3`... after a name that is taken


@dataclass(frozen=True)
class NewPost:
    path: Path  # the file written
    key: str  # its path as toolkit shows it, e.g. content/hello-world.md
    title: str


def post_text(title: str, tags: list[str], date: dt.date) -> str:
    """The file of a new draft: its front matter (quoted where YAML needs it) and a body."""
    meta = {"title": title, "published": False, "date": date.isoformat(), "tags": tags}
    return f"---\n{dump_front_matter(meta)}---\n{BODY}"


def write_draft(
    config: Config, title: str, *, tags: Iterable[str] = (), today: dt.date | None = None
) -> NewPost:
    """Write `content/<slug of the title>.md` (`-2`, `-3`... when that name, or the slug
    it gives the post, is taken): a draft (`published: false`) dated `today`, with `tags`,
    that `toolkit check` accepts. Raises `ContentError` when the title or the tags break a
    rule of the API, or another post has the title already (titles are unique per
    account)."""
    title = " ".join(title.split())  # one line
    if not title:
        raise ContentError("the title is empty")
    wanted = [tag for item in tags for tag in split_tags(item)]
    text = post_text(title, wanted, today or dt.date.today())
    folder = config.site.content_dir
    try:
        stem = safe_name(slugify(title))
    except UnsafeNameError:
        stem = "post"
    try:
        post = parse_post(folder / f"{stem}.md", config.relative(folder / f"{stem}.md"), text)
    except PostError as exc:  # pragma: no cover - the front matter is written here
        raise ContentError(str(exc.problem)) from None
    errors = [p for p in validate_post(post, folder) if p.is_error]
    if errors:
        raise ContentError("; ".join(p.message for p in errors))
    # The other posts' titles and slugs (no content folder yet: none).
    found = find_posts(folder, (), config_folders(config)) if folder.is_dir() else []
    others = (
        known_posts(
            config.state_dir,
            [(path, config.relative(path)) for path in found],
            reader(config),
            reading_key(config),
        )
        if found
        else []
    )
    same = sorted(o.key for o in others if o.title.strip().lower() == title.lower())
    if same:
        raise ContentError(
            f"{same[0]} has the title {title!r} already; titles are unique per account"
        )
    slugs = {o.slug for o in others}
    for attempt in range(1, MAX_TRIES + 1):
        name = stem if attempt == 1 else f"{stem}-{attempt}"
        path = folder / f"{name}.md"
        if slugify(name) in slugs:  # the post's slug comes from its file's name: taken
            continue
        key = config.relative(path)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with open(path, "x", encoding="utf-8") as handle:  # never over another file
                handle.write(text)
        except FileExistsError:
            continue
        return NewPost(path=path, key=key, title=title)
    raise ContentError(
        f"{config.relative(folder)}/{stem}.md and {MAX_TRIES - 1} other names "
        "are taken; choose another title"
    )
