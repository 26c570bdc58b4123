"""`new`: a new post, a draft with valid front matter, ready to write."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.config import Config
from toolkit.errors import ContentError, UnsafeNameError

BODY = "Write your post here, in Markdown.\n"
MAX_TRIES = 100  # `-2`, `-3`... after a name that is taken


@dataclass(frozen=True)
class NewPost:
    path: Path  # the file written
    key: str  # its path as toolkit shows it, e.g. content/hello-world.md
    title: str


def post_text(title: str, tags: list[str], date: dt.date) -> str:
    """The file of a new draft: its front matter (quoted where YAML needs it) and a body."""
    from toolkit.content.payload import dump_front_matter

    meta = {"title": title, "published": False, "date": date.isoformat(), "tags": tags}
    return f"---\n{dump_front_matter(meta)}---\n{BODY}"


def new_post(config: Config, title: str, *, tags: Iterable[str] = (),
             today: dt.date | None = None) -> NewPost:
    """Write `content/<slug of the title>.md` (`-2`, `-3`... when that name is taken): a
    draft (`published: false`) dated `today`, with `tags`, that `toolkit check` accepts.
    Raises `ContentError` when the title or the tags break a rule of the API, or another
    post has the title already (titles are unique per account)."""
    from toolkit.content import load_posts
    from toolkit.content.post import parse_post, slugify, split_tags
    from toolkit.content.problems import PostError
    from toolkit.content.rules import validate_post
    from toolkit.fsutil import safe_name

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
    for attempt in range(1, MAX_TRIES + 1):
        path = folder / (f"{stem}.md" if attempt == 1 else f"{stem}-{attempt}.md")
        key = config.relative(path)
        if attempt == 1:
            try:
                post = parse_post(path, key, text)
            except PostError as exc:  # pragma: no cover - the front matter is written here
                raise ContentError(str(exc.problem)) from None
            errors = [p for p in validate_post(post, folder,
                                               assets_base_url=config.site.assets_base_url)
                      if p.is_error]
            if errors:
                raise ContentError("; ".join(p.message for p in errors))
            posts, _ = load_posts(config)
            same = sorted(p.key for p in posts if p.title.strip().lower() == title.lower())
            if same:
                raise ContentError(f"{same[0]} has the title {title!r} already; titles are "
                                   "unique per account")
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with open(path, "x", encoding="utf-8") as handle:  # never over another file
                handle.write(text)
        except FileExistsError:
            continue
        return NewPost(path=path, key=key, title=title)
    raise ContentError(f"{config.relative(folder)}/{stem}.md and {MAX_TRIES - 1} other names "
                       "are taken; choose another title")
