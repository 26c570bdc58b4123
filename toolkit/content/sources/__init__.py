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
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit.content.fields import split_tags
from toolkit.content.post import Reading
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
    """The article slug a `dev_to:` value names: the slug itself, or the last part of an
    article's address (`https://dev.to/user/slug`)."""
    if "://" in ref:
        path = [part for part in urlsplit(ref).path.split("/") if part]
        return path[-1] if len(path) >= 2 else None
    slug = ref.strip("/").rsplit("/", 1)[-1]
    return slug or None


def skip_keys(source: SourceConfig) -> tuple[str, ...]:
    return tables.SKIP_KEYS + ((source.skip_key,) if source.skip_key else ())


def id_keys(source: SourceConfig) -> tuple[str, ...]:
    named = (source.id_key,) if source.id_key else ()
    return named + tuple(key for key in tables.ID_KEYS if key not in named)


def _cover(value: Any, post: Post, page: str | None, source: SourceConfig) -> str | None:
    """The cover as an address: a root-relative one under the site, a bundle's file under
    its page (`page`: the post's address)."""
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
        if page is not None and not page.endswith(".html"):
            return page.rstrip("/") + "/" + cover.removeprefix("./")
    return cover


def _line_of(post: Post, key: str) -> int:
    """The line of a top-level key of `post`'s front matter, found in its text (a key
    written otherwise: `Post.line_of`, which parses the block again)."""
    pattern = re.compile(rf"^{re.escape(key)}[ \t]*[:=]", re.MULTILINE)  # YAML, TOML
    found = pattern.search(post.front_matter)
    if found is None:
        return post.line_of(key)
    return post.front_matter_line + post.front_matter.count("\n", 0, found.start())


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
        problems.append(Problem(post.key, _line_of(post, key), message, severity))

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
        if article is None and ref is None and held is None and not source.adopted:
            return post
        # The old tools' keys are toolkit's to read, never sent (nor unknown to `check`).
        own = {*tables.ID_KEYS, *skip_keys(source)} - {"id"}
        new_meta = {key: value for key, value in meta.items() if key not in own}
        if article is not None:
            new_meta["id"] = article
        opted = _true(meta.get("crosspost"))
        reading = Reading(generator, origins, held, ref, ref_key, opted, False, tuple(problems))
        aliases = {"id": ref_key} if ref_key else {}
        return replace(post, meta=new_meta, reading=reading, aliases=aliases)

    new: dict[str, Any] = {}
    waits = False
    for name in ("title", "description", "series"):
        found, value = _first(meta, tables.keys_for(generator, name))
        if isinstance(value, list) and name == "series":
            value = value[0] if value else None
        if found is not None and isinstance(value, str):
            new[name], origins[name] = value, found
    if "title" not in new and generator == "jekyll":  # Jekyll titles a post by its name
        words = permalink.file_title(post.path, generator).replace("_", "-").split("-")
        new["title"] = " ".join(word[:1].upper() + word[1:] for word in words if word)
        origins["title"] = "the file's name (as Jekyll titles it)"
    # published: as the generator means it
    published = True
    unrendered = False
    origins["published"] = "(sent public unless held)"
    if "published" in meta:
        if generator == "jekyll":
            if meta["published"] is False:
                held = held or "published: false (Jekyll does not render it)"
                unrendered = True
            origins["published"] = "published (Jekyll: render this page)"
        elif isinstance(meta["published"], bool):
            published = meta["published"]
            origins["published"] = "published"
    if generator == "eleventy" and meta.get("permalink") is False:
        held = held or "permalink: false (Eleventy writes no page for it)"
        unrendered = True
    for draft_key in tables.DRAFT_KEYS:
        if _true(meta.get(draft_key)):
            held = held or f"{draft_key}: true (a draft on the writer's site)"
            unrendered = True
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
        waits = held is None and now is not None and when > now
        if waits:
            held = f"dated {when.isoformat()}: waits until then"
    # tags
    tags_key, value = _first(meta, tables.keys_for(generator, "tags"))
    if tags_key is not None:
        tags = normalise(split_tags(value), tag_map)
        new["tags"], origins["tags"] = tags.tags, tags_key
        if tags.changed:
            problem(
                tags_key,
                "tags as dev.to takes them (lowercase letters and digits, at most four): "
                + "; ".join(tags.changed)
                + " ([forem.tags] maps a tag as you want it)",
                Severity.WARNING,
            )
        if tags.unmapped:
            names = ", ".join(quoted(tag, 40) for tag in tags.unmapped)
            problem(
                tags_key,
                f"tags: {names} cannot be made a dev.to tag; map it in toolkit.toml "
                '([forem.tags] "<as written>" = "<tag>") or leave it out',
            )
    page = permalink.page_path(post.path, meta, source, content_dir)
    address = permalink.url_of(page, source)
    # the cover
    cover_key, value = _first(meta, tables.keys_for(generator, "cover_image"))
    if cover_key is not None:
        cover = _cover(value, post, address, source)
        if cover:
            new["cover_image"], origins["cover_image"] = cover, cover_key
    # canonical_url: the post's own, else its page on the writer's site
    own_key, value = _first(meta, tables.keys_for(generator, "canonical_url"))
    if own_key is not None and isinstance(value, str):
        new["canonical_url"], origins["canonical_url"] = value.strip(), own_key
    elif address is not None:
        named = permalink.page_key(meta, generator)
        origins["canonical_url"] = (
            f"{named}, under [source] url" if named is not None else SITE_ORIGIN
        )
        new["canonical_url"] = address
    # the slug: the last part of the page's path
    last = [part for part in urlsplit(page).path.split("/") if part]
    slug = last[-1].removesuffix(".html") if last else permalink.file_title(post.path, generator)
    new["slug"] = slug
    origins["slug"] = permalink.page_key(meta, generator) or (
        "slug"
        if "slug" in meta
        else "the title (the permalink's :slug, as Hugo makes it)"
        if generator == "hugo" and re.search(r":(slug|title)\b", source.permalink or "")
        else "the file's name"
    )
    if article is not None:
        new["id"] = article
    for key in ("premium", "pinned", "organization_id"):
        if key in meta:
            new[key] = meta[key]
    aliases = {name: key for name, key in origins.items() if key in meta}
    if ref_key:
        aliases["id"] = ref_key
    opted = _true(meta.get("crosspost"))
    reading_ = Reading(
        generator, origins, held, ref, ref_key, opted, waits, tuple(problems), unrendered
    )
    return replace(post, meta=new, reading=reading_, aliases=aliases)


