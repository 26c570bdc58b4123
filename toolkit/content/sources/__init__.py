"""Posts written for another generator, read as dev.to needs them (`[source]`).

A project's posts may be kept for Hugo, Jekyll, Astro, Eleventy or a Next-style blog
(`[source] generator`). `read_post` gives such a post the front matter dev.to reads,
field by field in the order `tables` writes down (dev.to's own key, then the
generator's, then `toolkit.toml`), and a `Reading`: which key each field came from (for
`check -v`), why the post is never sent when it is not (`draft: true`, a skip key, Jekyll's
`published: false`, a date still to come), the dev.to article its id key names, and what
was changed on the way (tags), said once per post.

`published:` is read as the generator means it: Jekyll's is "render this page" (false:
the site does not show it, so neither does dev.to); the other generators' and dev.to's is
dev.to's own. A project kept in dev.to's own keys (`generator = "devto"`) is read as
written; only its skip keys and `[source] id_key` are looked at.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit.content.post import split_tags
from toolkit.content.problems import Problem, Severity
from toolkit.content.sources import permalink, tables
from toolkit.content.sources.dates import DateUnread, read_date
from toolkit.content.sources.tags import normalise
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config
    from toolkit.config.sections import SourceConfig
    from toolkit.content.post import Post

SITE_ORIGIN = "toolkit.toml ([source] url and permalink)"
DEVTO_HOSTS = ("dev.to", "www.dev.to")


@dataclass(frozen=True)
class Reading:
    """How a post's front matter was read for dev.to."""

    generator: str
    origins: dict[str, str] = field(default_factory=dict)  # field -> the key it came from
    held: str | None = None  # why the post is never sent, when it is not
    article_ref: str | None = None  # a dev.to slug or address naming its article
    ref_key: str | None = None  # the key that holds it
    problems: tuple[Problem, ...] = ()


def _first(meta: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if key in meta and meta[key] is not None and meta[key] != "":
            return key, meta[key]
    return None, None


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def article_of(value: Any) -> tuple[int | None, str | None]:
    """An id key's value as (article id, slug or address): `0`, `"0"`, empty: neither."""
    if isinstance(value, bool) or value is None:
        return None, None
    if isinstance(value, int):
        return (value, None) if value > 0 else (None, None)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            number = int(text)
            return (number, None) if 0 < number < 2**63 else (None, None)
        if not text or len(text) > 300:
            return None, None
        return None, text
    return None, None


def ref_slug(ref: str) -> str | None:
    """The article slug a `dev_to:` value names: the slug itself, or the last part of a
    dev.to address (`https://dev.to/user/slug`); None for another site's address."""
    if "://" in ref:
        parts = urlsplit(ref)
        path = [part for part in parts.path.split("/") if part]
        if (parts.hostname or "").lower() not in DEVTO_HOSTS or len(path) < 2:
            return None
        return path[-1]
    slug = ref.strip("/").rsplit("/", 1)[-1]
    return slug or None


def skip_keys(source: SourceConfig) -> tuple[str, ...]:
    return tables.SKIP_KEYS + ((source.skip_key,) if source.skip_key else ())


def id_keys(source: SourceConfig) -> tuple[str, ...]:
    named = (source.id_key,) if source.id_key else ()
    return named + tuple(key for key in tables.ID_KEYS if key not in named)


def _cover(
    value: Any, post: Post, meta: Mapping[str, Any], source: SourceConfig, content_dir: Path
) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):  # {src: ...} / {path: ...} / {url: ...}
        value = next((value[k] for k in ("src", "path", "url", "image") if k in value), None)
    if not isinstance(value, str) or not value.strip():
        return None
    cover = value.strip()
    for marker in ("{{ site.baseurl }}", "{{site.baseurl}}", "{{ .Site.BaseURL }}"):
        cover = cover.replace(marker, "")
    if cover.startswith(("http://", "https://")):
        return cover
    if not source.url:
        return cover
    if cover.startswith("/"):
        return source.url.rstrip("/") + cover
    if permalink.is_bundle(post.path, source.generator):  # a file of the bundle
        page = permalink.page_url(post.path, meta, source, content_dir)
        if page is not None and not page.endswith(".html"):
            return page.rstrip("/") + "/" + cover.removeprefix("./")
    return cover