def reader(config: Config) -> Callable[[Post], Post]:
    """A function reading each post of the project `config` describes (`read_post`), or
    None when its posts are dev.to's as written and name no other key."""
    source = config.source
    tag_map = dict(config.forem.tags or ())
    now = dt.datetime.now(dt.UTC)
    content_dir = config.site.content_dir

    def read(post: Post) -> Post:
        return read_post(post, source, content_dir, tag_map, now)

    return read


def site_reader(config: Config) -> Callable[[Post], Post]:
    """Each post read as publish reads it (`reader`), for toolkit's own site
    (`[site] enabled = true`): a post its generator writes no page for (`draft: true`,
    Jekyll's `published: false`, Eleventy's `permalink: false`) is a draft there too; one
    only kept off dev.to (a skip key) is shown."""
    read = reader(config)

    def read_for_site(post: Post) -> Post:
        post = read(post)
        if post.reading is not None and post.reading.unrendered and post.published:
            post = replace(post, meta={**post.meta, "published": False})
        return post

    return read_for_site


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def provenance(post: Post) -> list[str]:
    """Where each field of `post` came from, one line each (`check -v`): the field, the
    value sent, and the key it was read from (or what else gave it)."""
    reading = post.reading
    if reading is None:
        return []
    lines = [f"{post.key}: read as {reading.generator}"]
    for name in tables.FIELDS:
        origin = reading.origins.get(name)
        meta_key = "id" if name == "article" else name
        if name == "article" and reading.article_ref and meta_key not in post.meta:
            value: Any = reading.article_ref
        else:
            value = post.meta.get(meta_key)
        if origin is None and value is None:
            continue
        shown = quoted(_shown(value), 80) if value is not None else "(none)"
        lines.append(f"  {name}: {shown} <- {origin or 'the front matter'}")
    if reading.held:
        lines.append(f"  {'not sent yet' if reading.waits else 'never sent'}: {reading.held}")
    return lines