def read_post(
    post: Post,
    source: SourceConfig,
    content_dir: Path,
    tag_map: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
) -> Post:
    """`post` with the front matter dev.to reads and its `Reading` (module doc)."""
    meta = post.meta
    generator = source.generator
    problems: list[Problem] = []
    origins: dict[str, str] = {}
    held: str | None = None

    def problem(key: str, message: str, severity: Severity = Severity.ERROR) -> None:
        problems.append(Problem(post.key, post.line_of(key), message, severity))

    for key in skip_keys(source):
        if _true(meta.get(key)):
            held = f"{key}: true keeps it off dev.to"
            break
    ref: str | None = None
    ref_key: str | None = None
    article: int | None = None
    for key in id_keys(source):
        if key in meta:
            number, named = article_of(meta[key])
            if number is not None or named is not None:
                article, ref, ref_key = number, named, key
                origins["article"] = key
                break
    if generator == "devto":
        if article is None and ref is None and held is None:
            return post
        new_meta = dict(meta)
        if article is not None:
            new_meta["id"] = article
        reading = Reading(generator, origins, held, ref, ref_key, tuple(problems))
        aliases = {"id": ref_key} if ref_key else {}
        return replace(post, meta=new_meta, reading=reading, aliases=aliases)

    new: dict[str, Any] = {}
    for name in ("title", "description", "series"):
        key, value = _first(meta, tables.keys_for(generator, name))
        if isinstance(value, list) and name == "series":
            value = value[0] if value else None
        if key is not None and isinstance(value, str):
            new[name], origins[name] = value, key
    # published: as the generator means it
    published = True
    origins["published"] = "(sent public unless held)"
    if "published" in meta:
        if generator == "jekyll":
            if meta["published"] is False:
                held = held or "published: false (Jekyll does not render it)"
            origins["published"] = "published (Jekyll: render this page)"
        elif isinstance(meta["published"], bool):
            published = meta["published"]
            origins["published"] = "published"
    for key in tables.DRAFT_KEYS:
        if _true(meta.get(key)):
            held = held or f"{key}: true (a draft on the writer's site)"
    new["published"] = published
    # date
    when, date_key = permalink.post_date(post.path, meta, source)
    if date_key is not None and when is None:
        try:
            read_date(meta.get(date_key), source.timezone, source.date_format)
        except DateUnread as exc:
            problem(date_key, f"{date_key}: {exc}")
    if when is not None and date_key is not None:
        new["date"], origins["date"] = when, date_key
        if now is not None and when > now:
            held = held or f"dated {when.isoformat()}: waits until then"
    # tags
    key, value = _first(meta, tables.keys_for(generator, "tags"))
    if key is not None:
        written = split_tags(value)
        reading = normalise(written, tag_map)
        new["tags"], origins["tags"] = reading.tags, key
        if reading.changed:
            problem(
                key,
                "tags as dev.to takes them (lowercase letters and digits, at most four): "
                + "; ".join(reading.changed)
                + " ([forem.tags] maps a tag as you want it)",
                Severity.WARNING,
            )
        if reading.unmapped:
            names = ", ".join(quoted(tag, 40) for tag in reading.unmapped)
            problem(
                key,
                f"tags: {names} cannot be made a dev.to tag; map it in toolkit.toml "
                '([forem.tags] "<as written>" = "<tag>") or leave it out',
            )
    # the cover
    key, value = _first(meta, tables.keys_for(generator, "cover_image"))
    if key is not None:
        cover = _cover(value, post, meta, source, content_dir)
        if cover:
            new["cover_image"], origins["cover_image"] = cover, key
    # canonical_url: the post's own, else its page on the writer's site
    key, value = _first(meta, tables.keys_for(generator, "canonical_url"))
    if key is not None and isinstance(value, str):
        new["canonical_url"], origins["canonical_url"] = value.strip(), key
    else:
        page = permalink.page_url(post.path, meta, source, content_dir)
        if page is not None:
            new["canonical_url"], origins["canonical_url"] = page, SITE_ORIGIN
    # the slug: the last part of the page's path
    page = permalink.page_path(post.path, meta, source, content_dir)
    last = [part for part in urlsplit(page).path.split("/") if part]
    slug = last[-1].removesuffix(".html") if last else permalink.file_title(post.path, generator)
    new["slug"] = slug
    origins["slug"] = permalink.page_key(meta, generator) or (
        "slug" if "slug" in meta else "the file's name"
    )
    if article is not None:
        new["id"] = article
    for key in ("premium", "pinned", "organization_id"):
        if key in meta:
            new[key] = meta[key]
    aliases = {name: key for name, key in origins.items() if key in meta}
    if ref_key:
        aliases["id"] = ref_key
    reading_ = Reading(generator, origins, held, ref, ref_key, tuple(problems))
    return replace(post, meta=new, reading=reading_, aliases=aliases)


def reader(config: Config) -> Any:
    """A function reading each post of the project `config` describes (`read_post`), or
    None when its posts are dev.to's as written and name no other key."""
    source = config.source
    tag_map = dict(config.forem.tags or ())
    now = dt.datetime.now(dt.UTC)
    content_dir = config.site.content_dir

    def read(post: Post) -> Post:
        return read_post(post, source, content_dir, tag_map, now)

    return read
